"""helpers.replay (notebook 04, issue 26): a collective recorded through its send hook says, after every
step, which partial sum of which chunk each device holds and how many bytes crossed each link -- for the
lesson's ring and naive allreduce on 1 to 8 devices -- and draws it as a strip and as an animation that
needs neither JavaScript nor the internet, each with its text alternative. The animation moves only
when the reader asks, once, and not at all where the reader's system asks for reduced motion."""
import base64
import io
import re

import pytest
from PIL import Image

from helpers import comm, replay
from helpers.costmodel import naive_bytes_per_device, ring_bytes_per_device
from helpers.split import shard_bounds


def test_labels_and_decoding():
    assert replay.label((1, 1, 0, 1)) == '0+1+3' and replay.label((1, 1, 1, 1)) == '0\u20133'
    assert replay.label((0, 2, 1)) == '1+1+2' and replay.label((0, 0)) == 'nothing' and replay.label(None) == '?'
    xs = replay.encode(3, 5)
    assert replay.holding(xs[0] + xs[2], 3, 5)[4] == (4, (1, 0, 1))        # element 4 holds devices 0 and 2
    assert replay.holding([0.5, -1.0], 3, 5) == [(None, None), (None, None)]


@pytest.mark.parametrize('k', range(1, 9))
@pytest.mark.parametrize('size', ['k', 'uneven'])
def test_the_lessons_ring_in_2k_minus_2_steps_of_k_sends(k, size):
    n = k if size == 'k' else 2 * k + 1
    r = replay.reference('allreduce_ring', k, n)
    assert len(r.steps) == 2 * (k - 1) and all(len(step) == k for step in r.steps)
    assert all(m.dst == (m.src + 1) % k and m.chunk is not None for step in r.steps for m in step)
    assert all(m.op == 'adds' for step in r.steps[:k - 1] for m in step)
    assert all(m.op == 'copies' for step in r.steps[k - 1:] for m in step)
    half = r.states[k - 1]                         # after the reduce-scatter: device i owns chunk i + 1
    assert [[r.complete(x) for x in row].index(True) for row in half] == [comm.owner_chunk(i, k) for i in range(k)] \
        or k == 1
    assert all(r.complete(x) for row in r.final for x in row)
    sent = [sum(b for (src, _), b in r.bytes_per_link().items() if src == i) for i in range(k)]
    assert sent == (ring_bytes_per_device(k, n, 8) if k > 1 else [0])


@pytest.mark.parametrize('k', [2, 3, 5])
def test_the_naive_allreduce_passes_everything_through_device_0(k):
    r = replay.reference('allreduce_naive', k, 2 * k)
    assert len(r.steps) == 2 * (k - 1) and all(len(step) == 1 for step in r.steps)
    assert [m.dst for step in r.steps[:k - 1] for m in step] == [0] * (k - 1)
    assert [m.src for step in r.steps[k - 1:] for m in step] == [0] * (k - 1)
    assert all(r.complete(x) for row in r.final for x in row)
    sent = [sum(b for (src, _), b in r.bytes_per_link().items() if src == i) for i in range(k)]
    assert sent == naive_bytes_per_device(k, 2 * k, 8)


def test_the_halves_and_a_wrong_ring_are_replayed_as_they_ran():
    k = 4
    rs = replay.reference('reduce_scatter', k)
    assert [sum(rs.complete(x) for x in row) for row in rs.final] == [1] * k
    ag = replay.reference('all_gather', k)              # starts where a reduce-scatter ends
    assert [sum(ag.complete(x) for x in row) for row in ag.states[0]] == [1] * k
    assert all(ag.complete(x) for row in ag.final for x in row)
    no_gather = replay.record(lambda arrays, send: comm.reduce_scatter(arrays, send), k, name='ring without all-gather')
    assert no_gather.final == rs.final and len(no_gather.steps) == k - 1

    def crashes(arrays, send):
        send(arrays[0], arrays[1])
        raise IndexError('chunk 9')
    broken = replay.record(crashes, 2)
    assert broken.error == 'IndexError: chunk 9' and len(broken.steps) == 1
    assert 'stopped with IndexError' in broken.describe()


def test_words_strip_and_animation_carry_the_same_story(tmp_path):
    r = replay.reference('allreduce_ring', 4, 10)
    words = r.describe()
    assert words.count('\nStep ') == 6 and 'device 0 sends chunk 0 (0) to device 1, which adds it (24 B)' in words
    assert [b for b, e in shard_bounds(10, 4)] == [0, 3, 6, 8] and 'Bytes per link: 0->1: ' in words
    assert re.search(r'6 steps, \d+ bytes in all; every device ends with the finished sum', r.alt())
    fig = r.strip()
    assert len([ax for ax in fig.axes if ax.has_data() or ax.patches]) == len(r.states) + 1
    fonts = [t.get_fontsize() for ax in fig.axes for t in ax.texts]
    assert min(fonts) >= 9                                   # readable when projected (10 pt, 9 for long labels)
    bundle = r.animation()._repr_mimebundle_()
    page = bundle['text/html']
    assert bundle['text/plain'] == r.alt()
    assert f'alt="{r.alt()}"' in page.replace('&#x27;', "'") and '<details>' in page
    assert 'http' not in page and '<script' not in page      # plays offline, without JavaScript
    still, steps, animated = [Image.open(io.BytesIO(png)) for png in _pngs(page)]
    assert image_frames(animated) == len(r.states) and animated.format == 'PNG'     # an animated PNG,
    assert animated.info.get('loop') == 1                    # played once (APNG num_plays; 0: for ever)
    assert image_frames(still) == image_frames(steps) == 1 and still.size == animated.size
    assert steps.height > len(r.states) * animated.height    # every frame, one under the other
    # WCAG 2.2.2: nothing moves by itself. The page shows the still; the animation is behind a
    # closed <details>, and in a <picture> that shows the frames, still, under reduced motion.
    outside = re.sub(r'<details.*?</details>', '', page, flags=re.S)
    assert [image_frames(Image.open(io.BytesIO(png))) for png in _pngs(outside)] == [1]
    assert re.search(r'<details class="replay-play"><summary>Play the replay[^<]*</summary><picture>'
                     r'<source media="\(prefers-reduced-motion: reduce\)" srcset="data:image/png;base64,', page)


def _pngs(page):
    return [base64.b64decode(d) for d in re.findall(r'data:image/png;base64,([A-Za-z0-9+/=]+)', page)]


def image_frames(image):
    return getattr(image, 'n_frames', 1)


def _shown(page):
    """The images the page shows (displayed, in an open part): how many frames each has."""
    sources = page.evaluate("[...document.querySelectorAll('figure.replay img')]"
                            ".filter(img => img.checkVisibility()).map(img => img.currentSrc)")
    return [image_frames(Image.open(io.BytesIO(_pngs(src)[0]))) for src in sources]


def test_the_animation_plays_in_chromium_offline(tmp_path):
    sync_api = pytest.importorskip('playwright.sync_api')
    import shutil
    chromium = shutil.which('chromium') or shutil.which('chromium-browser')
    if not chromium:
        pytest.skip('no Chromium (make setup installs it as root)')
    page_file = tmp_path / 'replay.html'
    page_file.write_text('<!doctype html><html><body>'
                         + replay.reference('allreduce_ring', 3).animation()._repr_mimebundle_()['text/html']
                         + '</body></html>')
    outside = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=['--no-sandbox'])
        page = browser.new_page()
        page.route(lambda url: not url.startswith(('file:', 'data:')), lambda route: (outside.append(route.request.url),
                                                                                       route.abort()))
        page.goto(page_file.as_uri())
        page.wait_for_function("document.querySelector('figure.replay img').complete")
        width = page.evaluate("document.querySelector('figure.replay img').naturalWidth")
        assert _shown(page) == [1], 'the page opens on something else than the still image'
        page.click('figure.replay details.replay-play > summary')           # the reader asks: it plays
        page.wait_for_function("[...document.querySelectorAll('figure.replay img')].every(img => img.complete)")
        assert _shown(page) == [1, len(replay.reference('allreduce_ring', 3).states)]
        page.click('figure.replay details.replay-play > summary')           # and hides it again
        assert _shown(page) == [1]
        quiet = browser.new_page(reduced_motion='reduce')                   # prefers-reduced-motion
        quiet.goto(page_file.as_uri())
        quiet.click('figure.replay details.replay-play > summary')
        quiet.wait_for_function("[...document.querySelectorAll('figure.replay img')].every(img => img.complete)")
        assert _shown(quiet) == [1, 1], 'under reduced motion, Play still shows an animation'
        browser.close()
    assert width > 100 and not outside
