"""helpers.plot (every notebook): figures are shown with their text alternative and their numbers."""
import html

import pytest

from helpers import plot


class _Shell:
    """Stands in for a Jupyter kernel: records what ``display`` is given."""


@pytest.fixture
def shown(monkeypatch):
    out = []
    monkeypatch.setattr('IPython.get_ipython', lambda: _Shell())
    monkeypatch.setattr('IPython.display.display', lambda obj, raw=False: out.append(obj))
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
    for bad in ('', '   ', 3):
        with pytest.raises(TypeError, match='alt must be a sentence'):
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
