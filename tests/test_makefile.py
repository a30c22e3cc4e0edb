"""The Makefile (docs/maintainers.md): `make help` lists every target, each with its one-line
description; one .PHONY line; nbval's flags are written once."""
import os
import re
import subprocess

from conftest import ROOT

MAKEFILE = open(os.path.join(ROOT, 'Makefile')).read()
TARGETS = re.findall(r'^([a-z][a-z-]*):(?!=)', MAKEFILE, re.M)


def test_help_lists_every_target_with_its_description():
    out = subprocess.run(['make', '-s', 'help'], cwd=ROOT, capture_output=True, text=True, timeout=60).stdout
    listed = dict(re.findall(r'^  make (\S+) +(.+)$', out, re.M))
    assert sorted(listed) == sorted(set(TARGETS)), f'targets without a ## comment: {sorted(set(TARGETS) - set(listed))}'
    assert all(len(text) > 10 for text in listed.values())
    for two in ('lab', 'test'):
        assert two in listed


def test_phony_once_and_nbval_flags_once():
    assert MAKEFILE.count('.PHONY') == 1
    assert MAKEFILE.count('--nbval-current-env') == 1 and MAKEFILE.count('--sanitize-with') == 1
    phony = set(re.search(r'^\.PHONY: ((?:.*\\\n)*.*)$', MAKEFILE, re.M).group(1).replace('\\\n', ' ').split())
    assert set(TARGETS) <= phony, f'not .PHONY: {sorted(set(TARGETS) - phony)}'
