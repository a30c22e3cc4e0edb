"""Every committed notebook is executed top to bottom in one run with no stored error, has its title,
navigation and 'one idea', and is listed in the contents and the README (nbval then re-runs each one
and compares its outputs)."""
import glob
import os
import re

import nbformat
import pytest

from conftest import NOTEBOOKS, ROOT

from tools import cell_metadata, navigation
from tools import nb as nbtools

NUMBERED = sorted(glob.glob(os.path.join(NOTEBOOKS, '[0-9][0-9]-*.ipynb')))
SOLUTIONS = sorted(glob.glob(os.path.join(NOTEBOOKS, 'solutions', '*.ipynb')))
EXECUTED = NUMBERED + SOLUTIONS


def test_notebooks_are_numbered_in_reading_order():
    names = [os.path.basename(p) for p in NUMBERED]
    assert names, 'no notebooks found'
    for name in names:
        assert re.fullmatch(r'\d\d-[a-z0-9-]+\.ipynb', name), f'{name}: expected NN-title.ipynb'
    assert [int(n[:2]) for n in names] == list(range(len(names))), f'numbered 00, 01, ...: {names}'
    others = set(glob.glob(os.path.join(NOTEBOOKS, '*.ipynb'))) - set(NUMBERED)
    assert others == {navigation.CONTENTS, nbtools.CLOSING}, f'unexpected notebooks: {sorted(others)}'
    for path in SOLUTIONS:
        stem = os.path.basename(path)[:-len('-solutions.ipynb')]
        assert os.path.join(NOTEBOOKS, stem + '.ipynb') in NUMBERED, f'{path}: solutions of which notebook?'


@pytest.mark.parametrize('path', EXECUTED, ids=lambda p: os.path.relpath(p, NOTEBOOKS))
def test_notebook_is_executed_in_order_without_errors(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == 'code' and c.source.strip()]
    assert code, 'a notebook with no code'
    counts = [c.execution_count for c in code]
    assert counts == list(range(1, len(code) + 1)), f'not executed top to bottom in one run: {counts}'
    for i, cell in enumerate(code):
        for out in cell.outputs:
            assert out.output_type != 'error', f'code cell {i} stored an error: {out.get("ename")}'
            if out.output_type == 'stream' and out.name == 'stderr':
                assert 'Traceback' not in out.text, f'code cell {i} printed a traceback'
    # the venv kernel's name and display name (tools.execute_notebooks writes them): with another
    # display name JupyterLab marks the notebook modified as soon as it opens it
    assert nb.metadata.get('kernelspec', {}) == {'name': 'python3', 'display_name': 'Python 3 (ipykernel)',
                                                 'language': 'python'}
    assert nb.cells[0].cell_type == 'markdown' and re.match(r'# \d\d · ', nb.cells[0].source), \
        'first cell must be the markdown title "# NN · Title"'


@pytest.mark.parametrize('path', NUMBERED, ids=os.path.basename)
def test_notebook_has_the_lesson_form(path):
    nb = nbformat.read(path, as_version=4)
    navigation.title_and_idea(path)           # '# NN · Title' and '**The one idea:** ...'
    text = '\n'.join(c.source for c in nb.cells if c.cell_type == 'markdown')
    for heading in ('## Summary', '## Exercises'):
        assert heading in text, f'no "{heading}" section'
    assert '**Predict' in text, 'no "predict, then run" prompt'
    assert navigation.solutions_of(path), 'no worked solutions notebook in notebooks/solutions/'


def test_navigation_contents_and_readme_table_are_current():
    stale = navigation.planned()
    assert not stale, ('navigation out of date (run `make navigation`): '
                       + ', '.join(os.path.relpath(p, ROOT) for p in stale))


def test_readme_lists_every_notebook():
    readme = open(os.path.join(ROOT, 'README.md')).read()
    for path in NUMBERED:
        assert f'notebooks/{os.path.basename(path)}' in readme, f'README does not list {path}'


@pytest.mark.parametrize('path', NUMBERED, ids=os.path.basename)
def test_the_main_line_fits_a_lecture(path):
    """At most 2,000 words of markdown outside the asides, about 30 screens of deck, and no internals
    (C++ names, source paths, test ids) outside an *Under the hood* aside (docs/maintainers.md)."""
    nb = nbformat.read(path, as_version=4)
    main = nbtools.main_line(nb)
    total = sum(nbtools.words(c.source) for _, c in main)
    assert total <= nbtools.MAIN_LINE_WORDS, f'{total} words on the main line (budget {nbtools.MAIN_LINE_WORDS})'
    internal = {i: nbtools.INTERNALS.findall(c.source)[:3] for i, c in main if nbtools.INTERNALS.search(c.source)}
    assert not internal, f'internals on the main line (move them into an Under-the-hood aside): {internal}'
    screens = cell_metadata.screens(nb)
    assert screens <= 30, f'a deck of {screens} screens (at most 30)'


# --- the closing page (notebooks/where-next.ipynb) ----------------------------------------------
INLINE_LINK = re.compile(r'\]\(([^)\s]+)\)')                      # [text](target)
REFERENCE_USE = re.compile(r'\]\[([^\]]+)\]')                      # [text][label]
REFERENCE_DEF = re.compile(r'^\[([^\]]+)\]:\s*(\S+)\s*$', re.M)     # [label]: target


def _links(text):
    """Every link target of a markdown text: inline links and reference definitions."""
    return INLINE_LINK.findall(text) + [target for _, target in REFERENCE_DEF.findall(text)]


def test_closing_page_is_markdown_whose_links_are_sources_or_notebooks():
    """The closing page maps the series to other tools with sources: markdown only, titled like a
    lesson, every link an https URL or a notebook of the series that exists, every reference link
    defined in its own cell (JupyterLab renders each cell on its own), every row of its table
    citing at least one https source."""
    nb = nbformat.read(nbtools.CLOSING, as_version=4)
    assert all(c.cell_type == 'markdown' for c in nb.cells), 'the closing page is markdown only'
    title, idea = nbtools.page_title_and_idea(nbtools.CLOSING)
    assert title and idea
    series = set(NUMBERED + SOLUTIONS) | {navigation.CONTENTS}
    rows = 0
    for i, cell in enumerate(nb.cells):
        targets = _links(cell.source)
        for target in targets:
            if target.startswith('https://'):
                continue
            path = os.path.normpath(os.path.join(NOTEBOOKS, target.split('#')[0]))
            assert path in series, f'cell {i}: link {target!r} is neither https nor a notebook of the series'
        defined = {label.lower() for label, _ in REFERENCE_DEF.findall(cell.source)}
        used = {label.lower() for label in REFERENCE_USE.findall(cell.source)}
        assert used <= defined, f'cell {i}: reference links without a definition: {sorted(used - defined)}'
        table = [line for line in cell.source.splitlines() if line.startswith('|')][2:]   # header, rule
        for line in table:
            rows += 1
            uses = REFERENCE_USE.findall(line)
            cited = [t for t in INLINE_LINK.findall(line) if t.startswith('https://')] + uses
            assert cited, f'cell {i}: a row of the table cites no source: {line[:80]}'
    assert rows >= 10, f'{rows} rows in the map (one per idea of the series)'


def test_navigation_leads_to_the_closing_page():
    """The last numbered notebook's navigation and the contents page link to the closing page, which
    links back; the book puts it after the last notebook and before the worked solutions."""
    name = os.path.basename(nbtools.CLOSING)
    last = nbformat.read(NUMBERED[-1], as_version=4)
    bottom = [c for c in last.cells if 'nav' in c.metadata.get('tags', [])][-1]
    assert f'[Where next ›]({name})' in bottom.source
    assert f']({name})' in nbformat.read(navigation.CONTENTS, as_version=4).cells[0].source
    closing = nbformat.read(nbtools.CLOSING, as_version=4)
    navs = [c.source for c in closing.cells if 'nav' in c.metadata.get('tags', [])]
    assert len(navs) == 2 and all(f']({os.path.basename(NUMBERED[-1])})' in s for s in navs)
    from tools import build_book
    toc = build_book.toc()
    assert toc.index(f'file: notebooks/{os.path.basename(NUMBERED[-1])[:-6]}') \
        < toc.index(f'file: notebooks/{name[:-6]}') < toc.index('caption: Worked solutions')
