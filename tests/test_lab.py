"""`make lab` -- the README's first command -- serves JupyterLab on localhost with the notebooks.

Runs the real Makefile target on a free port with a known token, asks the server's REST API for
the notebook list, then stops the server (and every process it started)."""
import glob
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request

import pytest

from conftest import NOTEBOOKS, ROOT

TOKEN = 'nbval-lab-test'


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _get(url, timeout=5):
    req = urllib.request.Request(url, headers={'Authorization': f'token {TOKEN}'})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, r.read()


def test_make_lab_serves_the_notebooks_on_localhost(tmp_path):
    port = _free_port()
    log = tmp_path / 'lab.log'
    proc = subprocess.Popen(
        ['make', '--no-print-directory', 'lab', f'LAB_PORT={port}',
         f'LAB_ARGS=--IdentityProvider.token={TOKEN} --ServerApp.open_browser=False'],
        cwd=ROOT, stdout=open(log, 'w'), stderr=subprocess.STDOUT, start_new_session=True,
        env={**os.environ, 'PYTHONUNBUFFERED': '1'})
    try:
        deadline = time.monotonic() + 120
        listing = None
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f'make lab exited with {proc.returncode}:\n{log.read_text()}')
            try:
                status, body = _get(f'http://127.0.0.1:{port}/api/contents/')
                listing = json.loads(body)
                break
            except OSError:
                time.sleep(0.5)
        assert listing is not None, 'JupyterLab did not answer within 120 s'
        served = sorted(item['name'] for item in listing['content'] if item['type'] == 'notebook')
        expected = sorted(os.path.basename(p) for p in glob.glob(os.path.join(NOTEBOOKS, '*.ipynb')))
        assert served == expected and served
        status, page = _get(f'http://127.0.0.1:{port}/lab')
        assert status == 200 and b'JupyterLab' in page
        # It prints the URL to open, on localhost (the default binding).
        url = f'http://127.0.0.1:{port}/lab?token='  # a token set by hand is printed masked
        while url not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert url in log.read_text()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    time.sleep(0.5)
    with socket.socket() as s:  # no one listens on the port any more: the server is gone
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # ignore our own TIME_WAIT connections
        s.bind(('127.0.0.1', port))

