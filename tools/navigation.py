"""Write the series' navigation: the contents notebook, previous/contents/next links at the top and
bottom of every notebook, and the notebook table of the README -- all from the notebooks' own titles.

Each numbered notebook starts with a markdown cell ``# NN · Title`` followed by a paragraph that
begins ``**The one idea:**``; that title and that sentence are all this tool reads. It writes:

* ``notebooks/contents.ipynb`` (markdown only): how to read the series and one line per notebook;
* in every numbered notebook, a markdown cell tagged ``nav`` right after the title and one at the
  very end (previous · contents · next, and the worked solutions when they exist);
* in every ``notebooks/solutions/NN-*-solutions.ipynb``, the same two cells pointing back;
* when the closing page ``notebooks/where-next.ipynb`` exists (``# Title`` and ``**The one idea:**``,
  markdown only): a "Where next ›" link in the last numbered notebook's navigation cells, a section
  for it on the contents page, and the same two cells in it (back to the last notebook, contents);
* the table between ``<!-- notebooks:start -->`` and ``<!-- notebooks:end -->`` in README.md;
* the lecture plan between ``<!-- lectures:start -->`` and ``<!-- lectures:end -->`` in README.md:
  :data:`LECTURES` groups the notebooks, the screens are counted in their decks
  (``tools.cell_metadata.screens``), so the plan follows every change to a notebook.

    python -m tools.navigation            # write all of it (``make navigation``)
    python -m tools.navigation --check    # exit 1 if anything would change (the hygiene test)

Navigation cells are markdown: adding or updating them never changes a code cell or an output.
"""
import os
import sys

import nbformat

from tools import cell_metadata, nb as nbtools
from tools.nb import CONTENTS, NOTEBOOKS, README, ROOT, closing, numbered, solutions_of, title_and_idea

START, END = '<!-- notebooks:start -->', '<!-- notebooks:end -->'
LECTURES_START, LECTURES_END = '<!-- lectures:start -->', '<!-- lectures:end -->'

# The lecture plan: which notebooks one lecture presents (by number; 'where-next' is the closing
# page). Editorial; the screens and minutes are counted. A lecture is 90 minutes, a screen 2.5
# minutes with the room's questions (docs/maintainers.md), so at most 36 screens a lecture.
LECTURES = [('00', '01'), ('02', '03'), ('04',), ('05',), ('06',), ('07',), ('08',), ('09',), ('10',), ('11',),
            ('12',), ('13', 'where-next')]
MINUTES_PER_SCREEN = 2.5

INTRO = """\
# Data-parallel training from scratch with MXNet

One model, many devices, each device working on its own slice of every batch: this series builds
data-parallel training from the ground up with Apache MXNet 1.9 and Gluon. You write the pieces
yourself -- splitting a batch, summing gradients across devices, the training step -- then meet the
framework's versions of them (Gluon's `Trainer`, MXNet's KVStore) and finally train across machines
with MXNet's parameter server.

**How to read it.** In order, one idea per notebook. Every notebook runs on any machine: on a GPU
machine it uses every GPU; without GPUs it uses CPU "stand-in" devices `cpu(0)`, `cpu(1)`, ... and
says so in its output (`MXDP_DEVICES=cpu:4 make lab` runs the series with four stand-ins).

* Cells that *define* a function you are learning are yours to edit: change one, run it, and run
  the cells below it -- they use your version. (The same text is in `helpers/`, which later
  notebooks import, so your edits stay in this notebook.)
* **Predict, then run**: before a result that may surprise you, the notebook asks what you expect.
  Write your guess down first.
* Each notebook ends with a summary and exercises; worked solutions are in `solutions/`.
"""


def _link(path, here):
    number, title, _ = title_and_idea(path)
    return f'{number} · {title}', os.path.relpath(path, os.path.dirname(here))


def nav_text(path, position):
    """The markdown of the top (``position='top'``) or bottom navigation cell of a notebook."""
    paths = numbered()
    contents = os.path.relpath(CONTENTS, os.path.dirname(path))
    if os.path.dirname(path) != NOTEBOOKS:            # a solutions notebook: back to its lesson
        stem = os.path.basename(path)[:-len('-solutions.ipynb')]
        name, rel = _link(os.path.join(NOTEBOOKS, stem + '.ipynb'), path)
        return f'[‹ back to {name}]({rel}) · [Contents]({contents})'
    if path == closing():                             # the closing page: back to the last notebook
        name, rel = _link(paths[-1], path)
        return f'[‹ {name}]({rel}) · [Contents]({contents})'
    i = paths.index(path)
    parts = []
    if i > 0:
        name, rel = _link(paths[i - 1], path)
        parts.append(f'[‹ {name}]({rel})')
    parts.append(f'[Contents]({contents})')
    if i + 1 < len(paths):
        name, rel = _link(paths[i + 1], path)
        parts.append(f'[{name} ›]({rel})')
    elif closing():
        parts.append(f'[Where next ›]({os.path.relpath(closing(), os.path.dirname(path))})')
    text = ' · '.join(parts)
    solutions = solutions_of(path)
    if position == 'bottom' and solutions:
        text += f'  \nWorked solutions to the exercises: [{os.path.relpath(solutions, NOTEBOOKS)}]' \
                f'({os.path.relpath(solutions, os.path.dirname(path))})'
    return text


def _nav_cell(text, position):
    cell = nbformat.v4.new_markdown_cell(text)
    cell.id = f'nav-{position}'   # fixed, not random: --check compares whole files
    cell.metadata['tags'] = ['nav']
    return cell


def _is_nav(cell):
    return cell.cell_type == 'markdown' and 'nav' in cell.metadata.get('tags', [])


def with_navigation(path):
    """The notebook with exactly one nav cell after the title and one at the end (others removed)."""
    nb = nbtools.read(path)
    body = [c for c in nb.cells if not _is_nav(c)]
    nb.cells = (body[:1] + [_nav_cell(nav_text(path, 'top'), 'top')] + body[1:]
                + [_nav_cell(nav_text(path, 'bottom'), 'bottom')])
    return nb


def contents_notebook():
    lines = [INTRO, '## The notebooks', '', '| # | notebook | the one idea |', '|---|---|---|']
    for path in numbered():
        number, title, idea = title_and_idea(path)
        lines.append(f'| {number} | [{title}]({os.path.basename(path)}) | {idea} |')
    if closing():
        title, idea = nbtools.page_title_and_idea(closing())
        lines += ['', f'## {title}', '', f'[{title}]({os.path.basename(closing())}): {idea}']
    solved = [p for p in numbered() if solutions_of(p)]
    if solved:
        lines += ['', '## Worked solutions', '']
        for path in solved:
            number, title, _ = title_and_idea(path)
            rel = os.path.relpath(solutions_of(path), NOTEBOOKS)
            lines.append(f'* [{number} · {title}]({rel})')
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell('\n'.join(lines).strip())]
    nb.cells[0].id = 'contents'
    nb.metadata['kernelspec'] = dict(nbtools.KERNELSPEC)
    return nb


def readme_table():
    rows = ['| # | notebook | the one idea |', '|---|---|---|']
    for path in numbered():
        number, title, idea = title_and_idea(path)
        rel = os.path.relpath(path, ROOT)
        rows.append(f'| {number} | [{title}]({rel}) | {idea} |')
    return '\n'.join(rows)


def lecture_plan():
    """The README's lecture plan: one row per lecture of :data:`LECTURES`, its notebooks, their
    screens in the decks and the minutes they take at :data:`MINUTES_PER_SCREEN`."""
    paths = {title_and_idea(p)[0]: p for p in numbered()}
    if closing():
        paths['where-next'] = closing()
    planned_ = [n for lecture in LECTURES for n in lecture]
    missing = sorted(set(paths) - set(planned_))
    if missing or len(planned_) != len(set(planned_)) or not set(planned_) <= set(paths):
        raise ValueError(f'LECTURES must name every notebook once: missing {missing}, '
                         f'unknown {sorted(set(planned_) - set(paths))}')
    rows = ['| lecture | notebooks | deck screens | minutes |', '|---|---|---|---|']
    for i, lecture in enumerate(LECTURES, 1):
        screens = sum(cell_metadata.screens(nbtools.read(paths[n])) for n in lecture)
        names = ', '.join(f'[{_short_title(n, paths[n])}]({os.path.relpath(paths[n], ROOT)})' for n in lecture)
        rows.append(f'| {i} | {names} | {screens} | {screens * MINUTES_PER_SCREEN:.0f} |')
    return '\n'.join(rows)


def _short_title(number, path):
    """'04 · Allreduce by hand' for a numbered notebook; the closing page's own title."""
    if path == closing():
        return nbtools.read(path).cells[0].source.splitlines()[0].lstrip('# ').strip()
    return f'{number} · {title_and_idea(path)[1]}'


def _between(text, start, end, body):
    """``text`` with what stands between the markers ``start`` and ``end`` replaced by ``body``."""
    if start not in text or end not in text:
        return text
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f'{head}{start}\n{body}\n{end}{tail}'


def planned():
    """``{path: new text}`` of every file whose navigation is not what it should be."""
    out = {}
    targets = numbered() + nbtools.solutions() + ([closing()] if closing() else [])
    for path in targets:
        text = nbformat.writes(with_navigation(path)) + '\n'
        with open(path) as f:
            if f.read() != text:
                out[path] = text
    text = nbformat.writes(contents_notebook()) + '\n'
    if not os.path.exists(CONTENTS) or open(CONTENTS).read() != text:
        out[CONTENTS] = text
    with open(README) as f:
        readme = f.read()
    new = _between(_between(readme, START, END, readme_table()), LECTURES_START, LECTURES_END, lecture_plan())
    if new != readme:
        out[README] = new
    return out


def main(argv):
    changes = planned()
    for path, text in changes.items():
        if '--check' in argv:
            print(f'{nbtools.rel(path)}: navigation out of date (run make navigation)')
        else:
            with open(path, 'w') as f:
                f.write(text)
            print(f'wrote {nbtools.rel(path)}')
    return 1 if changes and '--check' in argv else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
