"""WCAG 2.1 AA in a real browser (docs/accessibility.md): axe-core over every page of the book and
every slide of every deck, the keyboard alone, the page language, maths for screen readers, and
every figure's text alternative where the reader meets it.

axe-core is pinned in tools/web/package.json with the other web assets and injected from disk
(build/web/node_modules/axe-core/axe.min.js): nothing leaves the machine. It runs with the rules
tagged wcag2a, wcag2aa, wcag21a and wcag21aa, and it checks what is shown: so the deck is stepped
through, slide by slide, and each slide checked while it is on screen. A violation fails the test
unless docs/accessibility.md lists its rule under "Known violations" (with why the theme cannot fix
it and what the reader can do); a listed rule that no longer occurs fails too, so the list stays
exact. Each test prints its violations per rule and how long it took."""
import collections
import glob
import html.parser
import os
import re
import time

import pytest

from conftest import ROOT
from test_browser import (SLIDE_ORDER, NUMBERED, Traffic, _deck, _make, _open_deck, _shoot, browser,  # noqa: F401
                          showcase)

from tools import alt_text
from tools.web import assets

sync_api = pytest.importorskip('playwright.sync_api', reason='playwright is not installed (make setup)')

TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']
BOOK = os.path.join(ROOT, 'build', 'book', '_build', 'html')
STATEMENT = os.path.join(ROOT, 'docs', 'accessibility.md')

# Highlighted code, checked here rather than by axe's color-contrast rule: each token's colour against
# the background behind it, in axe-core's own colour arithmetic (axe.commons.color: its parsing,
# compositing and WCAG 2.1 contrast ratio) and with its thresholds (4.5:1; 3:1 for large text), then
# the rule is told to pass over the tokens so checked. axe works out what lies behind every text
# element from the page's layout, and on a book page the code's tokens are some 1,600 of its 1,800
# text elements: checking them here halves the time of the rule, most of axe's time on the book.
# A token (an element of a block's <pre> with text of its own) is checked here only where that
# arithmetic is what axe computes: on the token and every ancestor up to the page's root nothing is
# translucent, filtered, blended, painted by ::before or ::after or has a background image, and the
# token has no text shadow or stroke and is filled with its colour; the colour behind it is then the
# backgrounds of the token and of its ancestors, composited up to the first opaque one (the canvas,
# white, behind them all), which assumes nothing positioned lies under or over the code (the series'
# blocks have only their copy button, which axe checks). Every other token, and everything else in a
# block, stays with axe. Stricter than axe: CODE also checks what axe leaves aside or only marks for
# review (a token hidden, scrolled out of view or covered, one character long, or punctuation only).
# test_the_code_check_finds_what_axe_finds shows the two find the same low-contrast tokens.
# Returns the violations found, as AXE does; counts the tokens checked and left in window.mxdpCode.
CODE = """(root) => {
    const C = axe.commons.color, style = new Map(), plain = new Map();
    const css = e => style.get(e) || style.set(e, getComputedStyle(e)).get(e);
    const painted = (e, pseudo) => {       // a ::before or ::after with a background (as axe looks for)
        const q = getComputedStyle(e, pseudo), c = new C.Color();
        c.parseString(q.backgroundColor);
        return !['none', 'normal'].includes(q.content) && (c.alpha > 0 || q.backgroundImage !== 'none');
    };
    const alone = e => {            // e and every ancestor: opaque, unfiltered, unblended, nothing else painted
        if (!e) return true;
        if (!plain.has(e)) {
            const s = css(e);
            plain.set(e, s.opacity === '1' && s.filter === 'none' && s.mixBlendMode === 'normal'
                      && s.backgroundImage === 'none' && !painted(e, '::before') && !painted(e, '::after')
                      && alone(e.parentElement));
        }
        return plain.get(e);
    };
    const below = new Map(), white = new C.Color(255, 255, 255, 1);
    const behind = e => {           // e's background over its ancestors', down to the first opaque one
        if (!e) return white;       // the canvas
        if (!below.has(e)) {
            const c = new C.Color(); c.parseString(css(e).backgroundColor);
            below.set(e, c.alpha === 1 ? c : c.alpha === 0 ? behind(e.parentElement)
                                                           : C.flattenColors(c, behind(e.parentElement)));
        }
        return below.get(e);
    };
    const out = [], seen = window.mxdpCode = window.mxdpCode || {tokens: 0, left: 0};
    window.mxdpChecked = new WeakSet();         // this run's: axe checks whatever a later run leaves it
    window.mxdpBad = new Set();
    const tokens = [...root.querySelectorAll('.highlight pre, .highlight pre *')].filter(e => [...e.childNodes].some(
        n => n.nodeType === Node.TEXT_NODE && n.textContent.trim()));
    for (const e of tokens) {
        const s = css(e);
        if (!alone(e) || s.textShadow !== 'none' || parseFloat(s.webkitTextStrokeWidth) > 0
                || s.webkitTextFillColor !== s.color) {
            seen.left += 1;                 // left to axe
            continue;
        }
        const fg = new C.Color(); fg.parseString(s.color);
        const bg = behind(e), ratio = C.getContrast(bg, fg);
        const bold = parseFloat(s.fontWeight) >= 700 || s.fontWeight === 'bold';
        const pt = Math.ceil(parseFloat(s.fontSize) * 72) / 96;
        const expected = (bold && pt < 14) || (!bold && pt < 18) ? 4.5 : 3;
        if (!(ratio > expected)) {
            window.mxdpBad.add(e);
            const text = e.textContent.trim().slice(0, 20);
            out.push(`code ${e.tagName.toLowerCase()}.${e.className || '-'} "${text}": ${fg.toHexString()} on `
                     + `${bg.toHexString()}, ${Math.floor(ratio * 100) / 100}:1 (${expected}:1 expected)`);
        }
        window.mxdpChecked.add(e);
        seen.tokens += 1;
    }
    const rule = axe._audit.rules.find(r => r.id === 'color-contrast');
    if (!rule.mxdpOwn) {
        rule.mxdpOwn = rule.matches;
        rule.matches = function (node, vNode, context) {
            return !window.mxdpChecked.has(node) && rule.mxdpOwn.call(this, node, vNode, context);
        };
    }
    return out.length ? [{id: 'color-contrast', impact: 'serious', nodes: out}] : [];
}"""
# axe.run over `context` (null: the whole document), highlighted code first (CODE):
# [{id, impact, nodes: ['selector: why', ...]}].
AXE = """async ([context, tags]) => {
    const code = (""" + CODE + """)(context ? context.include[0] : document);
    const r = await axe.run(context || document, {runOnly: {type: 'tag', values: tags},
        resultTypes: ['violations'], preload: false});
    return code.concat(r.violations.map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n =>
        n.target.join(' ') + ': ' + (n.failureSummary || '').split('\\n').slice(1).join(' ').slice(0, 200))})));
}"""
# Every slide in turn, shown at its last step (its fragments, such as the answer to a Predict, shown
# too: on screen once the lecturer has pressed on) and its maths typeset, then axe over it. The other
# slides (hidden, not displayed) are taken out of the document while axe runs and put back after: axe
# walks the whole document for every run, and a deck holds some 30 slides, so this makes the run 3 to
# 5 times faster without changing what is on screen. Returns [[label, violations], ...].
EVERY_SLIDE = """async ([run, tags]) => {
    const axeOver = eval(run), out = [];
    for (const slide of Reveal.getSlides()) {
        const {h, v} = Reveal.getIndices(slide);
        Reveal.slide(h, v, Number.MAX_SAFE_INTEGER);        // every fragment shown
        if (window.MathJax) {           // the slide's maths typeset anew (the deck does it on each slide)
            await new Promise(done => MathJax.Hub.Queue(done));
        }
        const current = Reveal.getCurrentSlide(), parent = current.closest('.slides');
        const away = Reveal.getHorizontalSlides().filter(top => !top.contains(current))
            .map(top => [top, top.nextSibling]);
        away.forEach(([top]) => top.remove());
        try {
            out.push([`#/${h}/${v || 0}`, await axeOver([{include: [current]}, tags])]);
        } finally {
            away.reverse().forEach(([top, next]) => parent.insertBefore(top, next));
        }
    }
    return out;
}"""


def known_violations():
    """``{(rule, 'book' or 'slides')}``: the rows of the table under "## Known violations" in
    docs/accessibility.md, ``| `rule-id` | book, slides | why | what the reader can do |``."""
    text = open(STATEMENT).read()
    section = re.search(r'^## Known violations\n(.*?)(?=^## |\Z)', text, re.S | re.M)
    assert section, 'docs/accessibility.md has no "## Known violations" section'
    known = set()
    for rule, where in re.findall(r'^\|\s*`([a-z0-9-]+)`\s*\|\s*([^|]+)\|', section.group(1), re.M):
        known |= {(rule, w.strip()) for w in where.split(',')}
    return known


def _axe(page):
    if not os.path.exists(assets.AXE):
        pytest.skip('axe-core is not installed: make book (or python -m tools.web.assets)')
    page.add_script_tag(path=assets.AXE)


class Violations:
    """Violations found, by rule: where (page or slide) and which elements."""

    def __init__(self, where):
        self.where, self.found, self.checked = where, collections.defaultdict(list), 0
        self.code = collections.Counter()     # highlighted code: tokens checked by CODE, and left to axe

    def add_code(self, page):
        """Count what CODE checked on ``page`` since it was loaded."""
        self.code.update(page.evaluate('() => window.mxdpCode || {}'))

    def add(self, label, violations):
        self.checked += 1
        for v in violations:
            self.found[(v['id'], v['impact'])].append((label, v['nodes']))

    def report(self, seconds):
        lines = [f'axe-core over {self.checked} {self.where} ({seconds:.0f} s): '
                 + (f'{sum(len(n) for w in self.found.values() for _, n in w)} violations' if self.found else
                    'no violation'),
                 f'  highlighted code: {self.code["tokens"]} tokens checked by CODE, {self.code["left"]} left to axe '
                 '(under a translucent ancestor: on a deck\'s page, its slides not shown)']
        for (rule, impact), where in sorted(self.found.items()):
            lines.append(f'  {rule} ({impact}): {sum(len(n) for _, n in where)} elements on {len(where)} '
                         f'{self.where}, e.g. {where[0][0]}: {where[0][1][0]}')
        print('\n'.join(lines))

    def check(self, kind):
        known = {rule for rule, where in known_violations() if where == kind}
        undocumented = {r: w for (r, _), w in self.found.items() if r not in known}
        gone = known - {r for r, _ in self.found}
        assert not undocumented, 'violations not documented in docs/accessibility.md:\n' + '\n'.join(
            f'{rule}: {len(w)} {self.where}; {w[0][0]}: {w[0][1][:3]}' for rule, w in undocumented.items())
        assert not gone, f'docs/accessibility.md lists violations that no longer occur in the {kind}: {gone}'


# --- the book -------------------------------------------------------------------------------------

@pytest.fixture(scope='module')
def book():
    _make('book')
    return BOOK


def book_pages():
    """Every HTML page of the book: the contents, each notebook and solution, search and index."""
    pages = sorted(glob.glob(os.path.join(BOOK, '**', '*.html'), recursive=True))
    redirect = os.path.join(BOOK, 'index.html')     # a meta refresh to notebooks/contents.html, which is checked;
    return [p for p in pages if f'{os.sep}_static{os.sep}' not in p and f'{os.sep}_sources{os.sep}' not in p
            and p != redirect]      # checked mid-redirect, axe's script lost its page (two suites at once)


PAGE_FACTS = """() => ({
    lang: document.documentElement.lang,
    title: document.title,
    maths: document.querySelectorAll('mjx-container').length,
    spoken: [...document.querySelectorAll('mjx-container')].filter(m =>
        m.querySelector('mjx-assistive-mml math')).length,
    positive: [...document.querySelectorAll('[tabindex]')].filter(e => e.tabIndex > 0)
        .map(e => e.outerHTML.slice(0, 80)),
})"""


def test_axe_finds_nothing_undocumented_on_any_page_of_the_book(browser, book):     # noqa: F811
    context = browser.new_context(viewport={'width': 1280, 'height': 800})
    traffic = Traffic(context)
    page = context.new_page()
    found, facts, start = Violations('book pages'), {}, time.monotonic()
    for path in book_pages():
        name = os.path.relpath(path, BOOK)
        page.goto('file://' + path)
        page.wait_for_load_state('load')
        if page.locator('.math').count():        # MathJax typesets after the load event
            page.locator('mjx-container').first.wait_for(state='attached')   # in a closed aside: not visible
            page.wait_for_function("() => !document.querySelector('.math:not(:has(mjx-container))')")
        _axe(page)
        found.add(name, page.evaluate(AXE, [None, TAGS]))
        found.add_code(page)
        facts[name] = page.evaluate(PAGE_FACTS)
    context.close()
    found.report(time.monotonic() - start)
    traffic.check()
    assert len(facts) > len(NUMBERED), f'the book has {len(facts)} pages'
    assert all(f['lang'].startswith('en') for f in facts.values()), {n: f['lang'] for n, f in facts.items()}
    assert all(f['title'] for f in facts.values())
    assert not {n: f['positive'] for n, f in facts.items() if f['positive']}, 'a tabindex > 0 breaks the reading order'
    unspoken = {n: f"{f['maths'] - f['spoken']} of {f['maths']}" for n, f in facts.items() if f['spoken'] < f['maths']}
    assert not unspoken, f'formulas without MathML for screen readers (MathJax assistive MathML): {unspoken}'
    assert sum(f['maths'] for f in facts.values()), 'no formula found in the book'
    assert found.code['tokens'], 'CODE checked no highlighted code'
    found.check('book')


# Runs axe's own color-contrast rule over the page, then CODE, then the rule again with CODE's tokens passed
# over, and counts what each finds in highlighted code: a token only CODE finds must be hidden (in a
# closed aside: axe checks nothing hidden) or one axe marks for review (incomplete).
BOTH_FIND = """async (code) => {
    const inCode = e => !!e.closest('.highlight');
    const r = await axe.run(document, {runOnly: {type: 'rule', values: ['color-contrast']},
                                       resultTypes: ['violations', 'incomplete'], elementRef: true});
    const theirs = new Set(r.violations.flatMap(v => v.nodes.map(n => n.element)).filter(inCode));
    const unsure = new Set(r.incomplete.flatMap(v => v.nodes.map(n => n.element)).filter(inCode));
    const ours = (eval(code))(document)[0]?.nodes.length || 0;
    const after = await axe.run(document, {runOnly: {type: 'rule', values: ['color-contrast']},
                                           resultTypes: ['violations'], elementRef: true});
    const left = after.violations.flatMap(v => v.nodes.map(n => n.element)).filter(inCode);
    const checked = e => window.mxdpChecked.has(e);
    return {theirs: theirs.size, unsure: unsure.size, ours, code: window.mxdpCode,
            missed: [...theirs].filter(e => checked(e) && !window.mxdpBad.has(e)).length,
            extra: [...window.mxdpBad].filter(e => !theirs.has(e) && !unsure.has(e) && e.checkVisibility()).length,
            hidden: [...window.mxdpBad].filter(e => !e.checkVisibility()).length,
            leftToAxe: left.length, leftUnchecked: left.filter(e => !checked(e)).length,
            firstBlock: left.filter(e => e.closest('.highlight') === document.querySelector('.highlight')).length};
}"""


def test_the_code_check_finds_what_axe_finds(browser, book):      # noqa: F811
    """CODE (above) against axe's own color-contrast rule on one page of the book whose comments are
    made grey (#999, 2.8:1 on the code's background) and its keywords lighter (#888, 3.5:1: below
    4.5, above 3, so a wrong threshold shows), its second block's background translucent pink
    (composited) and its first block translucent: CODE finds every token axe finds in what CODE
    checks, and nothing on screen that axe neither finds nor marks for review (only tokens in closed
    asides, hidden, which axe does not check); it leaves the translucent block to axe, which still
    finds its tokens; on the page as built both find nothing."""
    context = browser.new_context(viewport={'width': 1280, 'height': 800})
    page = context.new_page()
    path = os.path.join(BOOK, 'notebooks', '04-allreduce-by-hand.html')
    results = []
    for grey in (False, True):
        page.goto('file://' + path)
        page.wait_for_load_state('load')
        if grey:
            page.add_style_tag(content='.highlight .c1, .highlight .c { color: #999 !important } '    # 2.8:1
                                       '.highlight .k { color: #888 !important }')                # 3.5:1
            page.evaluate("() => { const blocks = document.querySelectorAll('.highlight');"
                          " blocks[0].style.opacity = '0.98';"                            # left to axe
                          " blocks[1].querySelector('pre').style.backgroundColor = 'rgba(255, 200, 200, 0.5)'; }")
        _axe(page)
        results.append(page.evaluate(BOTH_FIND, CODE))
    context.close()
    clean, grey = results
    print('as built:', clean, '\ncomments grey:', grey)
    assert clean['theirs'] == clean['ours'] == 0 and clean['code']['tokens'] > 1000 and clean['code']['left'] == 0
    assert grey['theirs'] > 0 and grey['missed'] == grey['extra'] == 0 and grey['ours'] >= grey['theirs'], grey
    assert grey['code']['left'] > 0 and grey['leftToAxe'] == grey['leftUnchecked'] == grey['firstBlock'] > 0, grey


FOCUS = """() => { const e = document.activeElement; if (!e || e === document.body) return null;
    const r = e.getBoundingClientRect(), s = getComputedStyle(e);
    const ring = (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== 'none';
    return {tag: e.tagName, text: (e.innerText || e.getAttribute('aria-label') || '').trim().slice(0, 40),
            visible: r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0 && r.top < innerHeight
                     && r.left < innerWidth && e.checkVisibility({visibilityProperty: true, opacityProperty: true}),
            ring: ring, inMain: !!e.closest('main')}; }"""


def _tab(page, n):
    """Press Tab ``n`` times; return what had the focus after each press (once the page's
    transitions, such as a skip link sliding in, are over)."""
    stops = []
    for _ in range(n):
        page.keyboard.press('Tab')
        page.wait_for_timeout(250)
        stops.append(page.evaluate(FOCUS))
    return stops


def test_the_book_with_the_keyboard_alone(browser, book):      # noqa: F811
    """A skip link first, shown when it has the focus; Enter on it moves on to the page's content;
    every later Tab stop is on screen (scrolled to) and outlined."""
    context = browser.new_context(viewport={'width': 1280, 'height': 800})
    page = context.new_page()
    page.goto('file://' + os.path.join(BOOK, 'notebooks', os.path.basename(showcase())[:-len('.ipynb')] + '.html'))
    page.wait_for_load_state('load')
    first = _tab(page, 1)[0]
    assert first and 'skip to main content' in first['text'].lower(), f'the first Tab stop is not a skip link: {first}'
    assert first['visible'] and first['ring'], f'the skip link is not shown with a focus outline: {first}'
    _shoot(page, 'a11y-book-skip-link.png')
    page.keyboard.press('Enter')
    page.wait_for_function("() => location.hash === '#main-content'")
    stops = _tab(page, 25)
    assert stops[0] and stops[0]['inMain'], f'after the skip link, Tab does not go on in the content: {stops[0]}'
    hidden = [s for s in stops if s and not (s['visible'] and s['ring'])]
    assert not hidden, f'Tab stops not shown, or without a focus outline: {hidden}'
    _shoot(page, 'a11y-book-focus.png')
    context.close()


# At 320 CSS px (WCAG 1.4.10, reflow): how far the page scrolls sideways, and the table cells whose
# content overflows into the next cell. Code blocks and figure tables scroll in their own boxes.
REFLOW = """() => ({
    width: document.documentElement.scrollWidth,
    cells: document.querySelectorAll('article td, article th').length,
    over: [...document.querySelectorAll('article td, article th')].filter(c => c.checkVisibility()
        && c.scrollWidth > c.clientWidth + 1).map(c => c.textContent.trim().slice(0, 40)),
})"""


def test_the_book_reflows_at_320_px(browser, book):      # noqa: F811
    """WCAG 1.4.10: every page of the book at 320 CSS px (a phone, or a 1280-px window at 400 %) reads
    without scrolling sideways (inline code and long words wrap; code blocks scroll in their box,
    as code must), and no table cell spills into the next: at 320 px, 62 of the 80 cells of the
    closing page's map did. The map is laid out as cards there, one per row, each cell under its
    column's name, and a screen reader still finds a table of 5 columns."""
    context = browser.new_context(viewport={'width': 320, 'height': 640})
    traffic = Traffic(context)
    page = context.new_page()
    wide, spilled, cells = {}, {}, 0
    for path in book_pages():
        name = os.path.relpath(path, BOOK)
        page.goto('file://' + path)
        page.wait_for_load_state('load')
        if page.locator('.math').count():
            page.locator('mjx-container').first.wait_for(state='attached')   # in a closed aside: not visible
        found = page.evaluate(REFLOW)
        cells += found['cells']
        if found['width'] > 321:
            wide[name] = found['width']
        if found['over']:
            spilled[name] = f"{len(found['over'])} of {found['cells']}: {found['over'][:3]}"
    closing = os.path.join(BOOK, 'notebooks', 'where-next.html')
    if os.path.exists(closing):
        page.goto('file://' + closing)
        table = page.locator('#the-map').get_by_role('table')
        assert table.count() == 1 and table.get_by_role('columnheader').count() == 5, 'the map is no table any more'
        labels = page.evaluate("""() => [...document.querySelectorAll('#the-map td')].slice(1, 5).map(td =>
            [getComputedStyle(td).display, getComputedStyle(td, '::before').content])""")
        assert labels == [['block', '"in this series"'], ['block', '"PyTorch (DDP, FSDP)"'], ['block', '"Horovod"'],
                          ['block', '"JAX"']], f'the map is not laid out as cards at 320 px: {labels}'
        page.locator('#the-map tbody tr').nth(1).scroll_into_view_if_needed()
        _shoot(page, 'a11y-book-map-320px.png')
    context.close()
    traffic.check()
    print(f'{len(book_pages())} pages, {cells} table cells at 320 px')
    assert not wide, f'pages that scroll sideways at 320 px (their width): {wide}'
    assert not spilled, f'table cells whose text spills into the next at 320 px: {spilled}'


# Every text of the page against what is behind it (WCAG 1.4.3): [{text, ratio, needs}] of the texts
# under their threshold (4.5:1, 3:1 from 24 px or 18.66 px bold). The colour behind is the first
# background colour up the tree, blended (an element drawn over others, or a background image, is not
# seen: axe reports those as "incomplete", which is how the search page's "+" of "Ctrl + K", #d1d5da
# on white, 1.47:1, went unreported).
CONTRAST = """() => {
    const rgba = c => { const m = c.match(/[\\d.]+/g).map(Number); return m.length === 3 ? [...m, 1] : m; };
    const over = (top, back) => top.slice(0, 3).map((v, i) => v * top[3] + back[i] * (1 - top[3]));
    const linear = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    const lum = c => { const l = c.map(linear); return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2]; };
    const behind = el => { const layers = [];
        for (let e = el; e; e = e.parentElement) { const b = rgba(getComputedStyle(e).backgroundColor);
            if (b[3] > 0) { layers.push(b); if (b[3] === 1) break; } }
        return layers.reverse().reduce((acc, b) => over(b, acc), [255, 255, 255]); };
    const out = [], walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const el = n.parentElement;
        if (!n.data.trim() || !el.checkVisibility({opacityProperty: true, visibilityProperty: true})
            || el.closest('mjx-assistive-mml, .sr-only, .visually-hidden, svg')) continue;
        const s = getComputedStyle(el), back = behind(el), fore = over(rgba(s.color), back);
        const [a, b] = [lum(fore) + 0.05, lum(back) + 0.05], ratio = Math.max(a, b) / Math.min(a, b);
        const size = parseFloat(s.fontSize), large = size >= 24 || (size >= 18.66 && parseInt(s.fontWeight) >= 700);
        if (ratio < (large ? 3 : 4.5) - 0.005) out.push({text: n.data.trim().slice(0, 30), ratio: +ratio.toFixed(2),
            needs: large ? 3 : 4.5, where: el.tagName + '.' + [...el.classList].join('.')});
    }
    return out;
}"""


def test_every_text_of_the_search_page_has_contrast_in_light_and_dark(browser, book):      # noqa: F811
    """WCAG 1.4.3 on the book's search page, with a check of our own besides axe: every visible text
    node against the colours behind it, in the light and the dark mode. axe left the "+" of its
    search field's "Ctrl + K" (1.47:1) unreported."""
    context = browser.new_context(viewport={'width': 1280, 'height': 800})
    page = context.new_page()
    page.goto('file://' + os.path.join(BOOK, 'search.html'))
    page.wait_for_load_state('load')
    page.locator('.bd-search .search-button__kbd-shortcut').filter(visible=True).first.wait_for()
    low = {}
    for mode in ('light', 'dark'):
        page.evaluate('mode => { document.documentElement.dataset.theme = mode; }', mode)
        page.wait_for_timeout(200)
        found = page.evaluate(CONTRAST)
        if found:
            low[mode] = found
    _shoot(page, 'a11y-book-search-dark.png')
    context.close()
    assert not low, f'texts of the search page under their contrast: {low}'


# --- the decks ------------------------------------------------------------------------------------

@pytest.fixture(scope='module')
def decks():
    _make('slides')
    return [_deck(p) for p in NUMBERED]


DECK_FACTS = """() => ({
    lang: document.documentElement.lang,
    maths: [...document.querySelectorAll('.reveal .slides .MathJax_CHTML')]
        .filter(m => !m.closest('aside.notes')).length,
    spoken: [...document.querySelectorAll('.reveal .slides .MathJax_CHTML')].filter(m => !m.closest('aside.notes'))
        .filter(m => m.parentElement.querySelector('.MJX_Assistive_MathML math')).length,
    figures: document.querySelectorAll('.reveal .jp-OutputArea-output > img + details').length,
    positive: [...document.querySelectorAll('[tabindex]')].filter(e => e.tabIndex > 0).length,
})"""


def test_axe_finds_nothing_undocumented_on_any_slide_of_any_deck(browser, decks):      # noqa: F811
    """Every slide of every deck, stepped through at 1280 x 720: axe checks the slide on screen
    (and, once per deck, the whole page: its language, title, controls and first slide)."""
    context = browser.new_context(viewport={'width': 1280, 'height': 720})
    traffic = Traffic(context)
    page = context.new_page()
    found, facts, start = Violations('slides'), {}, time.monotonic()
    for path in NUMBERED:
        stem = os.path.basename(path)[:-len('.ipynb')]
        _open_deck(page, path)
        page.evaluate("() => Reveal.configure({transition: 'none'})")
        page.add_style_tag(content='.reveal .fragment { transition: none !important }')    # shown at once, no fade
        _axe(page)
        found.add(f'{stem} (the page)', page.evaluate(AXE, [None, TAGS]))
        for label, violations in page.evaluate(EVERY_SLIDE, [AXE, TAGS]):
            found.add(f'{stem} {label}', violations)
        page.wait_for_function('() => !window.MathJax || (MathJax.Hub.queue.pending === 0'   # re-typeset
                               ' && MathJax.Hub.queue.running === 0)')
        found.add_code(page)
        facts[stem] = page.evaluate(DECK_FACTS)
    context.close()
    found.report(time.monotonic() - start)
    traffic.check()
    assert all(f['lang'].startswith('en') for f in facts.values()), {n: f['lang'] for n, f in facts.items()}
    assert not {n: f['positive'] for n, f in facts.items() if f['positive']}, 'a tabindex > 0 breaks the reading order'
    unspoken = {n: f"{f['maths'] - f['spoken']} of {f['maths']}" for n, f in facts.items() if f['spoken'] < f['maths']}
    assert not unspoken, f'formulas without MathML for screen readers (MathJax AssistiveMML): {unspoken}'
    assert found.code['tokens'], 'CODE checked no highlighted code'
    found.check('slides')


def test_a_deck_with_the_keyboard_alone(browser, decks):      # noqa: F811
    """Tab first reaches a skip link, shown and outlined; Enter on it puts the focus on the slide on
    screen, from where the arrows still change slides and Tab stays on what is shown; a figure's
    table of numbers opens with Enter over the figure, having taken no room on the slide; an output
    that scrolls takes the focus and scrolls with the arrow keys."""
    context = browser.new_context(viewport={'width': 1280, 'height': 720})
    page = context.new_page()
    figure = next((p for p in NUMBERED if '<details><summary>The numbers in this figure'
                   in open(_deck(p)).read()), showcase())
    _open_deck(page, figure)
    page.evaluate("() => Reveal.configure({transition: 'none'})")
    first = _tab(page, 1)[0]
    assert first and first['text'].lower().startswith('skip to the slide'), f'the first Tab stop: {first}'
    assert first['visible'] and first['ring'], f'the skip link is not shown with a focus outline: {first}'
    _shoot(page, 'a11y-deck-skip-link.png')
    page.keyboard.press('Enter')
    assert page.evaluate('() => document.activeElement === Reveal.getCurrentSlide()')
    page.keyboard.press('ArrowRight')
    page.wait_for_function('() => Reveal.getIndices().h > 0 || Reveal.getIndices().v > 0')
    stops = [s for s in _tab(page, 12) if s]
    assert stops and all(s['visible'] and s['ring'] for s in stops), f'Tab stops not shown or not outlined: {stops}'

    details = '.reveal .jp-OutputArea-output > img + details'
    if page.locator(details).count():
        where = page.evaluate(f"""() => {{ const d = document.querySelector('{details}');
            const s = d.closest('section'); const {{h, v}} = Reveal.getIndices(s); Reveal.slide(h, v);
            return [h, v || 0]; }}""")
        box = page.evaluate(f"""() => {{ const d = document.querySelector('{details}');
            const img = d.previousElementSibling, s = getComputedStyle(img);
            const out = d.parentElement.getBoundingClientRect(), i = img.getBoundingClientRect();
            const margins = parseFloat(s.marginTop) + parseFloat(s.marginBottom);
            return {{open: d.open, extra: out.height - i.height - margins}}; }}""")
        assert not box['open'] and box['extra'] <= 2, f'the table of numbers takes room on slide {where}: {box}'
        page.focus(f'{details} > summary')
        page.keyboard.press('Enter')
        assert page.evaluate(f"() => document.querySelector('{details}').open")
        assert page.locator(f'{details} table').first.is_visible()
        assert page.evaluate('() => Reveal.getIndices()')['h'] == where[0], 'Enter on the table changed the slide'
        _shoot(page, 'a11y-deck-figure-table.png')
        page.keyboard.press('Enter')

    # An output that scrolls: focus it, the down arrow scrolls it. Whether a deck has one depends on
    # what its notebook printed, so the test makes one: the first output on a slide of the showcase
    # deck gets 200 more lines, and the deck lays the slide out again when it is shown.
    _open_deck(page, figure)
    page.evaluate("() => Reveal.configure({transition: 'none'})")
    found = page.evaluate("""() => { for (const s of Reveal.getSlides()) {
            const pre = s.querySelector('.jp-OutputArea-output pre');
            if (!pre) continue;
            pre.textContent += Array.from({length: 200}, (_, i) => `line ${i}`).join('\\n');
            const {h, v} = Reveal.getIndices(s); Reveal.slide(h || v ? 0 : 1, 0); Reveal.slide(h, v);
            const el = s.querySelector('[data-scroller]:not(section)');
            if (el) { el.focus(); return [h, v || 0]; }
            return 'an output of 200 more lines on ' + h + '/' + (v || 0) + ' does not scroll'; }
        return null; }""")
    assert isinstance(found, list), found or 'the deck has no output'
    page.keyboard.press('ArrowDown')
    page.wait_for_function('() => document.activeElement.scrollTop > 0', timeout=5000)   # 'the down arrow scrolls'
    assert [page.evaluate('() => Reveal.getIndices()')[k] or 0 for k in 'hv'] == found
    context.close()


# Every Tab stop of the page while the slide on screen is shown: what the browser's sequential focus
# navigation reaches (tabIndex >= 0, not disabled, not inert, not display: none or visibility:
# hidden), those that are not on screen -- transparent (opacity 0, as reveal.js leaves the slides
# next to the one shown) or on another slide -- listed. {stops, away: [description]}.
TAB_STOPS = """() => {
    const current = Reveal.getCurrentSlide(), slides = document.querySelector('.reveal .slides');
    const stops = [...document.body.querySelectorAll('*')].filter(e => e.tabIndex >= 0 && !e.disabled
        && !e.closest('[inert]') && e.checkVisibility({visibilityProperty: true}));
    const away = stops.filter(e => !(e.checkVisibility({visibilityProperty: true, opacityProperty: true})
                                     && (current.contains(e) || !slides.contains(e))));
    return {stops: stops.length, away: away.map(e => e.tagName.toLowerCase()
        + [...e.classList].slice(0, 2).map(c => '.' + c).join('') + ' on ' + (e.closest('section')
        ? (() => { const {h, v} = Reveal.getIndices(e.closest('section')); return `#/${h}/${v || 0}`; })() : '?'))};
}"""


def test_tab_reaches_only_what_is_on_screen_on_every_slide_of_every_deck(browser, decks):      # noqa: F811
    """WCAG 2.4.3 (focus order) and 2.4.7 (focus visible): on every slide of every deck, every Tab stop
    is on the slide on screen or among the deck's own controls, and visible -- opacity included:
    reveal.js keeps the neighbouring slides in the page at opacity 0, and Tab used to walk into
    their code boxes, outputs and formulas (172 of deck 04's 293 stops) with nothing seen to take
    the focus. Then, in deck 04, the keys themselves: a full round of Tab from a slide with code
    stays on what is shown, each stop opaque and outlined, the deck's arrows too (screenshot
    after five Tabs)."""
    context = browser.new_context(viewport={'width': 1280, 'height': 720})
    page = context.new_page()
    away, slides = {}, 0
    for path in NUMBERED:
        stem = os.path.basename(path)[:-len('.ipynb')]
        _open_deck(page, path)
        page.evaluate("() => Reveal.configure({transition: 'none'})")
        # no CSS transition: each slide is checked as it is once shown (the controls fade in)
        page.add_style_tag(content='*, *::before, *::after { transition: none !important; }')
        for h, v in page.evaluate(SLIDE_ORDER):
            page.evaluate('([h, v]) => Reveal.slide(h, v)', [h, v])
            found = page.evaluate(TAB_STOPS)
            slides += 1
            if found['away']:
                away[f'{stem[:2]} #/{h}/{v}'] = f"{len(found['away'])} of {found['stops']}: {found['away'][:3]}"
    print(f'Tab stops checked on {slides} slides')
    assert not away, f'Tab stops off screen on {len(away)} slides:\n' + '\n'.join(f'{k}: {w}' for k, w in away.items())

    path = next(p for p in NUMBERED if os.path.basename(p).startswith('04-'))
    _open_deck(page, path)
    page.evaluate("() => Reveal.configure({transition: 'none'})")
    page.add_style_tag(content='*, *::before, *::after { transition: none !important; }')
    h, v = page.evaluate("""() => { const s = Reveal.getSlides().find(s => s.querySelector('.jp-CodeCell')
        && !s.querySelector('.fragment')); const i = Reveal.getIndices(s); Reveal.slide(i.h, i.v);
        return [i.h, i.v || 0]; }""")
    stops = []
    for n in range(60):                     # round the page once: back at the skip link, or off the page
        page.keyboard.press('Tab')
        stop = page.evaluate("""() => { const e = document.activeElement;
            if (!e || e === document.body) return null;
            const s = getComputedStyle(e);
            return {id: e.id, what: e.tagName + '.' + e.className,
                    shown: e.checkVisibility({opacityProperty: true, visibilityProperty: true})
                           && parseFloat(s.opacity) >= 0.9,
                    here: Reveal.getCurrentSlide().contains(e)
                          || !document.querySelector('.reveal .slides').contains(e),
                    ring: s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2}; }""")
        if n == 4:
            _shoot(page, 'a11y-deck-five-tabs.png')
        if stop is None or (stops and stop['id'] == 'skip-to-slide'):
            break
        stops.append(stop)
    assert page.evaluate('() => [Reveal.getIndices().h, Reveal.getIndices().v || 0]') == [h, v], 'Tab changed the slide'
    wrong = [s for s in stops if not (s['shown'] and s['here'] and s['ring'])]
    assert len(stops) >= 3 and not wrong, f'deck 04, #/{h}/{v}: Tab stops not on screen, faded or without an ' \
        f'outline: {wrong} (of {len(stops)})'
    context.close()


def test_the_speaker_view_names_its_previews_and_its_timer_reset_is_a_button(browser, decks):    # noqa: F811
    """The speaker view (S in a deck; reveal.js's notes plugin, fixed in tools/web/assets.py): its two
    slide previews are iframes named by a title (WCAG 4.1.2), the timer's reset is a button that Tab
    reaches and Enter presses (2.1.1), and axe finds nothing in it."""
    context = browser.new_context(viewport={'width': 1280, 'height': 720})
    traffic = Traffic(context)
    page = context.new_page()
    path = next((p for p in NUMBERED if '"notes"' in open(p).read()), showcase())
    _open_deck(page, path)
    with page.expect_popup() as popup:
        page.keyboard.press('s')
    view = popup.value
    view.wait_for_function("() => document.querySelectorAll('iframe').length === 2 && "
                           "!document.getElementById('connection-status') || "
                           "getComputedStyle(document.getElementById('connection-status')).display === 'none'")
    frames = view.evaluate("() => [...document.querySelectorAll('iframe')].map(f => f.title)")
    assert len(frames) == 2 and all(frames), f'speaker view iframes without a title: {frames}'
    reset = view.locator('.speaker-controls-time .reset-button')
    assert reset.evaluate('b => b.tagName') == 'BUTTON', 'the timer reset is not a button'
    seconds = "() => document.querySelector('.speaker-controls-time .timer .seconds-value').textContent"
    view.wait_for_function(f"() => ({seconds})() !== ':00'", timeout=5_000)        # the timer runs
    for _ in range(10):
        view.keyboard.press('Tab')
        if view.evaluate("() => document.activeElement.classList.contains('reset-button')"):
            break
    assert view.evaluate("() => document.activeElement.classList.contains('reset-button')"), 'Tab does not reach reset'
    assert reset.evaluate("b => getComputedStyle(b).opacity") == '1', 'the reset button is not shown with the focus'
    _shoot(view, 'a11y-speaker-view.png')
    view.keyboard.press('Enter')
    view.wait_for_function(f"() => ({seconds})() === ':00'", timeout=900)           # Enter reset it
    _axe(view)
    found = Violations('speaker view')
    found.add('speaker view', view.evaluate(AXE, [None, TAGS]))
    found.report(0)
    assert not found.found, dict(found.found)
    view.close()
    context.close()
    traffic.check()


# --- figures: their text alternative, wherever they go ----------------------------------------------

class _Images(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.alts = []

    def handle_starttag(self, tag, attrs):
        if tag == 'img':
            attrs = dict(attrs)
            self.alts.append((attrs.get('src', '')[:60], attrs.get('alt')))


def _image_problems(path, within=None):
    text = open(path, encoding='utf-8').read()
    if within:
        match = re.search(within, text, re.S)
        text = match.group(0) if match else ''
    parser = _Images()
    parser.feed(text)
    return [(src, alt, alt_text.problem(alt)) for src, alt in parser.alts if alt_text.problem(alt)]


def test_every_image_of_the_book_and_the_decks_has_a_real_text_alternative(book, decks):
    """What the reader meets: no image of the book's articles or of a deck is named by its file
    (Sphinx's default for a figure without alt text), by the plot helpers' stand-in, or not at all.
    tests/test_alt_text.py names the notebook cells to fix."""
    bad = {}
    for path in book_pages():
        problems = _image_problems(path, r'<article.*</article>')
        if problems:
            bad[os.path.relpath(path, BOOK)] = problems
    for path in decks:
        problems = _image_problems(path, r'<div class="slides">.*')
        if problems:
            bad[os.path.basename(path)] = problems
    assert not bad, '\n'.join(f'{page}: {len(p)} images, e.g. {p[0][1]!r} ({p[0][2]})' for page, p in bad.items())
