"""Build the whole series as a static HTML book with Jupyter Book 1.x (``make book``).

    python -m tools.build_book     # -> build/book/_build/html/index.html

The book shows the committed, executed notebooks; nothing is executed. Its landing page is the
contents notebook (notebooks/contents.ipynb, written by tools.navigation; made on the fly with
the same code if it is not there yet), then every numbered notebook in order and the closing page
(notebooks/where-next.ipynb, when there is one), then the worked solutions as a part of their own.
Navigation cells (tag ``nav``) are dropped: the book has its own previous/next links and sidebar.
So are speaker notes (markdown cells tagged ``notes``, the lecturer's notes of the decks): the book
is for students. Every *Under the hood* aside (cells tagged ``aside``, :mod:`tools.nb`) becomes a
closed dropdown: an HTML ``<details>`` whose summary is the aside's heading, wrapped round its cells
(code and outputs included).

The sources are staged in build/book-src/ with the same layout as the repository (notebooks/,
notebooks/solutions/, img/), so ``../img/*.svg`` resolves as it does in JupyterLab. The book loads
nothing from the internet: MathJax is copied into its _static/ (tools/web/assets.py) and the theme
(sphinx-book-theme) ships its own fonts and scripts. tests/test_browser.py checks both.
"""
import html
import os
import re
import shutil
import subprocess
import sys
import time

import nbformat

from tools import nb as nbtools
from tools.nb import closing, numbered, solutions
from tools.web import assets

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = nbtools.ROOT
NOTEBOOKS = nbtools.NOTEBOOKS
SRC = os.path.join(ROOT, 'build', 'book-src')
OUT = os.path.join(ROOT, 'build', 'book')
HTML = os.path.join(OUT, '_build', 'html')


def contents():
    """The contents notebook: the committed one, or the one tools.navigation would write."""
    if os.path.exists(nbtools.CONTENTS):
        return nbtools.read(nbtools.CONTENTS)
    print('note: notebooks/contents.ipynb does not exist yet; using what tools.navigation would write')
    from tools import navigation
    try:
        return navigation.contents_notebook()
    except ValueError as e:               # a notebook not yet in lesson form: a plain list will do
        print(f'note: {e}; the contents page is a plain list')
    lines = ['# Data-parallel training from scratch with MXNet', '', '## The notebooks', '']
    for path in numbered():
        number, title, idea = nbtools.title_and_idea(path, strict=False)
        lines.append(f'{int(number)}. [{title}]({os.path.basename(path)}) {idea}')
    lines += ['', '## Worked solutions', '']
    lines += [f'* [{os.path.basename(p)[:-len(".ipynb")]}](solutions/{os.path.basename(p)})' for p in solutions()]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell('\n'.join(lines))]
    return nb


DROPPED_TAGS = {nbtools.NAV, nbtools.NOTES}     # navigation cells, speaker notes


def _dropdown(nb):
    """Wrap every aside of ``nb`` in a closed ``<details>`` whose summary is the aside's heading.
    The heading has a cell of its own (for JupyterLab, :func:`tools.nb.heading_alone`): the markdown
    cell after it joins it, so that the dropdown's text starts in the cell that opens it."""
    for first, last in reversed(nbtools.asides(nb)):
        head = nb.cells[first]
        title, _, rest = head.source.lstrip('\n').partition('\n')
        if not rest.strip() and first < last and nb.cells[first + 1].cell_type == 'markdown':
            rest = nb.cells.pop(first + 1).source
            last -= 1
        summary = html.escape(re.sub(r'^#+\s*', '', title).strip())
        head.source = f'<details class="aside">\n<summary>{summary}</summary>\n\n{rest.strip()}'
        nb.cells.insert(last + 1, nbformat.v4.new_markdown_cell('</details>'))
    return nb


def for_book(nb):
    """``nb`` without its navigation cells and speaker notes, its asides as dropdowns."""
    nb = _dropdown(nb)
    nb.cells = [c for c in nb.cells if not DROPPED_TAGS & nbtools.tags(c)]
    return nb


def _doc(path):
    """A toc entry: the path relative to the book's root, without the suffix."""
    return os.path.relpath(path, ROOT)[:-len('.ipynb')]


def toc():
    lines = ['format: jb-book', 'root: notebooks/contents', 'parts:',
             '- caption: The notebooks', '  chapters:']
    lines += [f'  - file: {_doc(p)}' for p in numbered() + ([closing()] if closing() else [])]
    if solutions():
        lines += ['- caption: Worked solutions', '  chapters:']
        lines += [f'  - file: {_doc(p)}' for p in solutions()]
    return '\n'.join(lines) + '\n'


# Copied into the book's _static/, where Jupyter Book loads every .css and .js on every page: the
# asides' and figures' styles, and the theme's accessibility fixes (docs/accessibility.md).
STATIC = ('asides.css', 'a11y.css', 'a11y.js')


def stage(src=SRC):
    """Copy everything the book is made of into ``src``; return the MathJax bytes copied."""
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(os.path.join(src, 'notebooks', 'solutions'))
    for path in numbered() + ([closing()] if closing() else []) + solutions():
        nbtools.write(for_book(nbtools.read(path)), os.path.join(src, nbtools.rel(path)))
    nbtools.write(for_book(contents()), os.path.join(src, 'notebooks', 'contents.ipynb'))
    shutil.copytree(os.path.join(ROOT, 'img'), os.path.join(src, 'img'),
                    ignore=shutil.ignore_patterns('*.py', '__pycache__'))
    shutil.copyfile(os.path.join(HERE, 'book', '_config.yml'), os.path.join(src, '_config.yml'))
    os.makedirs(os.path.join(src, '_static'), exist_ok=True)
    for name in STATIC:
        shutil.copyfile(os.path.join(HERE, 'book', name), os.path.join(src, '_static', name))
    with open(os.path.join(src, '_toc.yml'), 'w') as f:
        f.write(toc())
    os.makedirs(os.path.join(src, '_mathjax', '_static'))      # html_extra_path: see _config.yml
    return assets.copy_mathjax3(os.path.join(src, '_mathjax', '_static', 'mathjax'))


# pydata-sphinx-theme 0.15.4 -- on Python 3.9 and 3.10 the only one the newest sphinx-book-theme
# allows (1.1.4 pins it; 1.3.0, with 0.17.1, needs Python 3.11) -- preloads FontAwesome's three
# webfonts on every page (<link rel="preload" as="font" crossorigin>, its static/webpack-macros.html).
# Chromium refuses a cross-origin font load from a file:// page, so a book opened from disk logged
# three failed requests per page (tests/test_accessibility.py saw them). Its icons are drawn as SVG
# by the theme's fontawesome all.min.js either way, and 0.17.1 preloads no font: the tags go.
FONT_PRELOAD = re.compile(r'<link rel="preload" as="font"[^>]*webfonts/[^>]*>\s*')


def drop_font_preloads(page):
    """``(page, n)``: the page without the theme's font preloads, and how many went."""
    return FONT_PRELOAD.subn('', page)


# A table written in markdown (docutils: <table class="table">, a <thead> of <th>, rows of <td>).
TABLE = re.compile(r'<table class="table">.*?</table>', re.S)


def label_cells(page):
    """``(page, n)``: every markdown table's cells carry their column's heading (``data-label``) and
    the table its roles explicitly (``role="table"``, ``row``, ``cell``, ...), so that a stylesheet
    can lay it out as cards on a narrow screen without losing what a screen reader announces
    (Chromium drops a table's semantics once its display is changed). asides.css does it for the
    closing page's map (WCAG 1.4.10, reflow: at 320 px its five columns overflowed into each other);
    n is how many tables were labelled."""
    def one(m):
        table = m.group(0)
        head = re.search(r'<thead>(.*?)</thead>', table, re.S)
        if not head or 'data-label=' in table:
            return table
        labels = [html.escape(' '.join(html.unescape(re.sub(r'<[^>]+>', '', h)).split()), quote=True)
                  for h in re.findall(r'<th\b[^>]*>(.*?)</th>', head.group(1), re.S)]

        def row(r):
            cells = iter(labels)
            return re.sub(r'<td(?=[\s>])', lambda _: f'<td role="cell" data-label="{next(cells, "")}"',
                          r.group(0)).replace('<tr ', '<tr role="row" ', 1)
        body = re.sub(r'<tr\b[^>]*>.*?</tr>', row, table[head.end():], flags=re.S)
        top = table[:head.end()].replace('<table class="table">', '<table class="table" role="table">', 1)
        top = top.replace('<thead>', '<thead role="rowgroup">', 1).replace('<tr ', '<tr role="row" ', 1)
        top = re.sub(r'<th(?=[\s>])', '<th role="columnheader"', top)
        return top + body.replace('<tbody>', '<tbody role="rowgroup">', 1)
    return TABLE.subn(one, page)


def fix_pages(html_dir=HTML):
    """Apply drop_font_preloads and label_cells to every page of the built book; return
    ``{'font preloads': n, 'tables labelled': n}``."""
    counts = {'font preloads': 0, 'tables labelled': 0}
    for folder, _, files in os.walk(html_dir):
        for name in files:
            if name.endswith('.html'):
                path = os.path.join(folder, name)
                with open(path, encoding='utf-8') as f:
                    page = original = f.read()
                page, n = drop_font_preloads(page)
                counts['font preloads'] += n
                page, n = label_cells(page)
                counts['tables labelled'] += n
                if page != original:
                    with open(path, 'w', encoding='utf-8') as f:
                        f.write(page)
    return counts


def build():
    start = time.perf_counter()
    assets.install()
    mathjax = stage()
    jb = os.path.join(os.path.dirname(sys.executable), 'jupyter-book')
    cmd = [jb if os.path.exists(jb) else 'jupyter-book', 'build', SRC, '--path-output', OUT, '--all']
    shutil.rmtree(HTML, ignore_errors=True)
    run = subprocess.run(cmd, capture_output=True, text=True)
    warnings = [line for line in (run.stdout + run.stderr).splitlines() if 'WARNING' in line or 'ERROR' in line]
    for line in warnings:
        print(line.replace(SRC + os.sep, ''))
    if run.returncode:
        print(run.stdout[-3000:], run.stderr[-3000:], sep='\n')
        sys.exit(f'jupyter-book failed (exit {run.returncode})')
    fix_pages()
    seconds = time.perf_counter() - start
    print(f'book of {len(numbered())} notebooks and {len(solutions())} solutions in '
          f'{os.path.relpath(HTML, ROOT)}/ ({seconds:.1f} s, {len(warnings)} warnings); open '
          f'{os.path.relpath(os.path.join(HTML, "index.html"), ROOT)}')
    print(f'assets: MathJax 3 {mathjax / 2**20:.1f} MB; whole book {assets.size(HTML) / 2**20:.1f} MB')
    return HTML


if __name__ == '__main__':
    build()
