"""What every tool needs to know about the notebooks: where they are, how to read and write them,
their titles, tags, headings and *Under the hood* asides (one definition of each).

An **aside** is a run of consecutive cells tagged ``aside``. Its first cell is markdown and holds
the heading ``### Under the hood: ...`` (``####`` inside a ``###`` section) and nothing else: the
aside's text starts in its second cell. The heading is the only heading in the aside; the cell after
it starts with a heading of the same or a higher level, or the notebook ends there. JupyterLab then
opens the aside collapsed: a heading cell flagged ``jp-MarkdownHeadingCollapsed`` (``tools.cell_metadata``
sets the flag) hides the cells *after* it, up to the next heading of its level, but never its own
text -- hence a cell of its own (:func:`heading_alone`, which ``make metadata`` applies). The book
shows the aside as a closed dropdown (``tools.build_book``), and the decks leave it out
(``tools.build_slides``). :func:`aside_problems` says what breaks that form.
"""
import glob
import os
import re

import nbformat

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = os.path.join(ROOT, 'notebooks')
SOLUTIONS = os.path.join(NOTEBOOKS, 'solutions')
CONTENTS = os.path.join(NOTEBOOKS, 'contents.ipynb')
README = os.path.join(ROOT, 'README.md')
# The closing page, read after the last numbered notebook: markdown only, "# Title" and a paragraph
# starting "**The one idea:**" like a lesson's title cell, but no number, no exercises, no deck.
CLOSING = os.path.join(NOTEBOOKS, 'where-next.ipynb')

NAV, NOTES, ASIDE = 'nav', 'notes', 'aside'
ASIDE_HEADING = re.compile(r'#{3,4} Under the hood: \S')
KERNELSPEC = {'name': 'python3', 'display_name': 'Python 3 (ipykernel)', 'language': 'python'}


def numbered():
    """The lessons, in reading order: ``notebooks/NN-*.ipynb``."""
    return sorted(glob.glob(os.path.join(NOTEBOOKS, '[0-9][0-9]-*.ipynb')))


def solutions():
    """The worked solutions: ``notebooks/solutions/NN-*-solutions.ipynb``."""
    return sorted(glob.glob(os.path.join(SOLUTIONS, '[0-9][0-9]-*-solutions.ipynb')))


def closing():
    """The closing page (``notebooks/where-next.ipynb``), or None while there is none."""
    return CLOSING if os.path.exists(CLOSING) else None


def solutions_of(path):
    """The worked-solutions notebook of a numbered notebook, or None."""
    stem = os.path.basename(path)[:-len('.ipynb')]
    candidate = os.path.join(SOLUTIONS, f'{stem}-solutions.ipynb')
    return candidate if os.path.exists(candidate) else None


def read(path):
    return nbformat.read(path, as_version=4)


def write(nb, path):
    """Write in nbformat's own layout (what every tool and ``make execute`` write)."""
    nbformat.write(nb, path)


def rel(path):
    return os.path.relpath(path, ROOT)


def tags(cell):
    return set(cell.get('metadata', {}).get('tags', []))


def heading_level(text):
    """1 for text starting ``# ...``, 2 for ``## ...``, ...; 0 if it does not start with a heading."""
    m = re.match(r'\n*[ ]{0,3}(#{1,6})\s', text)
    return len(m.group(1)) if m else 0


def cell_heading_level(cell):
    return heading_level(cell.source) if cell.cell_type == 'markdown' else 0


def title_and_idea(path, strict=True):
    """``('03', 'split_and_load by hand', 'a batch is cut ...')`` from a notebook's first cell:
    ``# NN · Title`` and a paragraph starting ``**The one idea:**``. ``strict``: ValueError when
    either is missing; otherwise fall back on the file name and an empty idea (a draft)."""
    first = read(path).cells[0].source
    m = re.match(r'# (\d\d) · (.+)', first)
    idea = re.search(r'\*\*The one idea:\*\*\s*(.+?)(?:\n\s*\n|$)', first, re.S)
    name = os.path.basename(path)
    if strict and not m:
        raise ValueError(f'{name}: the first cell must start with "# NN · Title"')
    if strict and not idea:
        raise ValueError(f'{name}: the first cell needs a "**The one idea:** ..." paragraph')
    number, title = (m.group(1), m.group(2).strip()) if m else (name[:2], first.split('\n')[0].lstrip('# '))
    return number, title, ' '.join(idea.group(1).split()) if idea else ''


def page_title_and_idea(path):
    """``('Where next', 'every idea ...')`` from the first cell of an unnumbered page (the closing
    page): ``# Title`` and a paragraph starting ``**The one idea:**``; ValueError if either is missing."""
    first = read(path).cells[0].source
    m = re.match(r'# (.+)', first)
    idea = re.search(r'\*\*The one idea:\*\*\s*(.+?)(?:\n\s*\n|$)', first, re.S)
    if not m or not idea:
        raise ValueError(f'{os.path.basename(path)}: the first cell must be "# Title" and a '
                         '"**The one idea:** ..." paragraph')
    return m.group(1).strip(), ' '.join(idea.group(1).split())


def asides(nb):
    """``[(first, last), ...]``: the cell indices of every aside (runs of cells tagged ``aside``)."""
    runs, start = [], None
    for i, cell in enumerate(nb.cells + [None]):
        inside = cell is not None and ASIDE in tags(cell)
        if inside and start is None:
            start = i
        elif not inside and start is not None:
            runs.append((start, i - 1))
            start = None
    return runs


def _new_id(nb, base):
    """A cell id not yet in ``nb``, made from ``base`` (nbformat: 1 to 64 of ``[a-zA-Z0-9-_]``)."""
    taken = {c.get('id') for c in nb.cells}
    base = re.sub(r'[^a-zA-Z0-9_-]', '-', base)[:58]
    candidate, n = f'{base}-text', 1
    while candidate in taken:
        n += 1
        candidate = f'{base}-text{n}'
    return candidate


def heading_alone(nb):
    """Give the heading of every aside a markdown cell of its own: text after the heading in the
    aside's first cell moves, unchanged, into a new markdown cell right after it, tagged like it
    (``aside``). JupyterLab collapses only the cells after a collapsed heading, so the text left in
    the heading's cell was shown under a closed heading. Returns the number of cells split;
    running it again splits nothing. Sources, outputs and the other cells are not touched."""
    split = 0
    for first, _ in reversed(asides(nb)):
        head = nb.cells[first]
        if head.cell_type != 'markdown' or not ASIDE_HEADING.match(head.source.lstrip('\n')):
            continue                          # not an aside's heading: aside_problems names it
        title, _, rest = head.source.lstrip('\n').partition('\n')
        if not rest.strip():
            continue
        body = nbformat.v4.new_markdown_cell(rest.strip('\n'), metadata={'tags': list(head.metadata.get('tags', []))})
        if 'id' in head:
            body['id'] = _new_id(nb, head.id)
        else:                                  # a notebook without cell ids (nbformat < 4.5)
            body.pop('id', None)
        head.source = title.rstrip()
        nb.cells.insert(first + 1, body)
        split += 1
    return split


def aside_problems(nb):
    """What breaks the aside form (module docstring), as ``['cell 12: ...', ...]``; empty if none."""
    problems = []
    for first, last in asides(nb):
        head = nb.cells[first]
        level = cell_heading_level(head)
        if head.cell_type != 'markdown' or not ASIDE_HEADING.match(head.source.lstrip('\n')):
            problems.append(f'cell {first}: an aside must start with a markdown heading '
                            '"### Under the hood: ..." (or ####)')
            continue
        if head.source.strip().count('\n'):
            problems.append(f'cell {first}: the heading of an aside must be alone in its cell (JupyterLab '
                            'hides the cells after a collapsed heading, not its own text): run make metadata')
        for i in range(first + 1, last + 1):
            if cell_heading_level(nb.cells[i]):
                problems.append(f'cell {i}: a heading inside the aside of cell {first} (only its first '
                                'cell has one)')
        if last + 1 < len(nb.cells):
            after = nb.cells[last + 1]
            if NAV not in tags(after) and not 0 < cell_heading_level(after) <= level:
                problems.append(f'cell {last + 1}: the cell after the aside of cell {first} must start with '
                                f'a heading of level {level} or higher, so that the aside ends there')
    return problems


# What a student reads first: markdown outside asides, speaker notes and navigation. It fits one
# lecture (docs/maintainers.md): at most MAIN_LINE_WORDS words, and none of INTERNALS -- a C++ name
# (`Engine::Push`), a source path (src/.../x.cc) or a test id (tests/test_x.py::name).
MAIN_LINE_WORDS = 2000
INTERNALS = re.compile(r'\b\w+::\w+|\bsrc/[\w/]+\.(?:cc|h|cu|cuh)\b|tests/test_\w+\.py::')


def main_line(nb):
    """``[(index, cell)]`` of the markdown cells on the main line: every markdown cell a student meets
    without opening an aside, the navigation cells included (they are read too, and the project's
    reference count, ../shared/tools/mainline.py, counts them), speaker notes not."""
    return [(i, c) for i, c in enumerate(nb.cells)
            if c.cell_type == 'markdown' and not {ASIDE, NOTES} & tags(c)]


def words(text):
    """Words as a reader counts them: markdown's `, $, *, #, > and | are not words."""
    return len(re.sub(r'[`$*#>|]', ' ', text).split())
