"""tools.every_k (make every-k): one pytest run per k with MXDP_DEVICES=cpu:k, and a table that names
the failing cells of each notebook at each k."""
import os

import pytest

from tools import every_k, nb

PATHS = [os.path.join(nb.NOTEBOOKS, '00-a.ipynb'), os.path.join(nb.NOTEBOOKS, '01-b.ipynb')]
JUNIT = '''<testsuites><testsuite>
<testcase classname="notebooks.00-a.ipynb" name="Cell 0"/>
<testcase classname="notebooks.01-b.ipynb" name="Cell 3"><failure message="x"/></testcase>
<testcase classname="notebooks.01-b.ipynb" name="Cell 5"><error message="timeout"/></testcase>
</testsuite></testsuites>'''


def test_each_k_runs_nbval_with_its_devices_and_reports_failed_cells(monkeypatch, tmp_path):
    seen = []

    def fake_run(command, cwd, env, stdout, stderr):
        seen.append((env['MXDP_DEVICES'], command))
        junit = next(c for c in command if c.startswith('--junitxml=')).split('=', 1)[1]
        with open(junit, 'w') as f:
            f.write(JUNIT)
    monkeypatch.setattr(every_k, 'OUT', str(tmp_path))
    monkeypatch.setattr(every_k.subprocess, 'run', fake_run)
    failed, _ = every_k.run(3, PATHS, cell_timeout=60)
    assert seen[0][0] == 'cpu:3' and '--nbval' in seen[0][1] and '--nbval-cell-timeout=60' in seen[0][1]
    assert failed == {'notebooks/00-a.ipynb': [], 'notebooks/01-b.ipynb': ['cell 3', 'cell 5']}
    text = every_k.table({3: (failed, 60.0)}, [3])
    assert '00-a.ipynb' in text and 'ok' in text and '3,5' in text


@pytest.mark.parametrize('argv', [['--k', '0'], ['--jobs', '0']])
def test_bad_arguments_are_refused(argv):
    with pytest.raises(SystemExit):
        every_k.main(argv)
