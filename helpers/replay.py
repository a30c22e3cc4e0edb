"""Replay a collective: what every device holds after every step, and the bytes on every link,
recorded from the function itself through its ``send=`` hook (notebook 04; the checks of
:mod:`helpers.lessoncheck` show it when a reader's allreduce goes wrong).

:func:`record` runs an allreduce (or one of its halves) written like notebook 04's -- every
transfer goes through ``send(x, to)`` -- on arrays whose values say where they came from: element
``e`` of device ``d`` holds ``e * 16**k + 16**d`` (float64, exact). A sum of such values still says
which devices' arrays went into it, how many times each, and which element it belongs to, so the
recording can tell, before every transfer and at the end, which *partial sum* of which *chunk* each
device holds ("0+1+3": devices 0, 1 and 3's values added up), and which chunk each message
carries. Consecutive sends in which no device sends twice and none receives twice form one *step*:
the ring of k devices takes 2(k-1) steps of k sends, the naive allreduce one step per send (device 0
receives, then sends, one array at a time).

:class:`Replay` draws it: :meth:`Replay.strip` (one small panel per step, for slides and reports),
:meth:`Replay.animation` (one frame per step as an animated PNG, which plays in JupyterLab, the book
and any browser without JavaScript or the internet, but only when the reader asks: WCAG 2.2.2), and
:meth:`Replay.describe` (the same in words: the text alternative of both). The recording runs on
CPU stand-ins unless given devices.
"""
import base64
import html
import io

import numpy as np
import mxnet as mx

from helpers import checks
from helpers.comm import copy_to
from helpers.split import shard_bounds

__all__ = ['record', 'reference', 'Replay', 'Message', 'holding', 'label']

BASE = 16            # one base-16 digit per device: up to 15 copies of one device's value are told apart
ITEMSIZE = 8         # the recording runs in float64 (exact integers up to 2**53)
MAX_K = 11           # 16**12 * 16 * 12 > 2**53: beyond 11 devices not even one element is exact


def encode(k, size, reduced=False):
    """The recording's input: one float64 NumPy array per device. ``reduced``: device ``i`` already
    holds the finished sum of its chunk ``owner_chunk(i, k)`` (the input of an all-gather)."""
    from helpers.comm import owner_chunk
    positions = np.arange(size, dtype=np.float64) * float(BASE) ** k
    xs = [positions + float(BASE) ** d for d in range(k)]
    if reduced:
        total = k * positions + sum(float(BASE) ** d for d in range(k))
        for i in range(k):
            b, e = shard_bounds(size, k)[owner_chunk(i, k)]
            xs[i][b:e] = total[b:e]
    return xs


def holding(values, k, size):
    """Decode recorded values (notebook 04): ``[(element, counts)]``, ``counts[d]`` = how many times device ``d``'s
    value is in it; ``(None, counts)`` where the element is not one of the array's, ``(None, None)``
    where the value is not a sum of recorded values at all."""
    k, size = checks.whole(k, 'k', 1, MAX_K), checks.whole(size, 'size', 1)
    out = []
    top = float(BASE) ** k
    for v in checks.numeric(values, 'values').astype(np.float64).reshape(-1):
        if not np.isfinite(v) or v < 0 or v != np.floor(v) or v >= 2.0 ** 53:
            out.append((None, None))
            continue
        v = int(v)
        low, rest = v % int(top), v // int(top)
        counts = tuple((low // BASE ** d) % BASE for d in range(k))
        n = sum(counts)
        if n == 0:
            out.append((None, counts))
            continue
        element = rest // n if rest % n == 0 else None
        out.append((element if element is not None and 0 <= element < size else None, counts))
    return out


def label(counts):
    """What a device holds, in words (notebook 04): ``(1, 1, 0, 1)`` -> ``'0+1+3'``; runs of three
    or more as ``'0–3'``; a device counted twice
    appears twice (``'0+1+1'``); ``'nothing'``; ``'?'`` for values that are not where they belong."""
    if counts is None:
        return '?'
    devices = [d for d, c in enumerate(checks.counts(counts, 'counts')) for _ in range(c)]
    if not devices:
        return 'nothing'
    parts, i = [], 0
    while i < len(devices):
        j = i
        while j + 1 < len(devices) and devices[j + 1] == devices[j] + 1:
            j += 1
        parts.append(f'{devices[i]}\u2013{devices[j]}' if j - i >= 2 else '+'.join(map(str, devices[i:j + 1])))
        i = j + 1
    return '+'.join(parts)


class Message:
    """One call of ``send(x, to)`` in a replay (notebook 04): from device ``src`` to device ``dst``,
    ``nbytes`` bytes holding ``counts`` of ``elements`` (a range, or None), which is chunk ``chunk`` (or None);
    ``op`` is 'adds' or 'copies' (what the receiver did with it), found from the next recorded state."""

    def __init__(self, src, dst, nbytes, held, chunks):
        self.src, self.dst, self.nbytes = src, dst, nbytes
        elements = [e for e, _ in held]
        self.counts = held[0][1] if held and all(c == held[0][1] for _, c in held) else None
        self.elements = None
        if None not in elements and elements == list(range(elements[0], elements[0] + len(elements))):
            self.elements = (elements[0], elements[-1] + 1)
        self.chunk = next((c for c, (b, e) in enumerate(chunks) if self.elements == (b, e)), None)
        self.op = None

    @property
    def what(self):
        """``'chunk 2 (0+1)'``, or the elements, when they are not one whole chunk."""
        where = (f'chunk {self.chunk}' if self.chunk is not None else
                 f'elements {self.elements[0]}:{self.elements[1]}' if self.elements else 'mixed elements')
        return f'{where} ({label(self.counts)})'

    def __repr__(self):
        return f'<{self.src}->{self.dst} {self.what} {self.nbytes} B {self.op}>'


class Replay:
    """A recorded collective (:func:`record`, notebook 04): ``states[s][i][c]`` is the label of what device ``i``
    holds in chunk ``c`` after step ``s`` (``states[0]``: before the first step); ``steps[s]`` the
    messages of step ``s + 1``; ``links[s]`` the bytes sent on each link ``(src, dst)`` up to it."""

    def __init__(self, name, k, size, states, steps, error=None):
        self.name, self.k, self.size, self.error = name, k, size, error
        self.chunks = shard_bounds(size, k)
        self.cells = states                   # per state: per device: per element (element, counts)
        self.steps = steps
        self.counts = [[[self._chunk(state[i], c) for c in range(k)] for i in range(k)] for state in states]
        self.states = [[[label(c) for c in row] for row in state] for state in self.counts]
        used = sorted({(m.src, m.dst) for step in steps for m in step})
        self.links = []
        total = dict.fromkeys(used, 0)
        for step in steps:
            for m in step:
                total[(m.src, m.dst)] += m.nbytes
            self.links.append(dict(total))

    def _chunk(self, cells, c):
        """The counts a device holds in chunk ``c`` (``None``: its elements differ or are not its own)."""
        b, e = self.chunks[c]
        part = cells[b:e]
        if all(cnt is not None and sum(cnt) == 0 for _, cnt in part):
            return part[0][1]
        if all(el == b + j and cnt == part[0][1] for j, (el, cnt) in enumerate(part)):
            return part[0][1]
        return None

    @property
    def final(self):
        """What every device holds at the end: ``final[i][c]``."""
        return self.states[-1]

    def complete(self, text):
        """Whether a label is the sum of every device's value, once each."""
        return text == label((1,) * self.k)

    def bytes_per_link(self):
        """``{(src, dst): bytes}`` over the whole run."""
        return dict(self.links[-1]) if self.links else {}

    def describe(self, limit=None):
        """The replay in words, one line per step (the text alternative of its figures)."""
        chunk_words = ', '.join(f'{c}: elements {b}-{e - 1}' for c, (b, e) in enumerate(self.chunks))
        lines = [f'{self.name} on {self.k} devices, {self.size} float64 elements each ({ITEMSIZE} bytes), '
                 f'cut into {self.k} chunks ({chunk_words}). A cell "0+1" holds devices 0 and 1\'s values '
                 f'added up; "{label((1,) * self.k)}" is the finished sum.']
        lines.append('At the start: ' + self._state_words(0))
        for s, step in enumerate(self.steps[:limit], 1):
            sends = '; '.join(f'device {m.src} sends {m.what} to device {m.dst}, which {m.op or "receives"} it '
                              f'({m.nbytes} B)' for m in step)
            lines.append(f'Step {s}: {sends}. After it: {self._state_words(s)}')
        if limit is not None and len(self.steps) > limit:
            lines.append(f'... {len(self.steps) - limit} more steps.')
        if self.steps:
            links = self.bytes_per_link().items()
            lines.append('Bytes per link: ' + ', '.join(f'{a}->{b}: {n} B' for (a, b), n in links) + '.')
        else:
            lines.append('No transfer went through send().')
        if self.error:
            lines.append(f'The function stopped with {self.error}.')
        return '\n'.join(lines)

    def _state_words(self, s):
        return '; '.join(f'device {i} holds ' + ', '.join(self.states[s][i]) for i in range(self.k))

    # ------------------------------------------------------------------ drawing

    def _draw(self, ax, s, fontsize=10, title=None):
        """Draw state ``s`` (after step ``s``) and the sends of step ``s`` into ``ax``: a row per
        device, a column per chunk, and to the right of each column a lane for the arrows."""
        import matplotlib.patches as patches
        k, width = self.k, 0.7
        ax.set_xlim(-0.9, k + 0.35)
        ax.set_ylim(k, -0.55)
        ax.axis('off')
        ax.text(-0.1, -0.25, 'chunk', ha='right', va='center', fontsize=fontsize)
        for c in range(k):
            ax.text(c + width / 2, -0.25, str(c), ha='center', va='center', fontsize=fontsize)
        for i in range(k):
            ax.text(-0.1, i + 0.5, f'dev {i}', ha='right', va='center', fontsize=fontsize)
            for c in range(k):
                counts = self.counts[s][i][c]
                done = counts == (1,) * k
                wrong = counts is None or max(counts) > 1
                face = '#1b7837' if done else '#f4cccc' if wrong else shade(sum(x > 0 for x in counts) / k)
                ax.add_patch(patches.Rectangle((c, i + 0.06), width, 0.88, facecolor=face, edgecolor='black',
                                               lw=0.8, hatch='//' if wrong else None))
                text = self.states[s][i][c]
                ax.text(c + width / 2, i + 0.5, 'none' if text == 'nothing' else _two_lines(text), ha='center',
                        va='center', fontsize=fontsize, linespacing=0.85,
                        color='white' if done else 'black', fontweight='bold' if done else 'normal')
        if s >= 1:
            for m in self.steps[s - 1]:
                if m.chunk is not None:
                    x = m.chunk + width + (1 - width) / 2
                else:
                    x = k + 0.15
                if 0 <= m.src < k and 0 <= m.dst < k:
                    ax.annotate('', xy=(x, m.dst + 0.5), xytext=(x, m.src + 0.5),
                                arrowprops=dict(arrowstyle='-|>', lw=2, color='#b2182b', shrinkA=2, shrinkB=2))
        ax.set_title(title if title is not None else self._title(s), fontsize=fontsize + 1)

    def _title(self, s):
        if s == 0:
            return 'start'
        step = self.steps[s - 1]
        ops = {m.op for m in step}
        what = ops.pop() if len(ops) == 1 and None not in ops else 'sends'
        return f'step {s}: {len(step)} send{"s" * (len(step) > 1)}, {what}'

    def strip(self, cols=3, panel=(3.0, 2.4), fontsize=10):
        """One panel per state (the start and after every step; red arrows: that step's sends) and
        a last panel of bytes per link: a static figure for slides and reports."""
        import matplotlib.pyplot as plt
        n = len(self.states) + 1
        cols = min(cols, n)
        rows = -(-n // cols)
        fig, axes = plt.subplots(rows, cols, figsize=(panel[0] * cols, panel[1] * rows), squeeze=False)
        for s in range(len(self.states)):
            self._draw(axes.flat[s], s, fontsize)
        self._draw_links(axes.flat[len(self.states)], len(self.steps), fontsize, highlight=False)
        for ax in list(axes.flat)[n:]:
            ax.axis('off')
        fig.suptitle(f'{self.name}: what each device holds, step by step ({self.k} devices; the finished sum, '
                     f'"{label((1,) * self.k)}", in bold on green)', fontsize=fontsize + 2)
        fig.tight_layout()
        return fig

    def _draw_links(self, ax, s, fontsize=10, highlight=True):
        links = self.links[s - 1] if s >= 1 and self.links else {}
        if not self.links:
            ax.axis('off')
            ax.text(0.5, 0.5, 'no transfer went\nthrough send()', ha='center', va='center', fontsize=fontsize,
                    transform=ax.transAxes)
            return
        names = [f'{a}->{b}' for a, b in self.links[-1]]
        now = [links.get(key, 0) for key in self.links[-1]]
        step = [sum(m.nbytes for m in self.steps[s - 1] if (m.src, m.dst) == key) if s >= 1 and highlight
                else 0 for key in self.links[-1]]
        y = np.arange(len(names))
        ax.barh(y, now, color='#d9d9d9', edgecolor='black', label='before')
        ax.barh(y, step, left=[a - b for a, b in zip(now, step)], color='#b2182b', edgecolor='black',
                hatch='//', label='this step')
        ax.set_yticks(y, names, fontsize=fontsize)
        ax.invert_yaxis()
        ax.set_xlim(0, max(self.links[-1].values()) * 1.05 or 1)
        ax.set_xlabel('bytes sent on the link', fontsize=fontsize)
        ax.tick_params(labelsize=fontsize)
        ax.set_title('bytes per link', fontsize=fontsize + 1)

    def animation(self, fontsize=11, seconds_per_step=1.5, dpi=72):
        """One frame per step (the grid and the bytes per link so far) as an animated PNG inside HTML,
        with its text alternative (``alt`` and a collapsed description of every step): it plays
        offline in JupyterLab, the book and any browser, without JavaScript. It does not move by
        itself (WCAG 2.2.2, pause, stop, hide): the page shows the last frame, still, and the
        animation is behind a control (a closed ``<details>``, "Play the replay"); opened, it plays
        once and stops on the last frame, and closing it hides it. Where the reader's system asks
        for reduced motion (``prefers-reduced-motion``), the control shows every frame at once, one
        under the other, instead (in the book and any browser; JupyterLab's HTML sanitizer removes
        the ``<picture>`` that chooses, so there it plays, once, when asked). Display it with
        ``IPython.display.display(replay.animation())``."""
        from PIL import Image
        import matplotlib.pyplot as plt
        frames = []
        for s in range(len(self.states)):
            fig, (grid, bars) = plt.subplots(1, 2, figsize=(4 + 1.0 * self.k, 1.2 + 0.55 * self.k),
                                             gridspec_kw={'width_ratios': [self.k + 0.8, 3]})
            self._draw(grid, s, fontsize)
            self._draw_links(bars, s, fontsize)
            fig.suptitle(f'{self.name} on {self.k} devices', fontsize=fontsize + 1)
            fig.tight_layout()
            buf = io.BytesIO()
            fig.savefig(buf, format='png', dpi=dpi)
            plt.close(fig)
            frames.append(Image.open(io.BytesIO(buf.getvalue())).convert('RGB'))
        # One palette of 256 colours for every frame (the figures are flat colours: a third of the bytes)
        sheet = _stacked(frames).quantize(256)
        frames = [f.quantize(palette=sheet, dither=Image.Dither.NONE) for f in frames]
        out = io.BytesIO()
        durations = [int(seconds_per_step * 1000)] * len(frames)
        durations[0] = durations[-1] = int(seconds_per_step * 2000)      # linger on the start and the end
        # loop=1: an APNG's num_plays, played once (0 would loop for ever); one frame is no animation
        frames[0].save(out, format='PNG', save_all=len(frames) > 1, append_images=frames[1:], duration=durations,
                       loop=1)
        return Animation(out.getvalue(), self.alt(), self.describe(), still=_png(frames[-1]), steps=_png(sheet),
                         frames=len(frames), seconds=sum(durations) / 1000)

    def alt(self):
        """One sentence for the figures' ``alt``: what is drawn and how it ends."""
        done = sum(self.complete(x) for row in self.final for x in row)
        ends = ('every device ends with the finished sum of every chunk' if done == self.k * self.k else
                f'it ends with {done} of {self.k * self.k} device-chunks holding the finished sum')
        total = sum(self.bytes_per_link().values())
        return (f'{self.name} replayed on {self.k} devices, step by step: a grid of devices by chunks, each '
                f'cell naming whose values it holds, arrows for the sends of each step, and the bytes on each '
                f'link; {len(self.steps)} steps, {total} bytes in all; {ends}')

    def show(self, **kwargs):
        """Show :meth:`strip` with its text alternative (``helpers.plot.show``)."""
        from helpers import plot
        plot.show(alt=self.alt(), fig=self.strip(**kwargs))


def _two_lines(text):
    """A label longer than four characters on two lines, cut before the '+' nearest its middle
    (``'0+2+3'`` -> ``'0+2\n+3'``): it fits its cell at the strip's full font size."""
    cuts = [i for i, ch in enumerate(text) if ch == '+']
    if len(text) <= 4 or not cuts:
        return text
    cut = min(cuts, key=lambda i: abs(i - len(text) / 2))
    return text[:cut] + '\n' + text[cut:]


def shade(fraction):
    """A light-to-medium blue for a partial sum of ``fraction`` of the devices (the finished sum is
    green, a wrong one red and hatched)."""
    low, high = np.array([1.0, 1.0, 1.0]), np.array([0.57, 0.77, 0.87])
    return tuple(low + (high - low) * min(max(fraction, 0), 1))


def _png(image):
    out = io.BytesIO()
    image.save(out, format='PNG')
    return out.getvalue()


def _stacked(frames, gap=8):
    """The frames one under the other, on white: the animation, still (for reduced motion)."""
    from PIL import Image
    width = max(f.width for f in frames)
    sheet = Image.new('RGB', (width, sum(f.height for f in frames) + gap * (len(frames) - 1)), 'white')
    y = 0
    for frame in frames:
        sheet.paste(frame, (0, y))
        y += frame.height + gap
    return sheet


def _data(png):
    return 'data:image/png;base64,' + base64.b64encode(png).decode('ascii')


class Animation:
    """An animated PNG with its text alternative; Jupyter shows it as HTML, and as the text alone
    where HTML is not shown. The HTML shows ``still`` (the last frame) and, behind a closed
    ``<details>``, the animation (``png``, played once) -- or, where the reader asks for reduced
    motion, ``steps`` (every frame, one under the other) -- then the steps in words under a second
    ``<details>`` (:meth:`Replay.animation`)."""

    def __init__(self, png, alt, description, still=None, steps=None, frames=None, seconds=None):
        self.png, self.alt, self.description = png, alt, description
        self.still, self.steps, self.frames, self.seconds = still, steps, frames, seconds

    def _repr_mimebundle_(self, include=None, exclude=None):
        alt = html.escape(self.alt)
        steps = ''.join(f'<li>{html.escape(line)}</li>' for line in self.description.splitlines())
        frames = f'{self.frames} frames, one per step' if self.frames else 'one frame per step'
        length = f', about {self.seconds:.0f} s' if self.seconds else ''
        still = (f'<img alt="{html.escape(f"The end of the replay. {self.alt}")}" src="{_data(self.still)}">'
                 if self.still else '')
        reduced = (f'<source media="(prefers-reduced-motion: reduce)" srcset="{_data(self.steps)}">'
                   if self.steps else '')
        page = (f'<figure class="replay">{still}'
                f'<details class="replay-play"><summary>Play the replay: {frames}, '
                f'played once{length} (all at once where the system asks for reduced motion)</summary>'
                f'<picture>{reduced}<img alt="{alt}" src="{_data(self.png)}"></picture></details>'
                f'<details><summary>The steps in words</summary><ol>{steps}</ol></details></figure>')
        return {'text/html': page, 'text/plain': self.alt}

    def __repr__(self):
        return self.alt


def record(fn, k=4, size=None, devices=None, reduced=False, name=None):
    """Run ``fn(arrays, send=...)`` -- an allreduce, a reduce-scatter or an all-gather written like
    notebook 04's -- on ``k`` recording arrays of ``size`` elements (default ``2 k``) and return its
    :class:`Replay`. ``reduced``: start from the state a reduce-scatter leaves (for an all-gather).
    An exception inside ``fn`` ends the recording; the replay keeps the steps before it (``error``)."""
    fn, k = checks.function(fn, 'fn'), checks.whole(k, 'k', 1, MAX_K)
    size = checks.whole(2 * k if size is None else size, 'size', 1)
    if not 16 ** k * size * 16 * k < 2 ** 53:
        raise ValueError(f'size: a replay of {k} devices can show at most {2 ** 53 // (16 ** (k + 1) * k)} '
                         f'elements, got {size}')
    checks.fits(4 * ITEMSIZE * k * size, f'a replay of {k} arrays of size {size}')   # arrays, copies, snapshots
    reduced, name = checks.flag(reduced, 'reduced'), None if name is None else checks.text(name, 'name')
    devices = checks.devices([mx.cpu(i) for i in range(k)] if devices is None else devices)
    if len(devices) != k:
        raise ValueError(f'got {len(devices)} devices for k={k}')
    index = {d: i for i, d in enumerate(devices)}
    arrays = [mx.nd.array(x, ctx=d, dtype='float64') for x, d in zip(encode(k, size, reduced), devices)]
    chunks = shard_bounds(size, k)
    snapshot = lambda: [holding(a.asnumpy(), k, size) for a in arrays]
    states, messages = [], []

    def send(x, to):
        before = snapshot()
        dst = index.get(to if isinstance(to, mx.Context) else to.context, -1)
        messages.append((before, Message(index.get(x.context, -1), dst, x.size * ITEMSIZE,
                                         holding(x.asnumpy(), k, size), chunks)))
        return copy_to(x, to)

    error = None
    try:
        fn(arrays, send=send)
    except Exception as e:            # the replay shows how far it got
        error = f'{type(e).__name__}: {e}'.splitlines()[0][:200]
    end = snapshot()
    steps, current, senders, received = [], [], set(), {}
    states = [messages[0][0] if messages else end]
    for before, m in messages:        # a step: no device sends twice, none receives twice, none forwards
        forwards = any(m.elements is None or r is None or (r[0] < m.elements[1] and m.elements[0] < r[1])
                       for r in received.get(m.src, []))
        if current and (m.src in senders or m.dst in received or forwards):
            steps.append(current)
            states.append(before)
            current, senders, received = [], set(), {}
        current.append(m)
        senders.add(m.src)
        received.setdefault(m.dst, []).append(m.elements)
    if current:
        steps.append(current)
        states.append(end)
    befores = {id(m): before for before, m in messages}
    for step, after in zip(steps, states[1:]):      # what each receiver did, seen when the step is over
        for m in step:
            if 0 <= m.dst < k and m.elements and m.counts is not None:
                b, e = m.elements
                new = [c for _, c in after[m.dst][b:e]]
                old = [c for _, c in befores[id(m)][m.dst][b:e]]
                if all(o is not None and n == tuple(x + y for x, y in zip(o, m.counts)) for o, n in zip(old, new)):
                    m.op = 'adds'
                elif all(n == m.counts for n in new):
                    m.op = 'copies'
    return Replay(name or getattr(fn, '__name__', 'collective'), k, size, states, steps, error)


def reference(name, k=4, size=None):
    """The replay of notebook 04's own function ``name`` ('allreduce_ring', 'allreduce_naive',
    'reduce_scatter' or 'all_gather') on the same recording arrays."""
    from helpers import comm
    checks.choice(name, 'name', ('allreduce_ring', 'allreduce_naive', 'reduce_scatter', 'all_gather'))
    return record(getattr(comm, name), k, size, reduced=name == 'all_gather', name=name)
