"""The series in a real browser: JupyterLab as `make lab` serves it, a slide deck from `make slides`
and the HTML book from `make book`, opened in headless Chromium (the system's package, driven by
Playwright). Every figure must load, the maths must be typeset, every slide of every deck must fit a
1280 x 720 projector (no code line cut, linear navigation, scrolling where needed), and no request may
leave the machine: each test records every request and fails on any that is not to localhost or a file.

Screenshots go to build/screenshots/ (their paths are printed at the end of the run): look at them,
a test cannot tell a pretty slide from an ugly one. Skipped, saying why, where Chromium is not
installed (`make chromium` installs Debian's package when run as root with apt) or where the slides
and the book cannot fetch their pinned assets (npm missing and never fetched)."""
import base64
import glob
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.parse

import nbformat
import pytest

from conftest import NOTEBOOKS, ROOT
from test_lab import TOKEN, lab_server, start_page

from tools.nb import KERNELSPEC

sync_api = pytest.importorskip('playwright.sync_api', reason='playwright is not installed (make setup)')

SHOTS = os.path.join(ROOT, 'build', 'screenshots')
ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage']
LOCAL_HOSTS = {'127.0.0.1', 'localhost', '::1', '[::1]'}
NUMBERED = sorted(glob.glob(os.path.join(NOTEBOOKS, '[0-9][0-9]-*.ipynb')))
_shots = []


def _chromium():
    for candidate in (os.environ.get('CHROMIUM'), shutil.which('chromium'), shutil.which('chromium-browser'),
                      shutil.which('google-chrome')):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def _figures(path, deck=False):
    """(markdown images, PNG outputs) of a notebook; for a deck, without the cells it skips."""
    nb = nbformat.read(path, as_version=4)
    cells = [c for c in nb.cells if 'nav' not in c.metadata.get('tags', [])]
    if deck:
        cells = [c for c in cells if c.metadata.get('slideshow', {}).get('slide_type') != 'skip']
    md = sum(len(re.findall(r'!\[[^\]]*\]\([^)]+\)', c.source)) for c in cells if c.cell_type == 'markdown')
    png = sum('image/png' in o.get('data', {}) for c in cells if c.cell_type == 'code' for o in c.outputs)
    return md, png


def _shown_figure():
    """``(notebook name, [alt, ...])`` of the first notebook whose figures were shown by
    helpers.plot.show with a table of numbers (image/png + text/html), or None."""
    for path in NUMBERED:
        alts = [''.join(o['data']['text/plain']) for c in nbformat.read(path, as_version=4).cells
                if c.cell_type == 'code' for o in c.outputs
                if {'image/png', 'text/html'} <= set(o.get('data', {}))]
        if any('<details>' in ''.join(o['data']['text/html']) for c in nbformat.read(path, as_version=4).cells
               if c.cell_type == 'code' for o in c.outputs if 'text/html' in o.get('data', {})):
            return os.path.basename(path), alts
    return None


def _has_maths(path):
    nb = nbformat.read(path, as_version=4)
    return any(re.search(r'\$[^$\n]+\$', c.source) for c in nb.cells if c.cell_type == 'markdown')


def showcase():
    """The notebook every test opens: one with diagrams, figures and maths (the most of them)."""
    return max(NUMBERED, key=lambda p: (_figures(p)[0] > 0, _has_maths(p), sum(_figures(p))))


def _local(url):
    parts = urllib.parse.urlsplit(url)
    if parts.scheme in ('file', 'data', 'blob', 'about'):
        return True
    return (parts.scheme in ('http', 'https', 'ws', 'wss')
            and (parts.hostname in LOCAL_HOSTS or _loopback(parts.hostname)))


def _loopback(host):
    """An address of 127.0.0.0/8: this machine's loopback interface (test_lab.lab_server binds one of its own)."""
    import ipaddress
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Traffic:
    """Every request of a browser context; requests off the machine are refused and recorded."""

    def __init__(self, context):
        self.requests, self.external, self.failed, self.bad = [], [], [], []
        context.on('request', lambda r: self.requests.append(r.url))
        context.on('requestfailed', lambda r: self.failed.append((r.url, r.failure)))
        context.on('response', lambda r: r.status >= 400 and self.bad.append((r.status, r.url)))
        context.route(lambda url: not _local(url), self._refuse)

    def _refuse(self, route):
        self.external.append(route.request.url)
        route.abort()

    def check(self):
        assert self.requests, 'no request recorded'
        assert not self.external, f'requests that leave the machine: {self.external}'
        # ERR_ABORTED: cancelled by the browser itself (a page left while it was loading).
        failed = [f for f in self.failed if 'ERR_ABORTED' not in (f[1] or '')]
        assert not failed, f'failed requests (a missing file?): {failed}'


def _shoot(page, name, **kwargs):
    os.makedirs(SHOTS, exist_ok=True)
    path = os.path.join(SHOTS, name)
    page.screenshot(path=path, **kwargs)
    _shots.append(path)
    print(f'screenshot: {path}')


def _images_loaded(page, selector='img', scroll=True):
    """Scroll every image into view (not on slides: they are on hidden slides), wait for it, and
    return ``[(src, naturalWidth)]``."""
    images = page.locator(selector)
    out = []
    for i in range(images.count()):
        img = images.nth(i)
        if scroll:
            img.scroll_into_view_if_needed(timeout=10_000)
        page.wait_for_function('img => img.complete', arg=img.element_handle(), timeout=10_000)
        out.append((img.get_attribute('src')[:80], img.evaluate('img => img.naturalWidth')))
    return out


@pytest.fixture(scope='module', autouse=True)
def _report_screenshots(request):
    yield
    reporter = request.config.pluginmanager.get_plugin('terminalreporter')
    capture = request.config.pluginmanager.get_plugin('capturemanager')
    if _shots and reporter and capture:
        with capture.global_and_fixture_disabled():
            reporter.write_line(f'\nbrowser screenshots ({len(_shots)}) in {SHOTS}/: '
                                + ', '.join(os.path.basename(p) for p in _shots))


@pytest.fixture(scope='module')
def browser():
    exe = _chromium()
    if not exe:
        pytest.skip('no Chromium found: `make chromium` installs the Debian package chromium (as root, '
                    'with apt); elsewhere install Chromium and set CHROMIUM=/path/to/chrome')
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, headless=True, args=ARGS)   # a fresh profile
        yield b
        b.close()


@pytest.fixture
def context(browser):
    ctx = browser.new_context(viewport={'width': 1280, 'height': 800})
    ctx.set_default_timeout(30_000)
    yield ctx
    ctx.close()


def _make(target):
    if not shutil.which('npm') and not os.path.isdir(os.path.join(ROOT, 'build', 'web', 'node_modules')):
        pytest.skip(f'make {target} needs npm once, to fetch its pinned browser assets (tools/web/package.json)')
    start = time.monotonic()
    run = subprocess.run(['make', '--no-print-directory', target], cwd=ROOT, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, f'make {target} failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}'
    print(f'make {target}: {time.monotonic() - start:.1f} s\n{run.stdout[-500:]}')


# --- JupyterLab ---------------------------------------------------------------------------------

def _lab_env(tmp_path, all_cells=True):
    """A new user's JupyterLab (fresh settings and workspaces, autosave off so the test never writes a
    notebook; ``all_cells``: every cell in the DOM, else JupyterLab's default windowing, as a student
    has it), plus a user-level `python3` kernelspec that must NOT be used."""
    settings = tmp_path / 'user-settings'
    plugins = {'docmanager-extension/plugin': {'autosave': False}}
    if all_cells:
        plugins['notebook-extension/tracker'] = {'windowingMode': 'none'}
    for plugin, values in plugins.items():
        path = settings / '@jupyterlab' / f'{plugin}.jupyterlab-settings'
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    decoy = tmp_path / 'data' / 'kernels' / 'python3'
    decoy.mkdir(parents=True)
    (decoy / 'kernel.json').write_text(json.dumps({
        'argv': [sys.executable, '-m', 'ipykernel_launcher', '-f', '{connection_file}'],
        'display_name': 'decoy', 'language': 'python', 'env': {'MXDP_DECOY_KERNEL': 'used'}}))
    return {'JUPYTERLAB_SETTINGS_DIR': str(settings), 'JUPYTERLAB_WORKSPACES_DIR': str(tmp_path / 'workspaces'),
            'JUPYTER_DATA_DIR': str(tmp_path / 'data')}


def test_jupyterlab_shows_figures_runs_a_cell_and_asks_for_nothing(context, tmp_path):
    path = showcase()
    before = open(path, 'rb').read()
    md, png = _figures(path)
    traffic = Traffic(context)
    page = context.new_page()
    with lab_server(tmp_path / 'lab.log', env=_lab_env(tmp_path)) as (base, log):
        # The reader lands on the contents (or the first notebook while there is none).
        page.goto(f'{base}/?token={TOKEN}')
        current = page.locator('.lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel')
        current.wait_for()
        assert current.inner_text() == os.path.basename(start_page())
        page.locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-RenderedMarkdown h1').first.wait_for()
        page.locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Spinner').wait_for(state='hidden')
        _shoot(page, 'lab-landing.png')

        # A notebook with figures: every image is served and decoded.
        page.goto(f'{base}/lab/tree/notebooks/{os.path.basename(path)}')
        panel = '.jp-NotebookPanel:not(.lm-mod-hidden)'
        page.locator(f'{panel} .jp-Cell').first.wait_for()
        try:    # cells and their outputs are attached progressively
            page.wait_for_function('([sel, n]) => document.querySelectorAll(sel).length >= n',
                                   arg=[f'{panel} .jp-Cell img', md + png], timeout=30_000)
        except sync_api.TimeoutError:
            pass    # the assertion below says what is missing
        images = _images_loaded(page, f'{panel} .jp-Cell img')
        assert len(images) >= md + png, f'expected {md} diagrams and {png} figures, found {images}'
        assert all(width > 0 for _, width in images), f'images that did not load: {images}'
        page.locator(f'{panel} .jp-RenderedMarkdown img').first.scroll_into_view_if_needed()
        _shoot(page, 'lab-notebook-figure.png')

        # Run a cell: a new one above the first code cell; it reports which Python the kernel is.
        page.locator(f'{panel} .jp-CodeCell .jp-InputPrompt').first.click()
        page.keyboard.press('Escape')
        page.keyboard.press('a')
        page.keyboard.press('Enter')
        page.keyboard.type("import os, sys; "
                           "print('KERNEL', sys.prefix, os.environ.get('MXDP_DECOY_KERNEL', 'not-used'))")
        page.keyboard.press('Shift+Enter')
        output = page.locator(f'{panel} .jp-OutputArea-output', has_text='KERNEL')
        output.wait_for(timeout=90_000)
        _, prefix, decoy = output.inner_text().split()
        assert os.path.realpath(prefix) == os.path.realpath(sys.prefix), \
            f'the kernel runs {prefix}, not the project environment {sys.prefix}'
        assert decoy == 'not-used', "a user-level kernelspec named python3 replaced the venv's"
        output.evaluate('out => out.closest(".jp-Cell").scrollIntoView({block: "center"})')
        _shoot(page, 'lab-cell-run.png')

        # A figure made by helpers.plot.show: JupyterLab renders its HTML (the <img> with its alt
        # text, then the closed table of its numbers), not the bare PNG (docs/accessibility.md).
        # (In a page of its own: leaving this one, with its new cell unsaved, would ask to stay.)
        shown = _shown_figure()
        if shown:
            name, alts = shown
            other = context.new_page()
            other.goto(f'{base}/lab/tree/notebooks/{name}')
            html_figures = f'{panel} .jp-OutputArea-output[data-mime-type="text/html"] img'
            other.locator(html_figures).first.wait_for()
            rendered = other.locator(html_figures).evaluate_all('imgs => imgs.map(i => i.alt)')
            assert rendered[:len(alts)] == alts, f'{name}: alt texts in JupyterLab {rendered}, stored {alts}'
            assert other.locator(f'{panel} .jp-OutputArea-output details > summary').count() >= 1
            other.locator(html_figures).first.scroll_into_view_if_needed()
            _shoot(other, 'lab-figure-alt.png')
            other.close()

        # No pop-up (news, updates) asked for the internet, at any point.
        assert page.locator('.Toastify__toast').count() == 0, page.locator('.Toastify__toast').all_inner_texts()
        page.close()
        server_log = log.read_text()
    image_requests = [u for u in traffic.requests if '/files/' in u]
    assert image_requests and not [b for b in traffic.bad if '/files/' in b[1]], traffic.bad
    traffic.check()
    assert ' 404 GET /files/' not in server_log
    assert open(path, 'rb').read() == before, 'the test changed the notebook'


# The cells of the notebook on screen, in order: [{text, heading, collapsed, shown, hidden}], where
# heading is the text of an "Under the hood" h3/h4 heading the cell starts with ('' if none), collapsed
# whether JupyterLab shows it collapsed, shown whether the cell is displayed, hidden the text of the
# "n cells hidden" button under it. (textContent: innerText is empty in a cell that JupyterLab's
# default windowing, CSS content-visibility, has not laid out yet.)
LAB_CELLS = """panel => [...document.querySelectorAll(`${panel} .jp-Notebook .jp-Cell`)].map(cell => {
    const h = cell.querySelector('.jp-RenderedMarkdown > h3:first-child, .jp-RenderedMarkdown > h4:first-child');
    const button = cell.querySelector('.jp-showHiddenCellsButton');
    return {text: (cell.querySelector('.jp-RenderedMarkdown') || cell).textContent.trim().slice(0, 60),
            heading: h && h.textContent.startsWith('Under the hood') ? h.textContent.trim() : '',
            collapsed: cell.classList.contains('jp-MarkdownHeadingCollapsed'), shown: cell.checkVisibility(),
            hidden: button ? button.textContent.trim() : ''}; })"""


def _lab_open(page, base, name, wait_for=None):
    """Open ``name`` (a path under the repository) alone in JupyterLab; return the panel's selector
    once every cell of the notebook is on the page, its markdown rendered, and (JupyterLab collapses
    headings after it has rendered them) every heading flagged collapsed has its "cells hidden"
    button, or ``wait_for`` (a function of the panel's selector) holds, or 20 s have passed: the
    caller's assertions say what is missing.

    The first notebook loads JupyterLab; with a server started with ``LAB_EXPOSED`` (which gives the
    page its application object, ``window.jupyterapp``), the next ones close every tab, unsaved (a
    dialog asking to save would stay over everything after it), and open the notebook as the file
    browser does (``docmanager:open``), without loading the whole application again for each: 1 to 2 s
    a notebook where a page load took 5 to 7."""
    if page.evaluate('() => !!window.jupyterapp'):
        panel = '#' + page.evaluate("""async name => {
            for (const w of [...jupyterapp.shell.widgets('main')]) {     // closed unsaved, no dialog
                if (w.context) w.context.model.dirty = false;
                w.dispose();
            }
            return (await jupyterapp.commands.execute('docmanager:open', {path: name, factory: 'Notebook'})).id; }""",
            name)
    else:
        page.goto(f'{base}/lab/tree/{name}?reset&token={TOKEN}')
        panel = '.jp-NotebookPanel:not(.lm-mod-hidden)'
    nb = nbformat.read(os.path.join(ROOT, name), as_version=4)
    page.wait_for_function('([panel, n]) => document.querySelectorAll(`${panel} .jp-Notebook .jp-Cell`).length === n '
                           '&& !document.querySelector(`${panel} .jp-MarkdownCell:not(.jp-mod-rendered)`)',
                           arg=[panel, len(nb.cells)], timeout=60_000)
    flagged = sum(bool(c.metadata.get('jp-MarkdownHeadingCollapsed')) for c in nb.cells)
    try:
        page.wait_for_function(wait_for(panel) if wait_for else
                               '([panel, n]) => document.querySelectorAll(`${panel} .jp-showHiddenCellsButton`)'
                               '.length >= n', arg=[panel, flagged], timeout=20_000)
    except sync_api.TimeoutError:
        pass
    return panel


# JupyterLab's application object on the page (window.jupyterapp), for _lab_open.
LAB_EXPOSED = '--LabApp.expose_app_in_browser=True'


def _probe_notebook():
    """Which metadata JupyterLab reads when it opens a notebook: four ways to mark a heading collapsed,
    and the one the asides used to have (the flag, with the text in the heading's own cell)."""
    def md(text, **metadata):
        cell = nbformat.v4.new_markdown_cell(text)
        cell.metadata.update(metadata)
        return cell
    cells = [md('# Probe')]
    for name, metadata in [('flag', {'jp-MarkdownHeadingCollapsed': True}), ('classic', {'heading_collapsed': True}),
                           ('hidden', {'jupyter': {'source_hidden': True}}), ('collapsed', {'collapsed': True})]:
        cells += [md(f'### Heading {name}', **metadata), md(f'Text {name}.'), md(f'## After {name}')]
    cells += [md('### Heading shared\n\nText shared.', **{'jp-MarkdownHeadingCollapsed': True}), md('## After shared')]
    return nbformat.v4.new_notebook(cells=cells, metadata={'kernelspec': dict(KERNELSPEC)})


def test_jupyterlab_opens_every_aside_closed_under_its_heading(context, tmp_path):
    """README: the *Under the hood* asides are "collapsed: click their heading to open them". In the
    JupyterLab of `make lab`, with its default windowing, every aside of every notebook and worked
    solution opens closed: its heading shown, its text not, until the heading's toggle is clicked
    (once); a second click closes it again. A probe notebook shows why the asides have the form they
    have (tools/nb.py): JupyterLab 4 reads `jp-MarkdownHeadingCollapsed` (not the classic notebook's
    `heading_collapsed`, nor `collapsed` or `jupyter.source_hidden`) and hides the cells after the
    heading, never the text in the heading's own cell."""
    probe = os.path.join(ROOT, 'build', 'lab-probe', 'asides-probe.ipynb')
    os.makedirs(os.path.dirname(probe), exist_ok=True)
    nbformat.write(_probe_notebook(), probe)
    paths = [p for p in NUMBERED + sorted(glob.glob(os.path.join(NOTEBOOKS, 'solutions', '*.ipynb')))
             if any('aside' in c.metadata.get('tags', []) for c in nbformat.read(p, as_version=4).cells)]
    befores = {p: open(p, 'rb').read() for p in paths}
    traffic = Traffic(context)
    page = context.new_page()
    with lab_server(tmp_path / 'lab.log', env=_lab_env(tmp_path, all_cells=False), args=LAB_EXPOSED) as (base, log):
        cells = lambda panel: f'[...document.querySelectorAll(`{panel} .jp-Cell`)]'
        panel = _lab_open(page, base, os.path.relpath(probe, ROOT), wait_for=lambda panel: (   # the flag's text hidden
            f'() => {cells(panel)}.some(c => c.textContent.trim() === "Heading flag")'
            f' && !{cells(panel)}.some(c => c.textContent.trim() === "Text flag." && c.checkVisibility())'))
        sources = [c.source for c in nbformat.read(probe, as_version=4).cells]
        shown = dict(zip(sources, [c['shown'] for c in page.evaluate(LAB_CELLS, panel)]))
        assert not shown['Text flag.'], 'jp-MarkdownHeadingCollapsed did not hide the cell after its heading'
        assert shown['### Heading flag'] and shown['## After flag']
        assert all(shown[f'Text {name}.'] for name in ('classic', 'hidden', 'collapsed')), shown
        assert shown['### Heading shared\n\nText shared.'], 'the text in a collapsed heading\'s own cell is hidden?'

        problems, asides = [], 0
        for path in paths:
            nb = nbformat.read(path, as_version=4)
            heads = [i for i, c in enumerate(nb.cells) if 'aside' in c.metadata.get('tags', [])
                     and re.match(r'#{3,4} Under the hood', c.source)]
            panel = _lab_open(page, base, os.path.relpath(path, ROOT))
            cells = page.evaluate(LAB_CELLS, panel)
            for i in heads:
                asides += 1
                head, text = cells[i], cells[i + 1]
                if not (head['heading'] and head['collapsed'] and head['shown'] and head['hidden']
                        and not text['shown']):
                    problems.append(f'{os.path.basename(path)}, cell {i} ({head["text"][:40]!r}): heading '
                                    f'{"shown" if head["shown"] else "not shown"}, '
                                    f'{"collapsed" if head["collapsed"] else "not collapsed"}; '
                                    f'its text {"shown" if text["shown"] else "hidden"}')
            if os.path.basename(path).startswith('10-'):     # the example: open it, close it
                cell = page.locator(f'{panel} .jp-Notebook .jp-Cell').nth(heads[0])
                first = page.locator(f'{panel} .jp-Notebook .jp-Cell').nth(heads[0] + 1).locator(
                    '.jp-RenderedMarkdown > :first-child')
                for _ in range(10):      # cells above lay themselves out as they come into view
                    cell.evaluate('c => c.scrollIntoView({block: "start"})')
                    page.wait_for_timeout(400)
                    if cell.evaluate('c => Math.abs(c.getBoundingClientRect().top'
                                     ' - c.closest(".jp-WindowedPanel-outer").getBoundingClientRect().top) < 40'):
                        break
                assert not first.is_visible(), 'the first paragraph of the aside shows before it is opened'
                _shoot(page, 'lab-aside-closed.png')
                cell.locator('h3, h4').first.hover()                  # the toggle shows by the heading
                cell.locator('.jp-collapseHeadingButton').click()
                first.wait_for(state='visible', timeout=5_000)
                assert first.evaluate('p => p.checkVisibility() && p.getBoundingClientRect().top < innerHeight')
                _shoot(page, 'lab-aside-open.png')
                cell.locator('h3, h4').first.hover()
                cell.locator('.jp-collapseHeadingButton').click()
                first.wait_for(state='hidden', timeout=5_000)
                cell.locator('.jp-showHiddenCellsButton').click()     # "n cells hidden" opens it too
                first.wait_for(state='visible', timeout=5_000)
        page.close()
    traffic.check()
    assert asides >= len(paths), f'{asides} asides in {len(paths)} notebooks'
    assert not problems, f'asides not closed in JupyterLab ({len(problems)} of {asides}):\n' + '\n'.join(problems)
    assert all(open(p, 'rb').read() == before for p, before in befores.items()), 'the test changed a notebook'


def test_jupyterlab_shows_the_replay_still_until_the_reader_plays_it(context, tmp_path):
    """WCAG 2.2.2 (pause, stop, hide) where the reader meets notebook 04's replay: in JupyterLab (its
    HTML sanitizer keeps <details>, and removes <picture>) a fresh `Replay.animation()` shows one
    still image; "Play the replay" shows the animated PNG, which plays once; closed, it is gone.
    (tests/test_replay.py checks the same page in plain Chromium, with reduced motion too.)"""
    from PIL import Image
    from helpers import replay
    page_html = replay.reference('allreduce_ring', 4, 10).animation()._repr_mimebundle_()
    cell = nbformat.v4.new_code_cell("display(ring.animation())")
    cell.outputs = [nbformat.v4.new_output('display_data', data=page_html)]
    probe = os.path.join(ROOT, 'build', 'lab-probe', 'replay-probe.ipynb')
    os.makedirs(os.path.dirname(probe), exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell('# Replay'), cell],
                                            metadata={'kernelspec': dict(KERNELSPEC)}), probe)
    traffic = Traffic(context)
    page = context.new_page()

    def shown():
        sources = page.evaluate("[...document.querySelectorAll('.jp-OutputArea-output figure.replay img')]"
                                ".filter(img => img.checkVisibility()).map(img => img.currentSrc || img.src)")
        frames = [Image.open(io.BytesIO(base64.b64decode(src.split(',', 1)[1]))) for src in sources]
        return [getattr(f, 'n_frames', 1) for f in frames]
    with lab_server(tmp_path / 'lab.log', env=_lab_env(tmp_path, all_cells=False)) as (base, log):
        panel = _lab_open(page, base, os.path.relpath(probe, ROOT))
        page.locator(f'{panel} figure.replay img').first.wait_for()
        assert shown() == [1], f'JupyterLab shows {shown()} (frames of each image shown), not one still image'
        page.locator(f'{panel} figure.replay details.replay-play > summary').click()
        page.wait_for_function("[...document.querySelectorAll('figure.replay img')].every(i => i.complete)")
        played = shown()
        assert played[0] == 1 and len(played) == 2 and played[1] > 1, f'Play showed {played}'
        page.locator(f'{panel} figure.replay details.replay-play > summary').click()
        assert shown() == [1]
        page.close()
    traffic.check()


# --- slides -------------------------------------------------------------------------------------

PRESENT = """() => { const h = [...document.querySelectorAll('.slides > section')];
    const top = document.querySelector('.slides > section.present');
    const subs = [...top.querySelectorAll(':scope > section')];
    return [h.indexOf(top), Math.max(0, subs.findIndex(s => s.classList.contains('present')))]; }"""


def _present(page):
    """``[h, v]``: the indices of the slide on screen."""
    return page.evaluate(PRESENT)


def _goto_slide_of(page, selector):
    """Show the slide holding the first element that matches ``selector``; return False if none."""
    where = page.evaluate("""sel => { const el = document.querySelector(sel); if (!el) return null;
        const secs = []; for (let s = el.closest('section'); s; s = s.parentElement.closest('section')) secs.unshift(s);
        const h = [...document.querySelectorAll('.slides > section')].indexOf(secs[0]);
        const v = secs.length > 1 ? [...secs[0].querySelectorAll(':scope > section')].indexOf(secs[1]) : 0;
        return [h, v]; }""", selector)
    if where is None:
        return False
    page.evaluate('([h, v]) => { location.hash = `#/${h}/${v}`; }', where)
    page.wait_for_function(f'where => JSON.stringify(({PRESENT})()) === JSON.stringify(where)', arg=where)
    page.wait_for_timeout(800)     # the slide transition
    return True


@pytest.fixture(scope='module')
def slides_built():
    _make('slides')
    return os.path.join(ROOT, 'build', 'slides')


def _deck(path):
    return os.path.join(ROOT, 'build', 'slides', 'notebooks', os.path.basename(path)[:-len('.ipynb')] + '.slides.html')


def _open_deck(page, path, where=''):
    """Open the deck of notebook ``path`` and wait until its maths is typeset and its images loaded."""
    page.goto('file://' + _deck(path) + where)
    page.locator('.reveal.ready.typeset').wait_for()
    page.wait_for_function('[...document.images].every(img => img.complete)')


def test_slides_open_from_disk_offline_with_figures_and_maths(context, slides_built):
    path = showcase()
    stem = os.path.basename(path)[:-len('.ipynb')]
    md, png = _figures(path, deck=True)
    traffic = Traffic(context)
    page = context.new_page()

    index = os.path.join(ROOT, 'build', 'slides', 'index.html')
    page.goto('file://' + index)
    links = page.locator('ol.decks a')
    assert links.count() == len(NUMBERED)
    _shoot(page, 'slides-index.png')
    page.locator(f'ol.decks a[href="notebooks/{stem}.slides.html"]').click()
    page.locator('.reveal.ready').wait_for()
    assert page.url.startswith('file://') and page.url.split('#')[0].endswith(f'{stem}.slides.html')
    if _has_maths(path):
        page.wait_for_function('window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0 '
                               '&& document.querySelectorAll(".MathJax_CHTML").length > 0')
    _shoot(page, 'slides-title.png')

    start = _present(page)
    page.keyboard.press('ArrowRight')
    page.wait_for_function('start => location.hash !== "" && location.hash !== "#/"', arg=start)
    assert _present(page) != start, 'the right arrow did not move to the next slide'

    images = _images_loaded(page, '.reveal img', scroll=False)
    assert len(images) >= md + png, f'expected {md} diagrams and {png} figures, found {images}'
    assert all(width > 0 for _, width in images), f'images that did not load: {images}'
    assert _goto_slide_of(page, '.jp-RenderedMarkdown img')
    _shoot(page, 'slides-diagram.png')
    if _has_maths(path):
        assert _goto_slide_of(page, '.MathJax_Display') or _goto_slide_of(page, '.MathJax_CHTML')
        _shoot(page, 'slides-maths.png')
    traffic.check()


def test_right_arrow_space_and_pagedown_walk_every_slide(context, slides_built):
    """Navigation is linear: the keys a lecturer (or a clicker) uses for "next" all go down into the
    sub-slides of a slide, where reveal.js's default moves right and skips them."""
    page = context.new_page()
    _open_deck(page, showcase())
    page.evaluate("() => Reveal.configure({transition: 'none'})")
    # a slide with sub-slides, and no fragment on its first one (a key press would show that first)
    h = page.evaluate("""() => Reveal.getHorizontalSlides().findIndex(s => {
        const subs = s.querySelectorAll(':scope > section');
        return subs.length > 1 && !subs[0].querySelector('.fragment'); })""")
    assert h >= 0, 'the showcase deck has no sub-slides'
    for key in ('ArrowRight', 'Space', 'PageDown'):
        page.evaluate('h => Reveal.slide(h, 0)', h)
        page.keyboard.press(key)
        page.wait_for_function('h => Reveal.getIndices().h === h && Reveal.getIndices().v === 1', arg=h,
                               timeout=5_000)
    page.keyboard.press('ArrowLeft')
    page.wait_for_function('h => Reveal.getIndices().h === h && Reveal.getIndices().v === 0', arg=h, timeout=5_000)


# [[h, v], ...] of every slide of the deck, in order
SLIDE_ORDER = "() => Reveal.getSlides().map(s => { const i = Reveal.getIndices(s); return [i.h, i.v || 0]; })"


def test_home_end_and_next_keys_walk_every_slide_in_order(context, slides_built):
    """Home goes to the first slide and End to the last, and from Home the "next" keys visit every
    slide in order, none skipped: reveal.js resumed a stack of sub-slides where it was last left,
    so Home landed on the title's second sub-slide and the next Space skipped slides. The slide
    number's link is named for what it is, not only "29 / 30"."""
    page = context.new_page()
    path = next((p for p in NUMBERED if os.path.basename(p).startswith('04-')), showcase())
    _open_deck(page, path)
    page.evaluate("() => Reveal.configure({transition: 'none'})")
    order = page.evaluate(SLIDE_ORDER)
    where = lambda: [page.evaluate('() => Reveal.getIndices()')[k] or 0 for k in 'hv']    # noqa: E731
    page.locator('.reveal').click(position={'x': 5, 'y': 5})    # keys go to the deck (not a link)
    for _ in range(min(6, len(order) - 1)):                      # into the deck, leaving stacks midway
        page.keyboard.press('Space')
    page.keyboard.press('Home')
    assert where() == order[0], f'Home went to {where()}, not the first slide {order[0]}'
    visited = [where()]
    for key in ['Space', 'ArrowRight', 'PageDown', 'ArrowDown'] * len(order):
        if len(visited) == len(order):
            break
        page.keyboard.press(key)
        if where() != visited[-1]:             # (a press may show a fragment instead)
            visited.append(where())
    assert visited == order, f'the next keys from Home visited {visited}, the deck is {order}'
    page.keyboard.press('Home')
    page.keyboard.press('End')
    assert where() == order[-1], f'End went to {where()}, not the last slide {order[-1]}'
    page.keyboard.press('ArrowLeft')
    assert where() == order[-2]
    # the slide number is a link to the slide on screen: named as such, keeping its visible text
    number = page.locator('.reveal .slide-number a')
    shown = ' '.join(number.inner_text().split())
    assert shown == f'{len(order) - 1} / {len(order)}' and number.get_attribute('aria-label') == \
        f'Slide {shown}: a link to this slide', number.get_attribute('aria-label')


FIT = r"""() => {
    const H = Reveal.getConfig().height, out = {stuck: [], cut: [], wrapped: [], midword: [], cramped: [], small: []};
    const wordBreaks = pre => {       // line breaks between two letters or digits
        let n = 0, top = null, prev = '\n';
        const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT), range = document.createRange();
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            for (let i = 0; i < node.data.length; i++) {
                const ch = node.data[i];
                if (ch !== '\n') {
                    range.setStart(node, i); range.setEnd(node, i + 1);
                    const rect = range.getClientRects()[0];
                    if (rect) {
                        if (top !== null && rect.top > top + 2 && /\w/.test(prev) && /\w/.test(ch)) n++;
                        top = rect.top;
                    }
                }
                prev = ch;
            }
        }
        return n;
    };
    const check = label => {
        const slide = Reveal.getCurrentSlide(), full = slide.scrollHeight >= H - 2;
        if (slide.scrollHeight > H + 1 && getComputedStyle(slide).overflowY !== 'auto') out.stuck.push(label);
        slide.querySelectorAll('pre').forEach(pre => {
            const text = pre.textContent.replace(/\n$/, ''), first = [label, text.split('\n')[0].slice(0, 60)];
            const style = getComputedStyle(pre);
            if (pre.scrollWidth > pre.clientWidth + 1) out.cut.push(first);
            const lines = Math.round((pre.scrollHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom))
                                     / parseFloat(style.lineHeight));
            if (lines > text.split('\n').length) {
                if (pre.closest('.jp-InputArea-editor')) out.wrapped.push(first);
                else if (wordBreaks(pre)) out.midword.push(first);
            }
            const scrolls = pre.scrollHeight > pre.clientHeight + 2;
            if (pre.closest('.jp-OutputArea-output') && scrolls && !full) out.cramped.push(first);
        });
        slide.querySelectorAll('.jp-OutputArea-output').forEach(box => {   // clipped by its area
            if (box.getBoundingClientRect().right > box.parentElement.getBoundingClientRect().right + 1)
                out.cut.push([label, 'an output box wider than its output area']);
        });
        slide.querySelectorAll('.jp-RenderedMarkdown img[src$=".svg"]').forEach(img => {
            const narrow = img.offsetWidth < img.closest('p, li, figure, div').clientWidth - 2;
            if (narrow && !full) out.small.push([label, img.getAttribute('src')]);
        });
    };
    check('#/0/0 as the deck opens');
    for (const slide of Reveal.getSlides()) {
        const {h, v} = Reveal.getIndices(slide);
        Reveal.slide(h, v);
        check(`#/${h}/${v}`);
    }
    const count = selector => document.querySelectorAll(selector).length;
    return Object.assign(out, {slides: Reveal.getTotalSlides(), notes: count('aside.notes'),
        notesMaths: count('aside.notes math'),
        notesMathJax: count('aside.notes .MathJax_CHTML, aside.notes script[type^="math/tex"]')});
}"""


def test_every_slide_of_every_deck_fits_a_projector(browser, slides_built):
    """Every slide of every deck at 1280 x 720, as a projector shows it: no code line is cut or
    wrapped, no output breaks a word, an output scrolls in its box and a diagram stays narrower than
    the slide only when the slide is full, a slide taller than the screen scrolls (the first one too,
    before any key press), and the speaker notes carry their maths as MathML (typeset by the notes
    window's browser) rather than MathJax's HTML (shown twice there)."""
    context = browser.new_context(viewport={'width': 1280, 'height': 720})
    traffic = Traffic(context)
    page = context.new_page()
    problems, total = {}, 0
    for path in NUMBERED:
        _open_deck(page, path)
        result = page.evaluate(FIT)
        total += result.pop('slides')
        notes, maths, mathjax = result.pop('notes'), result.pop('notesMaths'), result.pop('notesMathJax')
        nb = nbformat.read(path, as_version=4)
        if any('notes' in c.metadata.get('tags', []) and re.search(r'\$[^$\n]+\$', c.source) for c in nb.cells):
            result['notes without MathML'] = [] if maths else [f'{notes} notes, no <math>']
        result['MathJax output in notes'] = [mathjax] if mathjax else []
        for kind, where in result.items():
            if where:
                problems.setdefault(os.path.basename(path)[:2], {})[kind] = where
    print(f'{total} slides checked at 1280 x 720')
    _open_deck(page, showcase())
    page.evaluate("""() => {     // the slide with the longest code line
        const pres = [...document.querySelectorAll('.jp-InputArea-editor pre')];
        const width = pre => Math.max(...pre.textContent.split('\\n').map(line => line.length));
        const widest = pres.reduce((a, b) => width(b) > width(a) ? b : a);
        const {h, v} = Reveal.getIndices(widest.closest('section'));
        Reveal.configure({transition: 'none'});
        Reveal.slide(h, v); }""")
    page.wait_for_timeout(300)
    _shoot(page, 'slides-projector.png')
    context.close()
    traffic.check()
    assert not problems, json.dumps(problems, indent=1, ensure_ascii=False)


# --- the book -----------------------------------------------------------------------------------

def test_book_has_contents_figures_and_maths_offline(context):
    _make('book')
    html = os.path.join(ROOT, 'build', 'book', '_build', 'html')
    path = showcase()
    md, png = _figures(path)
    traffic = Traffic(context)
    page = context.new_page()

    page.goto('file://' + os.path.join(html, 'index.html'))        # redirects to the contents
    page.wait_for_url('**/notebooks/contents.html')
    sidebar = page.locator('nav.bd-docs-nav a.reference')
    hrefs = [sidebar.nth(i).get_attribute('href') for i in range(sidebar.count())]
    for nb in NUMBERED + sorted(glob.glob(os.path.join(NOTEBOOKS, 'solutions', '*.ipynb'))):
        name = os.path.basename(nb)[:-len('.ipynb')] + '.html'
        assert any(h.split('#')[0].endswith(name) for h in hrefs), f'{name} is not in the sidebar: {hrefs}'
    _shoot(page, 'book-contents.png')

    page.goto('file://' + os.path.join(html, 'notebooks', os.path.basename(path)[:-len('.ipynb')] + '.html'))
    if _has_maths(path):
        page.locator('mjx-container').first.wait_for(state='attached')   # in a closed aside: not visible
    images = _images_loaded(page, 'article img')
    assert len(images) >= md + png, f'expected {md} diagrams and {png} figures, found {images}'
    assert all(width > 0 for _, width in images), f'images that did not load: {images}'
    article = page.locator('article').inner_text()
    for cell in nbformat.read(path, as_version=4).cells:        # speaker notes are for the decks only
        if 'notes' in cell.metadata.get('tags', []):
            phrase = max(re.findall(r'[A-Za-z][A-Za-z ,]{20,}', cell.source), key=len)
            assert phrase not in article, f'speaker notes in the book: {phrase!r}'
    page.locator('article img').first.scroll_into_view_if_needed()
    _shoot(page, 'book-notebook-figure.png')
    if _has_maths(path):
        page.locator('mjx-container[display="true"], mjx-container').first.scroll_into_view_if_needed()
        _shoot(page, 'book-notebook-maths.png')
    traffic.check()
