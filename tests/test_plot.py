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
    for bad, error in (('', ValueError), ('   ', ValueError), (3, TypeError)):   # helpers.checks' policy
        with pytest.raises(error, match='alt must be a sentence'):
            plot.show(bad)
    plot.plt.close('all')
