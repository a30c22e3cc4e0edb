"""``import mxnet`` in a fresh process, side by side in one run: the venv as it is against the same
import without each of the three speed-ups of helpers/_mxnet_import.py:

* ``import setuptools`` first: what every process paid before the shim imported the standard
  library's ``distutils.version`` first, on Python 3.9-3.11 (setuptools' ``distutils-precedence.pth``
  made MXNet's ``from distutils.version import ...`` import all of setuptools);
* ``MXDP_COMPILED_OPS=0``: MXNet compiles the source of each of its operator functions, as it does
  without the shim, instead of taking the code ``make setup`` compiled;
* ``MXDP_LAZY_MODULES=0``: the four modules MXNet imports and the series never uses (its
  quantization, text, ONNX and test utilities, two of which import ``scipy.stats``) run with
  ``import mxnet``, as without the shim, instead of when first used.

    python benchmarks/import_mxnet.py            # 9 rounds
    python benchmarks/import_mxnet.py --rounds 21

Each round starts one process of each kind, in alternating order, so that other load on the machine
hits both alike; each process reports the CPU time of its own start-up and import (user + system,
``resource.getrusage``), which a busy machine moves less than wall time. Medians are printed, and
the ratios (setuptools first: below 0.8 on Python 3.9-3.11, 1.0 on 3.12 and later, where nothing
changes). Every notebook's kernel and every process of a distributed job pays this once.
"""
import argparse
import os
import statistics
import subprocess
import sys

CODE = """import resource, sys
{before}import mxnet
r = resource.getrusage(resource.RUSAGE_SELF)
print(r.ru_utime + r.ru_stime, 'setuptools' in sys.modules, sys.modules['distutils'].__file__)
"""
KINDS = {'as it is': ('', {}), 'setuptools first (before)': ('import setuptools\n', {}),
         'operators compiled (before)': ('', {'MXDP_COMPILED_OPS': '0'}),
         'four modules at import (before)': ('', {'MXDP_LAZY_MODULES': '0'})}


def once(before, env):
    out = subprocess.run([sys.executable, '-c', CODE.format(before=before)], capture_output=True, text=True,
                         timeout=120, check=True, env=dict(os.environ, **env)).stdout.split()
    return float(out[0]), out[1] == 'True', out[2]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--rounds', type=int, default=9)
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f'--rounds must be at least 1, got {args.rounds}')
    seconds, seen = {k: [] for k in KINDS}, {}
    for r in range(args.rounds):
        for kind in (list(KINDS) if r % 2 == 0 else list(KINDS)[::-1]):
            cpu, setuptools, distutils = once(*KINDS[kind])
            seconds[kind].append(cpu)
            seen[kind] = (setuptools, distutils)
    print(f'Python {sys.version.split()[0]}, {args.rounds} rounds, CPU seconds of a fresh process that imports mxnet')
    for kind, values in seconds.items():
        setuptools, distutils = seen[kind]
        print(f'  {kind:32} median {statistics.median(values):.2f} s (range {min(values):.2f}-{max(values):.2f});'
              f' setuptools imported: {setuptools}; distutils from {distutils}')
    now, setuptools, compiled, eager = (statistics.median(v) for v in seconds.values())
    print(f'as it is / setuptools first: {now / setuptools:.2f}; as it is / operators compiled: {now / compiled:.2f}; '
          f'as it is / four modules at import: {now / eager:.2f}')


if __name__ == '__main__':
    main()
