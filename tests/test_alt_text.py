"""Every figure of every committed notebook and worked solution has a real text alternative: each
plot (an image output) an alt text in its ``text/html`` ``<img>`` and the same in ``text/plain``,
each diagram (``img/*.svg`` in markdown) an alt text -- there, not a file name or a hash, not the
stand-in ``helpers.plot.show`` writes when no ``alt=`` was given (tools/alt_text.py says what counts;
docs/accessibility.md says why)."""
import os

import pytest

from helpers import plot
from tools import alt_text
from tools import nb as nbtools

NOTEBOOKS = alt_text.every_notebook()


def test_the_tools_know_the_stand_in_of_helpers_plot():
    assert alt_text.FALLBACK_ALT == plot.FALLBACK_ALT


@pytest.mark.parametrize('bad', [None, '', '../_images/8226f0e3a9b1c4d5e60.png', 'dp-ring-steps.svg',
                                 '<Figure size 600x380 with 1 Axes>', 'a plot', 'copy time',
                                 plot.FALLBACK_ALT + 'a plot: ms against size',
                                 'fb740c501235e3ce1c250201020351a73274ac990d38658c703276470eed5152'])
def test_what_is_not_a_text_alternative(bad):
    assert alt_text.problem(bad)


def test_a_sentence_that_says_what_is_drawn_and_the_finding_is_one():
    assert not alt_text.problem('Step time against gradient size: the ring is slower than the KVStore '
                                'below 1 MiB and within 1.3x above')


@pytest.mark.parametrize('path', NOTEBOOKS, ids=[os.path.basename(p) for p in NOTEBOOKS])
def test_every_figure_has_a_real_text_alternative(path):
    found = alt_text.figures(path)
    bad = [f'cell {cell} ({kind}): {why}; alt {" ".join((alt or "").split())[:80]!r}'
           for cell, kind, alt, why in found if why]
    assert not bad, f'{nbtools.rel(path)}: {len(bad)} of {len(found)} figures without a real text ' \
                    'alternative (helpers.plot: alt=...; markdown: ![what it shows](../img/x.svg)):\n' + '\n'.join(bad)
