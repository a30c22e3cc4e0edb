"""`make lab` -- the README's first command -- serves JupyterLab on localhost with the notebooks.

Runs the real Makefile target on a free port with a known token, asks the server's REST API for
the notebook list, then stops the server (and every process it started). tests/test_browser.py
opens the same server in Chromium (figures, the landing page, the kernel, no pop-up)."""
import contextlib
import glob
import json
import os
import re
import socket
import subprocess
import time
import urllib.request

import pytest

from conftest import NOTEBOOKS, ROOT
from helpers import procs
from helpers.job import loopback_address

TOKEN = 'nbval-lab-test'


def _free_port(host):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _get(url, timeout=5):
    req = urllib.request.Request(url, headers={'Authorization': f'token {TOKEN}'})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, r.read()


def start_page():
    """What `make lab` opens: the contents notebook, or the first notebook while there is none."""
    contents = os.path.join(NOTEBOOKS, 'contents.ipynb')
    if os.path.exists(contents):
        return 'notebooks/contents.ipynb'
    return 'notebooks/' + os.path.basename(sorted(glob.glob(os.path.join(NOTEBOOKS, '[0-9][0-9]-*.ipynb')))[0])


@contextlib.contextmanager
def lab_server(log, env=None, timeout=120, args=''):
    """Run `make lab` on a free port of a loopback address of its own; yield ``(base_url, log)`` once
    the REST API answers. Stops the server and everything it started on exit, and checks that the
    port is free again. The address of its own: two test suites at once (two clones) could otherwise
    be handed one port, and JupyterLab, finding it taken, moves to the next one, while the test would
    ask the other suite's server, which has the same token."""
    host = loopback_address()
    port = _free_port(host)
    proc = subprocess.Popen(
        ['make', '--no-print-directory', 'lab', f'LAB_IP={host}', f'LAB_PORT={port}',
         f'LAB_ARGS=--IdentityProvider.token={TOKEN} --ServerApp.open_browser=False {args}'.rstrip()],
        cwd=ROOT, stdout=open(log, 'w'), stderr=subprocess.STDOUT, start_new_session=True,
        env={**os.environ, 'PYTHONUNBUFFERED': '1', **(env or {})})
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                pytest.fail(f'make lab exited with {proc.returncode}:\n{log.read_text()}')
            try:
                _get(f'http://{host}:{port}/api/contents/')
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f'JupyterLab did not answer within {timeout} s:\n{log.read_text()}')
                time.sleep(0.5)
        yield f'http://{host}:{port}', log
    finally:
        # make, JupyterLab and its kernels: a kernel leads a session of its own, and a JupyterLab
        # given SIGTERM while a kernel runs can hang in its shutdown, its port already closed (a
        # server and a kernel of a fresh-clone run were still there 38 minutes after it ended).
        left = procs.kill_group(proc, grace=5)        # then SIGKILL: a hung shutdown costs 5 s, not 20
        assert not left, f'JupyterLab left processes behind: {left}'
    time.sleep(0.5)
    with socket.socket() as s:  # no one listens on the port any more: the server is gone
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # ignore our own TIME_WAIT connections
        s.bind((host, port))


def test_make_lab_serves_the_notebooks_on_localhost(tmp_path):
    with lab_server(tmp_path / 'lab.log') as (base, log):
        # The repository root is served (the notebooks link ../img/*.svg), the notebooks in it.
        status, body = _get(f'{base}/api/contents/notebooks')
        listing = json.loads(body)
        served = sorted(item['name'] for item in listing['content'] if item['type'] == 'notebook')
        expected = sorted(os.path.basename(p) for p in glob.glob(os.path.join(NOTEBOOKS, '*.ipynb')))
        assert served == expected and served
        for svg in glob.glob(os.path.join(ROOT, 'img', '*.svg')):
            status, _ = _get(f'{base}/files/img/{os.path.basename(svg)}')
            assert status == 200
        status, page = _get(f'{base}/lab')
        assert status == 200 and b'JupyterLab' in page
        # It prints the URL to open, on the address it binds, landing on the contents; unless told otherwise
        # (as here: an address of this test's own, lab_server says why), that is 127.0.0.1.
        assert re.search(r'^LAB_IP\s*\?=\s*127\.0\.0\.1\s*$', open(os.path.join(ROOT, 'Makefile')).read(), re.M)
        url = f'{base}/lab/tree/{start_page()}?token='  # a token set by hand is printed masked
        deadline = time.monotonic() + 30
        while url not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert url in log.read_text()
