"""helpers.plot (every notebook): figures are shown with their text alternative and their numbers."""
import html

import pytest

from helpers import plot


class _Shell:
    """Stands in for a Jupyter kernel: records what ``display`` is given."""


class _Shown(list):
    """The bundles `show` displayed; ``metadata``: their output metadata, in the same order."""

    def __init__(self):
        super().__init__()
        self.metadata = []


@pytest.fixture
def shown(monkeypatch):
    out = _Shown()

    def display(obj, raw=False, metadata=None):
        out.append(obj)
        out.metadata.append(metadata)
    monkeypatch.setattr('IPython.get_ipython', lambda: _Shell())
    monkeypatch.setattr('IPython.display.display', display)
    return out


def test_a_plot_carries_its_alt_text_and_a_table_named_by_its_legend(shown):
    plot.plot([1, 2, 4], [[10.0, 20.0, 40.0], [1.5, 2.5, 3.5]], xlabel='devices', ylabel='ms',
              legend=['ring', 'naive'], alt='ring and naive time against devices: the ring is slower')
    (bundle,) = shown
    assert set(bundle) == {'image/png', 'text/html', 'text/plain'}
    assert bundle['text/plain'] == 'ring and naive time against devices: the ring is slower'
    page = bundle['text/html']
    assert page.startswith(f'<img alt="{html.escape(bundle["text/plain"])}" src="data:image/png;base64,')
    assert '<th>devices</th><th>ring</th><th>naive</th>' in page
    assert '<tr><td>4</td><td>40</td><td>3.5</td></tr>' in page


def test_alt_text_must_be_a_sentence(shown):
    plot.plt.plot([1, 2], [3, 4])
    for bad, error in (('', ValueError), ('   ', ValueError), (3, TypeError)):   # helpers.checks' policy
        with pytest.raises(error, match='alt must be a sentence'):
            plot.show(bad)
    plot.plt.close('all')


def test_history_spread_plots_the_mean_of_the_seeds_and_tables_it(shown):
    runs = {'1 device': [{'epoch': [1, 2], 'loss': [1.0, 0.5], 'test_acc': [0.6, 0.8]},
                         {'epoch': [1, 2], 'loss': [1.2, 0.7], 'test_acc': [0.5, 0.7]}],
            '2 devices': [{'epoch': [1, 2], 'loss': [1.1, 0.6], 'test_acc': [0.55, 0.75]}]}
    plot.history_spread(runs, alt='accuracy over two seeds: 1 and 2 devices alike')
    (bundle,) = shown
    assert bundle['text/plain'] == 'accuracy over two seeds: 1 and 2 devices alike'
    page = bundle['text/html']
    assert '<th>epoch</th><th>1 device, mean of 2</th><th>2 devices, mean of 1</th>' in page
    assert '<tr><td>2</td><td>0.75</td><td>0.75</td></tr>' in page       # mean test accuracy at epoch 2


# --- No meaning by colour alone (docs/accessibility.md) ---------------------------------------------
import collections  # noqa: E402
import itertools  # noqa: E402

import numpy as np  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402

# Machado, Oliveira and Fernandes (2009), "A physiologically-based model for simulation of color
# vision deficiency", IEEE TVCG 15(6): the matrices of severity 1.0, applied to linear RGB.
MACHADO_2009 = {
    'protanopia': [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                   [-0.003882, -0.048116, 1.051998]],
    'deuteranopia': [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                     [-0.011820, 0.042940, 0.968881]],
    'tritanopia': [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                   [0.004733, 0.691367, 0.303900]],
}
DISTINCT = 10.0      # CIEDE2000 between any two colours, under every simulated deficiency
Span = collections.namedtuple('Span', 'device name start end')


def _linear(rgb):
    c = np.asarray(rgb, float)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _srgb(lin):
    lin = np.clip(lin, 0, 1)
    return np.where(lin <= 0.0031308, 12.92 * lin, 1.055 * lin ** (1 / 2.4) - 0.055)


def simulate(colour, deficiency):
    """What a person with ``deficiency`` sees of ``colour`` (Machado et al. 2009, severity 1)."""
    return _srgb(np.array(MACHADO_2009[deficiency]) @ _linear(to_rgb(colour)))


def luminance(colour):
    return float(_linear(to_rgb(colour)) @ [0.2126, 0.7152, 0.0722])


def contrast(a, b):
    """WCAG 2.1's contrast ratio of two colours."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _lab(rgb):
    m = np.array([[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750],
                  [0.0193339, 0.1191920, 0.9503041]])
    xyz = m @ _linear(rgb) / [0.95047, 1.0, 1.08883]
    f = np.where(xyz > 216 / 24389, np.cbrt(xyz), (24389 / 27 * xyz + 16) / 116)
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def ciede2000(rgb1, rgb2):
    """CIEDE2000 colour difference (Sharma, Wu and Dalal 2005) of two sRGB colours."""
    (l1, a1, b1), (l2, a2, b2) = _lab(rgb1), _lab(rgb2)
    cbar = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(cbar ** 7 / (cbar ** 7 + 25 ** 7)))
    a1, a2 = (1 + g) * a1, (1 + g) * a2
    c1, c2 = np.hypot(a1, b1), np.hypot(a2, b2)
    h1, h2 = np.degrees(np.arctan2(b1, a1)) % 360, np.degrees(np.arctan2(b2, a2)) % 360
    dh = 0 if c1 * c2 == 0 else (h2 - h1 + 180) % 360 - 180
    d_h = 2 * np.sqrt(c1 * c2) * np.sin(np.radians(dh / 2))
    lbar, cbar = (l1 + l2) / 2, (c1 + c2) / 2
    hbar = h1 + h2 if c1 * c2 == 0 else (h1 + h2) / 2 + (180 if abs(h1 - h2) > 180 else 0)
    t = (1 - 0.17 * np.cos(np.radians(hbar - 30)) + 0.24 * np.cos(np.radians(2 * hbar))
         + 0.32 * np.cos(np.radians(3 * hbar + 6)) - 0.20 * np.cos(np.radians(4 * hbar - 63)))
    sl = 1 + 0.015 * (lbar - 50) ** 2 / np.sqrt(20 + (lbar - 50) ** 2)
    sc, sh = 1 + 0.045 * cbar, 1 + 0.015 * cbar * t
    rt = (-2 * np.sqrt(cbar ** 7 / (cbar ** 7 + 25 ** 7))
          * np.sin(np.radians(60 * np.exp(-(((hbar % 360) - 275) / 25) ** 2))))
    return float(np.sqrt(((l2 - l1) / sl) ** 2 + ((c2 - c1) / sc) ** 2 + (d_h / sh) ** 2
                         + rt * (c2 - c1) / sc * d_h / sh))


def test_ciede2000_matches_sharma_wu_dalal_and_the_simulation_matches_machado():
    # Sharma, Wu and Dalal (2005), table 1, pairs 1 and 17 (given in Lab; here through sRGB
    # round trips is not exact, so their Lab values are fed in directly).
    global _lab
    keep = _lab
    try:
        pairs = {((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485)): 2.0425,
                 ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0)): 27.1492}
        for (p, q), want in pairs.items():
            _lab = lambda rgb: rgb                      # noqa: E731
            assert ciede2000(p, q) == pytest.approx(want, abs=1e-4)
    finally:
        _lab = keep
    # pure red under protanopia is a dark olive (Machado's figure); white stays white
    assert np.allclose(simulate('white', 'protanopia'), 1, atol=0.01)
    assert simulate('red', 'protanopia')[0] < 0.6 and abs(simulate('red', 'protanopia')[2]) < 0.05


def _worst(colours):
    """The closest pair of ``colours`` under normal vision and each simulated deficiency."""
    out = {}
    for kind in ('normal',) + tuple(MACHADO_2009):
        seen = [to_rgb(c) if kind == 'normal' else simulate(c, kind) for c in colours]
        out[kind] = min((ciede2000(seen[i], seen[j]), colours[i], colours[j])
                        for i, j in itertools.combinations(range(len(colours)), 2))
    return out


def test_the_palette_stays_distinct_under_colour_vision_deficiencies():
    worst = _worst(list(plot.PALETTE))
    print('closest pair of helpers.plot.PALETTE (CIEDE2000):',
          ', '.join(f'{k} {d:.1f} ({a}, {b})' for k, (d, a, b) in worst.items()))
    default = _worst(['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728'])
    print("matplotlib's first four colours:", ', '.join(f'{k} {d:.1f}' for k, (d, _, _) in default.items()))
    assert default['protanopia'][0] < DISTINCT            # the check can fail: the old default does
    for kind, (d, a, b) in worst.items():
        assert d >= DISTINCT, f'{a} and {b} look alike under {kind}: CIEDE2000 {d:.1f} < {DISTINCT}'
    phases = sorted(set(plot.PHASE_COLORS.values()))
    for kind, (d, a, b) in _worst(phases).items():
        assert d >= DISTINCT, f'phase colours {a} and {b} look alike under {kind}: {d:.1f}'


def test_every_colour_has_3_to_1_contrast_against_white_and_comes_with_a_style():
    # WCAG 2.1 SC 1.4.11: a line or bar needed to read a figure has 3:1 against what surrounds it.
    for colour in set(plot.PALETTE) | set(plot.PHASE_COLORS.values()):
        assert contrast(colour, 'white') >= 3, f'{colour}: {contrast(colour, "white"):.2f}:1 against white'
    cycle = plot.plt.rcParams['axes.prop_cycle'].by_key()
    assert cycle['color'] == list(plot.PALETTE)
    assert len(set(map(str, cycle['linestyle']))) == len(cycle['color']), 'one line style per colour'
    assert len(set(plot.FMTS)) == len(plot.FMTS)


def _styles(fig):
    """(line style, marker) of every line, and the hatch of every labelled bar, axes by axes."""
    out = []
    for ax in fig.axes:
        # a custom dash pattern reports '--' as its style: compare the pattern itself
        out.append([(str(getattr(ln, '_unscaled_dash_pattern', ln.get_linestyle())), ln.get_marker())
                    for ln in ax.get_lines()])
        out.append([c.patches[0].get_hatch() for c in ax.containers if not c.get_label().startswith('_')])
    return out


def _text_contrast(fig):
    """The lowest contrast of any text of ``fig`` against the figure's background."""
    back = fig.get_facecolor()
    texts = [t for t in fig.findobj(plot.plt.Text) if t.get_text().strip() and t.get_visible()]
    assert texts
    return min(contrast(t.get_color(), back[:3]) for t in texts)


def test_no_figure_of_the_helpers_tells_curves_apart_by_colour_alone(monkeypatch):
    figures = []
    monkeypatch.setattr(plot._core, 'show', lambda alt=None, fig=None: figures.append(fig or plot.plt.gcf()))
    x = list(range(1, 9))
    plot.plot(x, [[i * j for i in x] for j in range(1, 9)], xlabel='k', ylabel='ms', legend=list('abcdefgh'))
    plot.history({f'run {i}': {'epoch': [1, 2, 3], 'loss': [3 - i / 9, 2, 1], 'test_acc': [0.5, 0.6, 0.7 + i / 99]}
                  for i in range(6)})
    spans = [Span(f'cpu({d})', name, t, t + 1) for d in range(2)
             for t, name in enumerate(['fwd', 'bwd', 'allreduce', 'sgd'])]
    phase = {'fwd': 'forward', 'bwd': 'backward', 'allreduce': 'communication', 'sgd': 'update'}.get
    plot.timeline(spans, classify=phase)
    plot.timelines({'a': spans, 'b': spans}, classify=phase)
    plot.timeline(spans, classify=lambda n: 'copy' if n == 'allreduce' else 'addition')
    plot.step_timelines({'sync': {f'w{i}': [0, 1, 2 + i] for i in range(6)}})
    for fig in figures:
        for group in _styles(fig):
            assert len(set(group)) == len(group), f'{fig.axes[0].get_title()!r}: styles {group}'
        assert _text_contrast(fig) >= 4.5
    plot.plt.close('all')


def test_stacked_timelines_name_each_phase_once_in_their_legend(monkeypatch):
    """notebook 10's three panels: the legend listed every phase once per panel (three times)."""
    figures = []
    monkeypatch.setattr(plot._core, 'show', lambda alt=None, fig=None: figures.append(fig))
    spans = [Span(f'cpu({d})', name, t, t + 1) for d in range(2)
             for t, name in enumerate(['bwd', 'allreduce', 'bwd', 'sgd'])]
    phase = {'bwd': 'backward', 'allreduce': 'communication', 'sgd': 'update'}.get
    plot.timelines({'(a)': spans, '(b)': spans[:4], '(c)': spans}, classify=phase, alt='three timelines of two devices')
    (legend,) = figures[0].legends
    assert [t.get_text() for t in legend.get_texts()] == ['backward', 'communication', 'update']
    assert [h.get_hatch() for h in legend.legend_handles] == [plot.PHASE_HATCHES.get(k) for k in
                                                               ('backward', 'communication', 'update')]
    plot.plt.close('all')


def test_show_records_how_large_its_smallest_text_is_in_the_book(shown):
    """`show` stores, with each figure, its PNG's width and smallest font, and how many CSS px that
    font is where the book shows the figure (its 688-px column): tests/test_figure_rules.py checks it
    on every notebook."""
    fig, ax = plot.plt.subplots(figsize=(5, 3))
    ax.plot([1, 2], [3, 4])
    ax.set_xlabel('k')
    plot.show(alt='a line rising from 3 to 4 as k goes from 1 to 2', fig=fig)
    size = shown.metadata[0][plot.SIZE_KEY]
    assert size['smallest_pt'] == 10 and 400 < size['width_px'] <= plot.BOOK_COLUMN_PX     # ticks: 10 pt
    assert size['shown_px'] == pytest.approx(10 * 100 / 72, abs=0.01)                       # not scaled down
    fig, ax = plot.plt.subplots(figsize=(14, 3))                                            # scaled down to 688 px
    ax.plot([1, 2], [3, 4])
    ax.annotate('small', (1.5, 3.5), fontsize=7)
    plot.show(alt='a wide figure with a small annotation, scaled down in the book', fig=fig)
    size = shown.metadata[1][plot.SIZE_KEY]
    assert size['smallest_pt'] == 7 and size['width_px'] > 1000
    assert size['shown_px'] == pytest.approx(7 * 100 / 72 * plot.BOOK_COLUMN_PX / size['width_px'], abs=0.01)
    assert size['shown_px'] < plot.MIN_SHOWN_TEXT_PX


def test_the_helpers_own_figures_meet_the_text_size_rule(shown):
    """Every figure drawn with the helpers' default sizes keeps its smallest text at
    MIN_SHOWN_TEXT_PX or more in the book's column (a timeline's legend sits beside it)."""
    spans = [Span(f'cpu({d})', name, t, t + 1) for d in range(4)
             for t, name in enumerate(['fwd', 'bwd', 'allreduce', 'sgd'])]
    phase = {'fwd': 'forward', 'bwd': 'backward', 'allreduce': 'communication', 'sgd': 'update'}.get
    plot.timeline(spans, classify=phase, alt='one timeline of four devices')
    plot.timelines({'(a) one': spans, '(b) two': spans, '(c) three': spans}, classify=phase,
                   alt='three timelines of four devices')
    from helpers import replay
    replay.reference('allreduce_ring', 4, 10).show()
    sizes = [m[plot.SIZE_KEY] for m in shown.metadata]
    assert all(s['shown_px'] >= plot.MIN_SHOWN_TEXT_PX for s in sizes), sizes


def test_a_timeline_carries_a_table_of_its_phases(shown):
    spans = [Span('cpu(0)', 'fwd', 0.0, 2.0), Span('cpu(0)', 'fwd', 3.0, 4.5), Span('cpu(1)', 'bwd', 1.0, 2.0)]
    plot.timeline(spans, classify={'fwd': 'forward', 'bwd': 'backward'}.get, title='one step',
                  alt='a timeline of two devices: cpu(0) runs forward twice, cpu(1) backward once')
    page = shown[0]['text/html']
    assert '<details><summary>The numbers in this figure</summary>' in page
    assert '<tr><td>cpu(0)</td><td>forward</td><td>2</td><td>3.5</td><td>0</td><td>4.5</td></tr>' in page


def test_a_figure_without_alt_text_says_so(shown):
    plot.plt.plot([1, 2], [3, 4])
    plot.plt.xlabel('step')
    plot.show()
    assert shown[0]['text/plain'].startswith(plot.FALLBACK_ALT)


def test_a_reference_line_is_named_in_the_caption_not_tabled_in_axes_coordinates(shown):
    fig, ax = plot.plt.subplots()
    ax.plot([1, 2, 4], [5.0, 3.0, 2.0], label='measured')
    ax.axvline(2.5, color='gray', ls=':', label="PyTorch DDP's 25 MiB")
    ax.set(xlabel='bucket size', ylabel='ms')
    ax.legend()
    plot.show(alt='time against bucket size: it falls until the bucket holds 4 MiB, then flattens', fig=fig)
    page = shown[0]['text/html']
    assert '<caption>ms; PyTorch DDP&#x27;s 25 MiB: x = 2.5</caption>' in page
    assert '<th>bucket size</th><th>measured</th></tr>' in page
