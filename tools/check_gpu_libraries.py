"""Check, without a GPU, that requirements-gpu.txt brings every CUDA library mxnet-cu112 links against.

    python -m tools.check_gpu_libraries [WHEEL_DIR]

Downloads (once, into WHEEL_DIR, default /tmp/mxnet-cu112-wheels; about 2 GB) the mxnet-cu112 wheel
and the nvidia-*-cu11 wheels named in requirements-gpu.txt, reads the ELF `NEEDED` entries of
libmxnet.so and, transitively, of every CUDA library it pulls in, and reports each soname with the
wheel that provides it. Exits 1 if a CUDA soname is provided by no wheel. Sonames of the driver
(libcuda.so.1) and of the C/C++ runtime are expected from the system. Not part of `make test`: it
needs the downloads and `readelf` (binutils).

It then reports the NVIDIA driver this pip path needs. PyPI's nvidia-*-cu11 wheels are CUDA 11.7/11.8
builds, not 11.2: libmxnet.so (built for 11.2) runs on the newer runtime thanks to CUDA's minor-version
compatibility (any CUDA 11.x application on a driver >= 450.80.02), *except* for PTX: libmxnet.so
JIT-compiles its fused operators with NVRTC and loads them as PTX (it imports nvrtcGetPTX, not
nvrtcGetCUBIN), and "applications that compile device code to PTX will not work on older drivers"
(NVIDIA, CUDA Compatibility guide, "Application Considerations for Minor Version Compatibility"). PTX
made by NVRTC 11.x needs the driver of CUDA 11.x (CUDA Toolkit release notes, "CUDA Toolkit and
Corresponding Driver Versions"): with these wheels, that is the floor unless operator fusion is turned
off (MXNET_USE_FUSION=0). The conda path (environment.yml: CUDA 11.2) needs the 11.2 driver, >= 460.27.03.
"""
import glob
import os
import re
import subprocess
import sys
import zipfile

from tools.nb import ROOT
SYSTEM = re.compile(r'^(libc|libm|libdl|librt|libpthread|ld-linux.*|libstdc\+\+|libgcc_s|libgomp|'
                    r'libcuda|libz|libgfortran|libopenblas|libquadmath)\.so')


def requirements():
    # mxnet-cu112 is in requirements-gpu-nodeps.txt on Python 3.13 (its metadata says numpy<2)
    lines = [l for name in ('requirements-gpu.txt', 'requirements-gpu-nodeps.txt')
             for l in open(os.path.join(ROOT, name)).read().splitlines()]
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
    report_driver_floor(wheel_dir, os.path.join(extracted, provides['libmxnet.so'][1]))
    return 1 if missing else 0


# Linux driver of the CUDA 11.x toolkits this project meets (CUDA Toolkit release notes, "CUDA Toolkit
# and Corresponding Driver Versions", GA releases); look others up there.
TOOLKIT_DRIVER = {(11, 2): '460.27.03', (11, 8): '520.61.05'}
MINOR_VERSION_COMPAT_DRIVER = '450.80.02'


def report_driver_floor(wheel_dir, libmxnet):
    """Print the CUDA version of the runtime and NVRTC wheels and the driver each needs."""
    versions = {}
    for wheel in glob.glob(os.path.join(wheel_dir, 'nvidia_cuda_*_cu11-*.whl')):
        m = re.match(r'nvidia_cuda_(\w+?)_cu11-(\d+)\.(\d+)', os.path.basename(wheel))
        if m:
            versions[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    syms = subprocess.run(['readelf', '--dyn-syms', '-W', libmxnet], capture_output=True, text=True,
                          check=True).stdout
    ptx, cubin = 'nvrtcGetPTX@' in syms, 'nvrtcGetCUBIN' in syms
    print(f'\nlibmxnet.so imports nvrtcGetPTX: {ptx}, nvrtcGetCUBIN: {cubin} '
          f'(fused operators are {"loaded as PTX, JIT-compiled by the driver" if ptx and not cubin else "cubins"})')
    runtime, nvrtc = versions.get('runtime'), versions.get('nvrtc')
    print(f'CUDA runtime wheel: {runtime}, needs a driver >= {MINOR_VERSION_COMPAT_DRIVER} '
          '(minor-version compatibility across CUDA 11.x)')
    if nvrtc:
        floor = TOOLKIT_DRIVER.get(nvrtc, f'the one of CUDA {nvrtc[0]}.{nvrtc[1]} (release notes)')
        print(f'NVRTC wheel: CUDA {nvrtc[0]}.{nvrtc[1]}: its PTX needs a driver >= {floor} (Linux), '
              'or MXNET_USE_FUSION=0 to avoid run-time PTX')
    print(f'conda path (environment.yml, CUDA 11.2): driver >= {TOOLKIT_DRIVER[(11, 2)]}')


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else '/tmp/mxnet-cu112-wheels'))
