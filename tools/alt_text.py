"""Every figure of the series and its text alternative: the plots stored in the notebooks' outputs
(``helpers.plot.show``) and the diagrams their markdown embeds (``img/*.svg``).

    python -m tools.alt_text            # one line per figure: notebook, cell, what is wrong, alt text
    python -m tools.alt_text --missing  # only the figures whose alt text is missing or not real

A text alternative is *real* when a screen-reader user learns from it what the figure shows: it is
there, it is not a file name or a hash (what Sphinx writes when there is none), not the stand-in
``helpers.plot.show`` makes when no ``alt`` was given (:data:`helpers.plot.FALLBACK_ALT`), not
matplotlib's ``<Figure size 600x400 with 1 Axes>``, and it has at least :data:`MIN_WORDS` words
(what is drawn and the finding). A plot's alt text must reach every place the figure goes: its
``text/html`` (an ``<img alt>``, which JupyterLab, the book and the decks render) and its
``text/plain`` carry the same text. tests/test_alt_text.py fails on any figure without one;
docs/accessibility.md says why.
"""
import html
import re
import sys

from tools import nb as nbtools

MIN_WORDS = 6
IMAGE_TYPES = ('image/png', 'image/jpeg', 'image/svg+xml', 'image/gif')
# The stand-in of helpers.plot.show (kept here as text: the tools do not import helpers).
FALLBACK_ALT = 'Figure without a written description: '
FILE_NAME = re.compile(r'\.(?:png|jpe?g|svg|gif|webp)\b|\b[0-9a-f]{16,}\b|^\S*/\S*$', re.I)
MARKDOWN_IMAGE = re.compile(r'!\[([^\]]*)\]\(([^)\s]+)[^)]*\)')
HTML_IMAGE = re.compile(r'<img\b[^>]*>', re.I)
ALT_ATTRIBUTE = re.compile(r'\balt\s*=\s*("([^"]*)"|\'([^\']*)\')', re.I)


def problem(alt):
    """Why ``alt`` is not a real text alternative ('' if it is one)."""
    if alt is None or not alt.strip():
        return 'no alt text'
    alt = alt.strip()
    if alt.startswith(FALLBACK_ALT.strip()):
        return 'the stand-in of helpers.plot.show (no alt= given)'
    if alt.startswith('<Figure size') or alt.startswith('<matplotlib'):
        return "matplotlib's repr, not a description (plot.show(alt=...) was not used)"
    if FILE_NAME.search(alt):
        return 'a file name or a hash'
    if len(alt.split()) < MIN_WORDS:
        return f'fewer than {MIN_WORDS} words: say what is drawn and what it shows'
    return ''


def _alt_of_html(page):
    """The alt attribute of the first ``<img>`` of an HTML output (None if no img or no alt)."""
    img = HTML_IMAGE.search(page)
    if not img:
        return None
    alt = ALT_ATTRIBUTE.search(img.group(0))
    return html.unescape(alt.group(2) if alt.group(2) is not None else alt.group(3)) if alt else None


def figures(path):
    """``[(cell, kind, alt, problem)]`` for every figure of a notebook: ``kind`` is 'plot' (an image
    output) or the diagram's path (a markdown image); ``problem`` is '' for a real alt text."""
    out = []
    for i, cell in enumerate(nbtools.read(path).cells):
        if cell.cell_type == 'markdown':
            for alt, src in MARKDOWN_IMAGE.findall(cell.source):
                out.append((i, src, alt, problem(alt)))
            for tag in HTML_IMAGE.findall(cell.source):
                src = re.search(r'\bsrc\s*=\s*["\']([^"\']*)', tag)
                out.append((i, src.group(1) if src else '<img>', _alt_of_html(tag), problem(_alt_of_html(tag))))
            continue
        if cell.cell_type != 'code':
            continue
        for output in cell.get('outputs', []):
            data = output.get('data', {})
            if not any(t in data for t in IMAGE_TYPES):
                continue
            plain = ''.join(data.get('text/plain', ''))
            page = ''.join(data.get('text/html', ''))
            alt = _alt_of_html(page) if page else None
            why = problem(alt if page else plain)
            if not why and not page:
                why = 'no text/html output: the book shows its file name (use helpers.plot.show)'
            elif not why and alt.strip() != plain.strip():
                why = 'text/plain and the <img alt> of text/html differ'
            out.append((i, 'plot', alt if page else plain, why))
    return out


def every_notebook():
    return nbtools.numbered() + nbtools.solutions()


def main(argv):
    missing = '--missing' in argv
    count = bad = 0
    for path in every_notebook():
        for cell, kind, alt, why in figures(path):
            count += 1
            bad += bool(why)
            if why or not missing:
                text = ' '.join((alt or '').split())
                print(f'{nbtools.rel(path)}\tcell {cell}\t{kind}\t{why or "ok"}\t{text[:300]}')
    print(f'{count} figures, {bad} without a real text alternative', file=sys.stderr)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
