"""The browser assets of the slides and the book, pinned and local: nothing is loaded from a CDN.

``tools/web/package.json`` and its lock file pin reveal.js 4 (what nbconvert's reveal template is
written for), MathJax 2 (the template's ``MathJax.Hub`` API), MathJax 3 (what Sphinx 7 loads),
require.js and jQuery, and axe-core (the accessibility checker that tests/test_accessibility.py
injects into the book's pages and the decks). :func:`install` fetches them from the npm registry
into ``build/web/`` (once; again only when the lock file changes), and the ``copy_*`` functions copy
the parts a page loads next to the pages that load them, so the output works from a ``file://``
URL with no network.

    python -m tools.web.assets          # install (what `make slides` and `make book` run first)
"""
import filecmp
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WEB = os.path.join(ROOT, 'build', 'web')
MODULES = os.path.join(WEB, 'node_modules')

# What a page loads, relative to each package (directories are copied whole). MathJax 2 loads its
# combined configuration, then the TeX input, CommonHTML output, their fonts and the accessibility
# menu on demand; the rest of the 73 MB package (SVG/HTML-CSS outputs, PNG fonts, the a11y
# explorer's speech maps) is never requested.
MATHJAX2 = ['MathJax.js', 'config/TeX-AMS_CHTML-full.js', 'config/Safe.js',
            'extensions/MathMenu.js', 'extensions/MathZoom.js', 'extensions/MathEvents.js',
            'extensions/AssistiveMML.js', 'extensions/Safe.js', 'extensions/tex2jax.js',
            'extensions/toMathML.js', 'extensions/TeX', 'extensions/a11y/accessibility-menu.js',
            'jax/input/TeX', 'jax/output/CommonHTML', 'jax/element',
            'fonts/HTML-CSS/TeX/woff', 'fonts/HTML-CSS/TeX/otf', 'localization/en']
MATHJAX2_URL = 'MathJax.js?config=TeX-AMS_CHTML-full,Safe'
MATHJAX3 = ['es5/tex-mml-chtml.js', 'es5/input/tex/extensions', 'es5/output/chtml/fonts/woff-v2',
            'es5/ui', 'es5/a11y']
MATHJAX3_URL = 'tex-mml-chtml.js'
# nbconvert's default theme, 'simple', imports its fonts from Google; 'white' ships its own.
REVEAL_THEME = 'white'
REVEAL = ['dist/reveal.js', 'dist/reveal.css', f'dist/theme/{REVEAL_THEME}.css',
          'dist/theme/fonts/source-sans-pro', 'plugin/notes/notes.js']


# axe-core, injected from disk by the browser tests (never copied into the book or the decks).
AXE = os.path.join(MODULES, 'axe-core', 'axe.min.js')


def install(quiet=False):
    """``npm ci`` the pinned packages into build/web/ unless they are there already."""
    lock = os.path.join(HERE, 'package-lock.json')
    installed = os.path.join(WEB, 'package-lock.json')
    if os.path.isdir(MODULES) and os.path.exists(installed) and filecmp.cmp(lock, installed, shallow=False):
        return
    npm = shutil.which('npm')
    if not npm:
        sys.exit('the slides and the book need npm to fetch their pinned browser assets once '
                 '(Debian: apt-get install npm); see tools/web/package.json')
    os.makedirs(WEB, exist_ok=True)
    for name in ('package.json', 'package-lock.json'):
        shutil.copyfile(os.path.join(HERE, name), os.path.join(WEB, name))
    if not quiet:
        print('fetching the pinned browser assets (tools/web/package-lock.json) into build/web/', flush=True)
    subprocess.run([npm, 'ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
                   cwd=WEB, check=True)


def _copy(package, parts, dest):
    """Copy ``parts`` of ``node_modules/package`` to ``dest`` (keeping their paths); return bytes."""
    src = os.path.join(MODULES, package)
    total = 0
    for part in parts:
        s, d = os.path.join(src, part), os.path.join(dest, part)
        if not os.path.exists(s):
            raise FileNotFoundError(f'{package}/{part} is missing: run `python -m tools.web.assets`')
        os.makedirs(os.path.dirname(d), exist_ok=True)
        if os.path.isdir(s):
            shutil.copytree(s, d, dirs_exist_ok=True, ignore=shutil.ignore_patterns('*.map'))
        else:
            shutil.copyfile(s, d)
    for base, _, files in os.walk(dest):
        total += sum(os.path.getsize(os.path.join(base, f)) for f in files)
    return total


# The speaker view (the notes plugin writes its page from a string in notes.js) fixed for WCAG 2.1 AA
# (docs/accessibility.md): its two slide previews were iframes without a name (4.1.2), its timer's
# "Click to Reset" a span that only a mouse could use (2.1.1) -- now a button, shown when it has the
# focus --, its layout menu a select without a name (4.1.2) and without a visible focus (2.4.7), and
# the timer's muted zeros at opacity 0.3 (2.1:1; 1.4.3): #767676 instead, 4.5:1. Each text must
# occur exactly once in the pinned notes.js (a new reveal.js that changes it fails loudly, here,
# rather than losing the fix).
SPEAKER_VIEW = 'plugin/notes/notes.js'
SPEAKER_VIEW_FIXES = [
    ("currentSlide.setAttribute( 'width', 1280 );",
     "currentSlide.setAttribute( 'title', 'The slide on screen' ); currentSlide.setAttribute( 'width', 1280 );"),
    ("upcomingSlide.setAttribute( 'width', 640 );",
     "upcomingSlide.setAttribute( 'title', 'The next slide' ); upcomingSlide.setAttribute( 'width', 640 );"),
    ('<span class=\\"reset-button\\">Click to Reset</span>',
     '<button type=\\"button\\" class=\\"reset-button\\">Reset the timer</button>'),
    ('<select class=\\"speaker-layout-dropdown\\"></select>',
     '<select class=\\"speaker-layout-dropdown\\" aria-label=\\"Layout of the speaker view\\"></select>'),
    ('</head>',
     '<style>.speaker-controls-time .reset-button { font: inherit; text-transform: none; background: none; '
     'border: 0; padding: 0 2px; cursor: pointer; } .speaker-controls-time .reset-button:focus-visible '
     '{ opacity: 1; outline: 3px solid #0b57d0; outline-offset: 2px; } '
     '#speaker-layout:focus-within { outline: 3px solid #0b57d0; outline-offset: 2px; } '
     '.speaker-controls-time span.mute { opacity: 1; color: #767676; }</style></head>'),
]


def fix_speaker_view(path):
    """Apply :data:`SPEAKER_VIEW_FIXES` to a copy of notes.js (idempotent); ValueError if a text to
    replace is not there exactly once."""
    with open(path, encoding='utf-8') as f:
        text = f.read()
    for old, new in SPEAKER_VIEW_FIXES:
        if new in text:
            continue
        if text.count(old) != 1:
            raise ValueError(f'{path}: expected {old!r} once, found it {text.count(old)} times '
                             '(a new reveal.js? update tools/web/assets.py SPEAKER_VIEW_FIXES)')
        text = text.replace(old, new)
    with open(path, 'w', encoding='utf-8') as f:
        f.write(text)


def copy_reveal(dest):
    total = _copy('reveal.js', REVEAL, dest)
    fix_speaker_view(os.path.join(dest, SPEAKER_VIEW))
    return total


def copy_mathjax2(dest):
    return _copy('mathjax2', MATHJAX2, dest)


def copy_mathjax3(dest):
    """MathJax 3's ``es5`` files, flattened: ``dest/tex-mml-chtml.js`` and what it loads."""
    total = _copy('mathjax3', MATHJAX3, dest + '.tmp')
    if os.path.exists(dest):
        shutil.rmtree(dest)
    os.rename(os.path.join(dest + '.tmp', 'es5'), dest)
    os.rmdir(dest + '.tmp')
    return total


def copy_file(package, path, dest):
    shutil.copyfile(os.path.join(MODULES, package, path), dest)
    return os.path.getsize(dest)


def size(path):
    """Bytes under ``path`` (a file or a directory)."""
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(b, f)) for b, _, fs in os.walk(path) for f in fs)


if __name__ == '__main__':
    install()
