"""Write the cell metadata the notebooks' tags and headings imply: the slide type of every cell
(``metadata.slideshow.slide_type``, so that ``make slides`` turns each numbered notebook into a
reveal.js deck) and, on the heading of every *Under the hood* aside, JupyterLab's
``jp-MarkdownHeadingCollapsed`` (so the aside opens collapsed; :mod:`tools.nb` defines asides).
Before that it gives every aside's heading a cell of its own (:func:`tools.nb.heading_alone`):
JupyterLab 4 reads that flag when it opens a notebook and hides the cells *after* the heading, up
to the next heading of the same or a higher level, never the heading cell's own text.
tests/test_browser.py opens the notebooks in `make lab` and checks it.

    python -m tools.cell_metadata                       # every notebook and solution (``make metadata``)
    python -m tools.cell_metadata notebooks/04-*.ipynb  # some of them
    python -m tools.cell_metadata --check               # exit 1 if any notebook's metadata is not current

The worked solutions (notebooks/solutions/) have no deck: they get the asides' cells and flags only.

Slide types, in order (the first rule that applies decides a cell's type):

1. a cell tagged ``nav`` (written by tools.navigation) gets no slide metadata: the deck builder
   drops navigation cells, and tools.navigation rewrites them from scratch;
2. tagged ``slide-skip`` (code kept for completeness) or ``aside`` (an *Under the hood* aside: the
   decks leave internals out): ``skip``;
   (a code cell tagged ``slide-hide-input`` is on its slide like any cell, but the deck shows only
   its outputs -- a plotting cell shows its figure, not the plotting code -- so only its outputs
   count towards the slide's height; the deck builder drops the code)
3. tagged ``notes`` (markdown for the lecturer): ``notes``, the speaker notes of the slide it is on;
4. the first cell, and a markdown cell starting with a ``#`` or ``##`` heading: a new ``slide``;
   ``###``: a ``subslide`` (reveal.js shows subslides below their slide). A heading in the middle
   of a markdown cell starts a slide too: the deck builder (tools/build_slides.py) cuts the cell
   there (:func:`split_at_headings`), and this tool counts only the last part towards the next cell;
5. a cell that would not fit on the current (sub)slide any more -- its height estimated in lines
   of text from its source and its stored outputs (:func:`height`) -- starts a ``subslide``; a cell
   taller than a slide gets one to itself (the deck scrolls it; a long output scrolls in its box);
6. the cell right after a markdown cell that ends with a ``**Predict...**`` prompt is a
   ``fragment``: it (and what follows it on the slide) appears on the next key press, after the
   audience has answered;
7. everything else continues the current slide (``-``).

The tool changes ``metadata.slideshow`` and ``metadata.jp-MarkdownHeadingCollapsed``, and splits the
first markdown cell of an aside after its heading line, and nothing else: no output or execution
count, no code cell, no text but where that one cell is cut (the notebooks are committed executed and
nbval re-checks them; it compares code cells only). It writes a notebook only when something
changes, in nbformat's own layout, so running it twice changes nothing. tests/test_cell_metadata.py
checks that every notebook's metadata is what this tool writes.
"""
import base64
import math
import os
import re
import struct
import sys

from tools import nb as nbtools
from tools.nb import ASIDE, NAV, NOTES

NAME = re.compile(r'\d\d-[^/]+\.ipynb$')
SKIP, HIDE_INPUT = 'slide-skip', 'slide-hide-input'
COLLAPSED = 'jp-MarkdownHeadingCollapsed'     # JupyterLab 4's flag of a collapsed heading
# A slide is 960 x 700 px (nbconvert's reveal template) at a 20 px font: about 24 lines of text.
SLIDE_LINES = 24
CHARS_PER_LINE = 80      # prose wraps at about this many characters
OUTPUT_LINES = 14        # the deck shows at least this many lines of an output (more if its slide has room)
LINE_PX = 28             # height of a line of text on a slide, for images
SLIDE_WIDTH_PX = 860     # wider images are scaled down to this width
DIAGRAM_LINES = 13       # a markdown image (an img/*.svg diagram): 320 px high, more if its slide has room
HEADING_CHARS = 45       # a heading (twice the height of a line) wraps at about this many characters


_level = nbtools.heading_level
heading_level = nbtools.cell_heading_level


def split_at_headings(source):
    """Markdown cut before every ``#``, ``##`` or ``###`` heading that is not the first line (and
    not in a code fence): ``['text', '## Heading\\nmore text', ...]``; ``[source]`` if there is none."""
    parts, current, fence = [], [], None
    for line in source.split('\n'):
        m = re.match(r'\s*(```|~~~)', line)
        if m:
            fence = None if fence == m.group(1) else (fence or m.group(1))
        if fence is None and 1 <= _level(line) <= 3 and any(x.strip() for x in current):
            parts.append('\n'.join(current).strip('\n'))
            current = []
        current.append(line)
    parts.append('\n'.join(current).strip('\n'))
    return parts


def _text_lines(text):
    return len(text.rstrip('\n').splitlines()) if text.strip() else 0


def _png_lines(data):
    try:
        head = base64.b64decode(data[:64])
        width, height = struct.unpack('>II', head[16:24])
    except (ValueError, struct.error):
        return SLIDE_LINES // 2
    if width > SLIDE_WIDTH_PX:
        height = height * SLIDE_WIDTH_PX / width
    return math.ceil(height / LINE_PX)


def output_lines(output):
    """Estimated lines of one stored output as the deck shows it (long text is capped)."""
    if output.output_type == 'stream':
        return min(_text_lines(output.text), OUTPUT_LINES)
    data = output.get('data', {})
    if 'image/png' in data:
        return _png_lines(data['image/png'])
    if 'text/html' in data or 'text/plain' in data:
        return min(_text_lines(data.get('text/plain', '') or str(data.get('text/html', ''))), OUTPUT_LINES)
    return 0


def height(cell):
    """Estimated height of a cell on a slide, in lines of text (a code cell tagged
    ``slide-hide-input``: its outputs only)."""
    if cell.cell_type == 'markdown':
        return _markdown_lines(cell.source)
    if cell.cell_type == 'code':
        outputs = sum(output_lines(o) + 0.5 for o in cell.get('outputs', []))
        if HIDE_INPUT in cell.get('metadata', {}).get('tags', []):
            return outputs
        return _text_lines(cell.source) + 1 + outputs
    return 0


def _markdown_lines(source):
    lines = 0.0
    for line in source.splitlines():
        if not line.strip():
            lines += 0.5
        elif re.search(r'!\[[^\]]*\]\([^)]+\)|<img ', line):
            lines += DIAGRAM_LINES
        elif line.lstrip().startswith('#'):
            lines += 2 * math.ceil(len(line.strip('# ')) / HEADING_CHARS)
        else:
            lines += math.ceil(len(line) / CHARS_PER_LINE)
    return lines


def _ends_with_predict(text):
    """Whether the last paragraph of a markdown text is a ``**Predict...**`` prompt."""
    paragraphs = [p for p in re.split(r'\n\s*\n', text) if p.strip()]
    return bool(paragraphs) and paragraphs[-1].lstrip().startswith('**Predict')


def slide_types(nb):
    """The slide type of every cell of ``nb`` (None: leave the cell without slide metadata)."""
    types, used, after_predict = [], 0.0, False
    for i, cell in enumerate(nb.cells):
        tags = set(cell.get('metadata', {}).get('tags', []))
        if NAV in tags:
            types.append(None)
            continue
        if SKIP in tags or ASIDE in tags:
            types.append('skip')
            continue
        if NOTES in tags:
            types.append('notes')
            continue
        parts = split_at_headings(cell.source) if cell.cell_type == 'markdown' else [cell.source]
        h = _markdown_lines(parts[0]) if cell.cell_type == 'markdown' else height(cell)
        level = heading_level(cell)
        if not types or level in (1, 2):
            kind, used = 'slide', h
        elif level == 3:
            kind, used = 'subslide', h
        elif used > 0 and used + h > SLIDE_LINES:
            kind, used = 'subslide', h
        else:
            kind, used = ('fragment' if after_predict else '-'), used + h
        if len(parts) > 1:                 # the cell's last part is on a slide of its own
            used = _markdown_lines(parts[-1])
        types.append(kind)
        after_predict = cell.cell_type == 'markdown' and _ends_with_predict(cell.source)
    return types


def heading_slide_type(part):
    """The slide type of a part of a markdown cell that :func:`split_at_headings` cut off."""
    return 'subslide' if _level(part) == 3 else 'slide'


def screens(nb):
    """How many screens the deck of ``nb`` has: its slides and subslides, the ones a heading inside a
    markdown cell starts included (what the README's lecture plan counts)."""
    count = 0
    for cell, kind in zip(nb.cells, slide_types(nb)):
        if kind in ('skip', 'notes', None):
            continue
        count += kind in ('slide', 'subslide')
        if cell.cell_type == 'markdown':
            count += len(split_at_headings(cell.source)) - 1
    return count


def collapsed(nb):
    """Whether each cell should carry JupyterLab's collapsed flag: the first cell of every aside."""
    heads = {first for first, _ in nbtools.asides(nb)}
    return [i in heads for i in range(len(nb.cells))]


def apply(nb, slides=True):
    """Give every aside's heading a cell of its own, set the collapsed flag of every aside's heading
    and (``slides``: a numbered notebook, which has a deck) the slide type of every cell of ``nb``;
    return True if anything changed."""
    changed = bool(nbtools.heading_alone(nb))
    for cell, fold in zip(nb.cells, collapsed(nb)):
        if bool(cell.metadata.get(COLLAPSED)) != fold:
            changed = True
            if fold:
                cell.metadata[COLLAPSED] = True
            else:
                cell.metadata.pop(COLLAPSED, None)
    for cell, kind in zip(nb.cells, slide_types(nb) if slides else ()):
        slideshow = cell.metadata.get('slideshow', {})
        if slideshow.get('slide_type') == kind:
            continue
        changed = True
        if kind is None:
            slideshow.pop('slide_type', None)
        else:
            slideshow['slide_type'] = kind
        if slideshow:
            cell.metadata['slideshow'] = slideshow
        else:
            cell.metadata.pop('slideshow', None)
    return changed


def is_solutions(path):
    """Whether ``path`` is a worked-solutions notebook (no deck: asides only)."""
    return os.path.basename(path).endswith('-solutions.ipynb')


def stale(paths=None):
    """``{path: notebook with current metadata}`` of every notebook whose metadata would change
    (default: every numbered notebook and every worked solution)."""
    out = {}
    for path in nbtools.numbered() + nbtools.solutions() if paths is None else paths:
        nb = nbtools.read(path)
        if apply(nb, slides=not is_solutions(path)):
            out[path] = nb
    return out


def main(argv):
    check = '--check' in argv
    paths = [p for p in argv if p != '--check']
    decks = [p for p in paths if NAME.search(p.replace(os.sep, '/'))]
    for p in sorted(set(paths) - set(decks)):
        print(f'{nbtools.rel(p)}: neither a numbered notebook nor a worked solution, left alone')
    changes = stale([os.path.abspath(p) for p in decks] if paths else None)
    for path, nb in changes.items():
        if check:
            print(f'{nbtools.rel(path)}: cell metadata out of date (run make metadata)')
        else:
            nbtools.write(nb, path)
            print(f'wrote the cell metadata of {nbtools.rel(path)}')
    return 1 if changes and check else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
