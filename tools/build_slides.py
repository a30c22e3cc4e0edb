"""Build one reveal.js deck per numbered notebook, and an index page, into build/slides/ (``make slides``).

    python -m tools.build_slides     # -> build/slides/index.html, build/slides/notebooks/NN-*.slides.html

The decks are the committed, executed notebooks (nothing is re-executed), cut into slides by their
``metadata.slideshow`` (written by tools.cell_metadata). Everything a deck loads is in build/slides/:
reveal.js, MathJax, require.js and jQuery (pinned in tools/web/package.json, see tools/web/assets.py)
and the diagrams of img/, at the same relative path (``../img/``) as from notebooks/. So the folder
works from a ``file://`` URL, copied to a USB stick, with no network at all.

In the deck (not in the notebooks): navigation cells (tag ``nav``) and *Under the hood* asides
(tag ``aside``: internals are for reading, not for the lecture) are dropped, links between
notebooks point to the decks, a code cell tagged ``slide-hide-input`` shows its outputs without its
code (a plotting cell: the figure, not the plotting code), and code cells have no ``In [n]:`` prompt
(the code box gets the slide's full width). How a deck fits a screen (code font, long outputs,
diagrams, scrolling, linear navigation, maths in the speaker notes) is in its template,
tools/web/templates/reveal-offline/index.html.j2.
"""
import html
import os
import re
import shutil
import sys
import time

import nbformat
from nbconvert import SlidesExporter
from traitlets.config import Config

from tools import cell_metadata as slides
from tools import nb as nbtools
from tools.web import assets

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = nbtools.ROOT
OUT = os.path.join(ROOT, 'build', 'slides')
NOTEBOOKS = nbtools.NOTEBOOKS


def exporter():
    c = Config()
    c.SlidesExporter.reveal_url_prefix = '../assets/reveal.js'
    c.SlidesExporter.reveal_theme = assets.REVEAL_THEME
    c.SlidesExporter.reveal_number = 'c/t'
    c.SlidesExporter.reveal_scroll = True          # a slide taller than the screen scrolls
    c.HTMLExporter.mathjax_url = '../assets/mathjax/' + assets.MATHJAX2_URL
    c.HTMLExporter.require_js_url = '../assets/require.js'
    c.HTMLExporter.jquery_url = '../assets/jquery.min.js'
    c.HTMLExporter.exclude_anchor_links = True
    c.TemplateExporter.exclude_input_prompt = True      # the code box gets the prompts' 110 px
    c.TemplateExporter.exclude_output_prompt = True
    c.TagRemovePreprocessor.remove_input_tags = {slides.HIDE_INPUT}
    c.TemplateExporter.extra_template_basedirs = [os.path.join(HERE, 'web', 'templates')]
    c.TemplateExporter.template_name = 'reveal-offline'
    return SlidesExporter(config=c)


def deck_notebook(path, decks):
    """The notebook as the deck shows it: no navigation cells, markdown cut at its headings (each
    heading starts a slide, see tools.cell_metadata), links to other decks."""
    nb = nbtools.read(path)
    cells = []
    for cell in nb.cells:
        kind = cell.metadata.get('slideshow', {}).get('slide_type')
        if {nbtools.NAV, nbtools.ASIDE} & nbtools.tags(cell):
            continue
        parts = slides.split_at_headings(cell.source) if cell.cell_type == 'markdown' else []
        if len(parts) > 1 and kind not in ('skip', 'notes'):
            cell.source = parts[0]
            cells.append(cell)
            cells += [nbformat.v4.new_markdown_cell(part, metadata={
                'slideshow': {'slide_type': slides.heading_slide_type(part)}}) for part in parts[1:]]
        else:
            cells.append(cell)
    nb.cells = cells

    def link(m):
        stem = m.group(1)
        return f']({stem}.slides.html{m.group(2) or ""})' if stem in decks else m.group(0)
    for cell in nb.cells:
        if cell.cell_type == 'markdown':
            cell.source = re.sub(r'\]\((\d\d-[^)#\s/]+)\.ipynb(#[^)\s]*)?\)', link, cell.source)
    return nb


def _inline(text):
    """Escaped text with its `code` spans as <code>."""
    return re.sub(r'`([^`]+)`', r'<code>\1</code>', html.escape(text))


INDEX = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}: slides</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 52em; margin: 2em auto; padding: 0 1em; line-height: 1.5; }}
li {{ margin: 0.6em 0; }} .idea {{ color: #555; }}
kbd {{ border: 1px solid #bbb; border-radius: 3px; padding: 0 .3em; }}
</style></head>
<body>
<h1>{title}</h1>
<p>One deck per notebook, made from the executed notebooks. Everything is in this folder: it works
offline, from a <code>file://</code> URL.</p>
<ol start="0" class="decks">
{items}
</ol>
<p><kbd>→</kbd>, <kbd>Space</kbd>, <kbd>PageDown</kbd> or <kbd>↓</kbd> next (every slide, in order),
<kbd>←</kbd> or <kbd>↑</kbd> back, <kbd>Esc</kbd> overview, <kbd>S</kbd> speaker notes (a second window),
<kbd>F</kbd> full screen. A slide taller than the screen scrolls; so does an output taller than its slide.</p>
</body></html>
"""


def build(out=OUT):
    start = time.perf_counter()
    assets.install()
    paths = nbtools.numbered()
    drift = slides.stale(paths)
    for p in drift:
        print(f'warning: {nbtools.rel(p)}: cell metadata not current (run make metadata)')
    tmp = out + '.tmp'
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.join(tmp, 'notebooks'))
    sizes = {
        'reveal.js': assets.copy_reveal(os.path.join(tmp, 'assets', 'reveal.js')),
        'MathJax 2': assets.copy_mathjax2(os.path.join(tmp, 'assets', 'mathjax')),
        'require.js': assets.copy_file('requirejs', 'require.js', os.path.join(tmp, 'assets', 'require.js')),
        'jQuery': assets.copy_file('jquery', 'dist/jquery.min.js', os.path.join(tmp, 'assets', 'jquery.min.js')),
    }
    shutil.copytree(os.path.join(ROOT, 'img'), os.path.join(tmp, 'img'),
                    ignore=shutil.ignore_patterns('*.py', '__pycache__'))
    decks = {os.path.basename(p)[:-len('.ipynb')] for p in paths}
    ex, items = exporter(), []
    for path in paths:
        stem = os.path.basename(path)[:-len('.ipynb')]
        number, title, idea = nbtools.title_and_idea(path, strict=False)
        body, _ = ex.from_notebook_node(
            deck_notebook(path, decks),
            resources={'metadata': {'name': f'{number} · {title}', 'path': NOTEBOOKS}})
        with open(os.path.join(tmp, 'notebooks', stem + '.slides.html'), 'w') as f:
            f.write(body)
        items.append(f'<li><a href="notebooks/{stem}.slides.html">{number} · '
                     f'{_inline(title)}</a><br><span class="idea">{_inline(idea)}</span></li>')
    with open(os.path.join(tmp, 'index.html'), 'w') as f:
        f.write(INDEX.format(title='Data-parallel training from scratch with MXNet', items='\n'.join(items)))
    shutil.rmtree(out, ignore_errors=True)
    os.rename(tmp, out)
    seconds = time.perf_counter() - start
    print(f'{len(paths)} decks in {os.path.relpath(out, ROOT)}/ ({seconds:.1f} s); open '
          f'{os.path.relpath(os.path.join(out, "index.html"), ROOT)}')
    print('assets: ' + ', '.join(f'{k} {v / 2**20:.1f} MB' for k, v in sizes.items())
          + f'; whole folder {assets.size(out) / 2**20:.1f} MB')
    return out


if __name__ == '__main__':
    build()
    sys.exit(0)
