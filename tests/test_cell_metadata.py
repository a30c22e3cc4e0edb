"""The cell metadata tool (tools.cell_metadata): every notebook's metadata is what the tool writes,
the tool changes ``metadata.slideshow`` and the asides' collapsed flag and nothing else, running it
twice changes nothing, and the rules (tags, headings, height, predict prompts, asides) give the slide
types they promise. Also what the decks and the book make of asides (tools.build_slides,
tools.build_book)."""
import copy
import os

import nbformat
import pytest

from tools import build_book, build_slides
from tools import cell_metadata as slides
from tools import nb as nbtools

v4 = nbformat.v4


def _md(text, tags=()):
    cell = v4.new_markdown_cell(text)
    if tags:
        cell.metadata['tags'] = list(tags)
    return cell


def _code(text, out_lines=0, tags=()):
    cell = v4.new_code_cell(text)
    if out_lines:
        cell.outputs = [v4.new_output('stream', name='stdout', text='x\n' * out_lines)]
    if tags:
        cell.metadata['tags'] = list(tags)
    return cell


def _without_slideshow(nb):
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        cell.metadata.pop('slideshow', None)
        cell.metadata.pop(slides.COLLAPSED, None)
    return nb


@pytest.mark.parametrize('path', nbtools.numbered() + nbtools.solutions(), ids=os.path.basename)
def test_cell_metadata_is_what_the_tool_writes(path):
    current = path not in slides.stale([path])
    assert current, f'cell metadata of {os.path.basename(path)} is out of date: run `make metadata`'


@pytest.mark.parametrize('path', nbtools.numbered() + nbtools.solutions(), ids=os.path.basename)
def test_tool_changes_only_slideshow_and_collapsed_metadata_and_is_idempotent(path):
    original = nbformat.read(path, as_version=4)
    nb = _without_slideshow(original)
    slides.apply(nb, slides=not slides.is_solutions(path))
    if slides.is_solutions(path):
        assert not any('slideshow' in c.metadata for c in nb.cells), 'a worked solution has no deck'
    assert _without_slideshow(nb) == _without_slideshow(original)   # sources, outputs, counts, tags
    for cell in nb.cells:
        assert set(cell.metadata.get('slideshow', {})) <= {'slide_type'}
    assert not slides.apply(nb, slides=not slides.is_solutions(path)), 'a second run changed something'
    text = nbformat.writes(nb) + '\n'
    assert nbformat.writes(nbformat.reads(text, as_version=4)) + '\n' == text


def test_rules():
    nb = v4.new_notebook(cells=[
        _md('# 00 · Title\n\n**The one idea:** one.'),
        _md('[Contents](contents.ipynb)', tags=['nav']),
        _md('## A section'),
        _code('import os', tags=['slide-skip']),
        _md('Say this, do not show it.', tags=['notes']),
        _code('x = 1'),
        _md('### A sub-section'),
        _md('Some context.\n\n**Predict:** what is x?'),
        _code('print(x)', out_lines=1),
        _code('\n'.join(['y = 2'] * 30)),                 # taller than a slide: a subslide of its own
        _code('z = 3'),                                   # no room left under it: the next subslide
        _md('Some text.\n\n## A heading inside a cell\n\nmore'),
        _code('w = 4'),
    ])
    assert slides.slide_types(nb) == [
        'slide', None, 'slide', 'skip', 'notes', '-', 'subslide', '-', 'fragment', 'subslide',
        'subslide', '-', '-']


def test_headings_in_fences_do_not_split_and_later_headings_do():
    assert slides.split_at_headings('## A\ntext') == ['## A\ntext']
    assert slides.split_at_headings('text\n```\n# comment\n```\n### B\nmore') == \
        ['text\n```\n# comment\n```', '### B\nmore']
    assert slides.heading_slide_type('### B') == 'subslide'
    assert slides.heading_slide_type('## B') == 'slide'


def test_nav_cells_get_no_metadata_and_lose_stale_metadata():
    nb = v4.new_notebook(cells=[_md('# 00 · T'), _md('nav', tags=['nav'])])
    nb.cells[1].metadata['slideshow'] = {'slide_type': 'skip'}
    assert slides.apply(nb)
    assert 'slideshow' not in nb.cells[1].metadata     # tools.navigation writes nav cells bare


def test_deck_cuts_markdown_at_headings_and_drops_navigation(tmp_path):
    nb = v4.new_notebook(cells=[
        _md('# 00 · T'), _md('[next](01-x.ipynb)', tags=['nav']),
        _md('Intro, see [01](01-x.ipynb#part).\n\n## Part two\ntext')])
    slides.apply(nb)
    path = tmp_path / '00-t.ipynb'
    nbformat.write(nb, str(path))
    deck = build_slides.deck_notebook(str(path), decks={'01-x'})
    assert [c.source for c in deck.cells] == ['# 00 · T', 'Intro, see [01](01-x.slides.html#part).',
                                              '## Part two\ntext']
    assert deck.cells[2].metadata.slideshow.slide_type == 'slide'


def test_cli_check_reports_drift_and_writes_nothing(tmp_path, capsys):
    nb = v4.new_notebook(cells=[_md('# 00 · T'), _md('## S')])
    path = tmp_path / '00-t.ipynb'
    nbformat.write(nb, str(path))
    before = path.read_text()
    assert slides.main(['--check', str(path)]) == 1
    assert 'out of date' in capsys.readouterr().out and path.read_text() == before
    assert slides.main([str(path)]) == 0
    assert slides.main(['--check', str(path)]) == 0
    contents = tmp_path / 'contents.ipynb'                # not a numbered notebook: left alone
    nbformat.write(nb, str(contents))
    assert slides.main([str(contents)]) == 0
    assert 'left alone' in capsys.readouterr().out and 'slideshow' not in contents.read_text()


def test_hide_input_cells_count_only_their_outputs():
    def plot():
        return _code('\n'.join(['plt.plot(x)'] * 18), out_lines=3, tags=['slide-hide-input'])
    assert slides.height(plot()) == 3.5                        # the outputs, not the 18 lines of code
    assert slides.height(_code('\n'.join(['plt.plot(x)'] * 18), out_lines=3)) == 18 + 1 + 3.5
    nb = v4.new_notebook(cells=[_md('# 00 · T'), _md('## S'), _code('\n'.join(['x'] * 8)), plot(),
                                _md('Some text.\n\n**Predict:** what?'), plot()])
    assert slides.slide_types(nb) == ['slide', 'slide', '-', '-', '-', 'fragment']   # all on one slide


def _deck_html(tmp_path, cells):
    nb = v4.new_notebook(cells=cells)
    slides.apply(nb)
    path = tmp_path / '00-t.ipynb'
    nbformat.write(nb, str(path))
    body, _ = build_slides.exporter().from_notebook_node(
        build_slides.deck_notebook(str(path), decks=set()), resources={'metadata': {'name': '00 · T'}})
    return body


def test_deck_shows_outputs_of_hide_input_cells_without_their_code_and_no_prompts(tmp_path):
    plot = _code('make_the_figure()', tags=['slide-hide-input'])
    plot.outputs = [v4.new_output('stream', name='stdout', text='the figure\n')]
    plot.execution_count = 7
    shown = _code('shown_code()')
    shown.outputs = [v4.new_output('execute_result', data={'text/plain': '42'}, execution_count=8)]
    shown.execution_count = 8
    body = _deck_html(tmp_path, [_md('# 00 · T'), plot, shown])
    assert 'the figure' in body and 'make_the_figure' not in body
    assert 'shown_code' in body and '42' in body
    assert 'In&nbsp;[' not in body and 'Out[8]' not in body      # the code box gets the slide's width
    assert "navigationMode: 'linear'" in body                      # →, Space and PageDown: every slide


def test_book_drops_navigation_cells_and_speaker_notes():
    nb = v4.new_notebook(cells=[_md('# 00 · T'), _md('[next](01-x.ipynb)', tags=['nav']),
                                _md('Say this, do not show it.', tags=['notes']), _code('x = 1', tags=['slide-skip'])])
    assert [c.source for c in build_book.for_book(nb).cells] == ['# 00 · T', 'x = 1']


def _aside_notebook():
    return v4.new_notebook(cells=[
        _md('# 00 · T'), _md('## S'), _md('Main line.'),
        _md('### Under the hood: the engine\n\nIt queues.', tags=['aside']),
        _code('print(1)', tags=['aside']),
        _md('## Next'), _md('More.')])


def test_an_aside_is_skipped_in_the_deck_and_its_heading_collapsed_in_jupyterlab(tmp_path):
    nb = _aside_notebook()
    assert nbtools.asides(nb) == [(3, 4)]
    assert slides.apply(nb)
    assert nbtools.asides(nb) == [(3, 5)] and nbtools.aside_problems(nb) == []
    assert slides.slide_types(nb)[3:6] == ['skip', 'skip', 'skip']
    assert [bool(c.metadata.get(slides.COLLAPSED)) for c in nb.cells] == [False] * 3 + [True] + [False] * 4
    for cell in nb.cells[3:6]:                           # no longer an aside: the flag goes
        cell.metadata['tags'] = []
    assert slides.apply(nb) and not any(c.metadata.get(slides.COLLAPSED) for c in nb.cells)
    body = _deck_html(tmp_path, _aside_notebook().cells)
    assert 'It queues' not in body and 'print(1)' not in body and 'Main line' in body


def test_an_asides_heading_gets_a_cell_of_its_own_its_text_unchanged_after_it():
    """JupyterLab hides the cells after a collapsed heading, not the heading cell's own text: the
    tool cuts the aside's first cell after its heading line (tools.nb.heading_alone)."""
    nb = _aside_notebook()
    nb.cells[3].source = '\n### Under the hood: the engine\n\nIt queues.\n\nIt runs.\n'
    nb.cells[3].metadata['tags'] = ['aside', 'other']
    before = copy.deepcopy(nb)
    assert nbtools.aside_problems(nb) == [
        'cell 3: the heading of an aside must be alone in its cell (JupyterLab hides the cells after a '
        'collapsed heading, not its own text): run make metadata']
    assert nbtools.heading_alone(nb) == 1 and nbtools.heading_alone(nb) == 0
    head, text = nb.cells[3], nb.cells[4]
    assert head.source == '### Under the hood: the engine'
    assert text.cell_type == 'markdown' and text.source == 'It queues.\n\nIt runs.'
    assert text.metadata == {'tags': ['aside', 'other']} and text.id == f'{head.id}-text'
    assert len({c.id for c in nb.cells}) == len(nb.cells)
    assert [c.source for c in nb.cells[5:]] == [c.source for c in before.cells[4:]]
    nbformat.validate(nb)
    assert nbtools.aside_problems(nb) == []
    one = v4.new_notebook(cells=[_md('# 00 · T'), _md('### Under the hood: x\ntext', tags=['aside'])])
    one.cells[1].id = 'a' * 64                         # the longest id: the new one still fits
    assert nbtools.heading_alone(one) == 1 and nbtools.asides(one) == [(1, 2)]
    nbformat.validate(one)


def test_the_book_shows_an_aside_as_a_closed_dropdown_round_all_its_cells():
    split = _aside_notebook()
    assert nbtools.heading_alone(split) == 1                  # as make metadata leaves it
    for nb in (_aside_notebook(), split):                     # the same dropdown, its text in one cell
        sources = [c.source for c in build_book.for_book(nb).cells]
        assert sources[3] == '<details class="aside">\n<summary>Under the hood: the engine</summary>\n\nIt queues.'
        assert sources[4:7] == ['print(1)', '</details>', '## Next']


@pytest.mark.parametrize('cells, problem', [
    ([_md('Text, no heading', tags=['aside']), _md('## Next')], 'must start with a markdown heading'),
    ([_md('### Under the hood: x', tags=['aside']), _md('#### inner', tags=['aside']), _md('## Next')],
     'a heading inside the aside'),
    ([_md('### Under the hood: x', tags=['aside']), _md('Back to the main line.')], 'must start with a heading'),
    ([_md('## Under the hood: x', tags=['aside']), _md('### Deeper')], 'must start with a markdown heading'),
])
def test_a_malformed_aside_is_named(cells, problem):
    nb = v4.new_notebook(cells=[_md('# 00 · T')] + cells)
    assert any(problem in p for p in nbtools.aside_problems(nb)), nbtools.aside_problems(nb)


@pytest.mark.parametrize('path', nbtools.numbered() + nbtools.solutions(), ids=os.path.basename)
def test_every_aside_has_the_form_the_tools_rely_on(path):
    assert nbtools.aside_problems(nbtools.read(path)) == []
