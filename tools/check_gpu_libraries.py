"""Check, without a GPU, that requirements-gpu.txt brings every CUDA library mxnet-cu112 links against.

    python tools/check_gpu_libraries.py [WHEEL_DIR]

Downloads (once, into WHEEL_DIR, default /tmp/mxnet-cu112-wheels; about 2 GB) the mxnet-cu112 wheel
and the nvidia-*-cu11 wheels named in requirements-gpu.txt, reads the ELF `NEEDED` entries of
libmxnet.so and, transitively, of every CUDA library it pulls in, and reports each soname with the
wheel that provides it. Exits 1 if a CUDA soname is provided by no wheel. Sonames of the driver
(libcuda.so.1) and of the C/C++ runtime are expected from the system. Not part of `make test`: it
needs the downloads and `readelf` (binutils).
"""
import glob
import os
import re
import subprocess
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYSTEM = re.compile(r'^(libc|libm|libdl|librt|libpthread|ld-linux.*|libstdc\+\+|libgcc_s|libgomp|'
                    r'libcuda|libz|libgfortran|libopenblas|libquadmath)\.so')


def requirements():
    lines = open(os.path.join(ROOT, 'requirements-gpu.txt')).read().splitlines()
    reqs = [l.split('#')[0].strip() for l in lines]
    return [r for r in reqs if r.startswith('nvidia-') or r.startswith('mxnet-cu112')]


def download(wheel_dir):
    os.makedirs(wheel_dir, exist_ok=True)
    subprocess.run([sys.executable, '-m', 'pip', 'download', '--no-deps', '-q', '-d', wheel_dir,
                    *requirements()], check=True, timeout=3600)


def needed(path):
    out = subprocess.run(['readelf', '-d', path], capture_output=True, text=True, check=True).stdout
    return re.findall(r'\(NEEDED\)\s+Shared library: \[([^\]]+)\]', out)


def main(wheel_dir):
    download(wheel_dir)
    extracted = os.path.join(wheel_dir, 'extracted')
    provides = {}
    for wheel in sorted(glob.glob(os.path.join(wheel_dir, '*.whl'))):
        with zipfile.ZipFile(wheel) as z:
            for name in z.namelist():
                if re.search(r'\.so(\.\d+)*$', name):
                    provides.setdefault(os.path.basename(name), (os.path.basename(wheel), name))
                    if not os.path.exists(os.path.join(extracted, name)):
                        z.extract(name, extracted)
    todo, seen, missing = ['libmxnet.so'], set(), []
    while todo:
        lib = todo.pop()
        if lib in seen:
            continue
        seen.add(lib)
        wheel, member = provides[lib]
        for dep in needed(os.path.join(extracted, member)):
            if SYSTEM.match(dep):
                continue
            if dep in provides:
                print(f'{lib:28s} needs {dep:28s} <- {provides[dep][0]}')
                todo.append(dep)
            else:
                print(f'{lib:28s} needs {dep:28s} <- MISSING')
                missing.append(dep)
    print('all CUDA libraries resolved' if not missing else f'missing: {sorted(set(missing))}')
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else '/tmp/mxnet-cu112-wheels'))
