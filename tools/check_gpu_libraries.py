"""Check, without a GPU, that requirements-gpu.txt brings every CUDA library mxnet-cu112 links against.

    python -m tools.check_gpu_libraries [WHEEL_DIR]

Downloads (once, into WHEEL_DIR, default /tmp/mxnet-cu112-wheels; about 2 GB) the mxnet-cu112 wheel
and the nvidia-*-cu11 wheels named in requirements-gpu.txt, reads the ELF `NEEDED` entries of
libmxnet.so and, transitively, of every CUDA library it pulls in, and reports each soname with the
wheel that provides it. Exits 1 if a CUDA soname is provided by no wheel. Sonames of the driver
(libcuda.so.1) and of the C/C++ runtime are expected from the system. Not part of `make test`: it
needs the downloads and `readelf` (binutils).

It then reports the NVIDIA driver this pip path needs, and which GPUs libmxnet.so has machine code
for (``report_gpu_code``: the compute capabilities it can run on at all). PyPI's nvidia-*-cu11 wheels are CUDA 11.7/11.8
builds, not 11.2: libmxnet.so (built for 11.2) runs on the newer runtime thanks to CUDA's minor-version
compatibility (any CUDA 11.x application on a driver >= 450.80.02), *except* for PTX: libmxnet.so
JIT-compiles its fused operators with NVRTC and loads them as PTX (it imports nvrtcGetPTX, not
nvrtcGetCUBIN), and "applications that compile device code to PTX will not work on older drivers"
(NVIDIA, CUDA Compatibility guide, "Application Considerations for Minor Version Compatibility"). PTX
made by NVRTC 11.x needs the driver of CUDA 11.x (CUDA Toolkit release notes, "CUDA Toolkit and
Corresponding Driver Versions"): with these wheels, that is the floor unless operator fusion is turned
off (MXNET_USE_FUSION=0). The conda path (environment.yml: CUDA 11.2) needs the 11.2 driver, >= 460.27.03.
"""
import collections
import glob
import os
import re
import subprocess
import sys
import zipfile

from helpers import gpu_code

from tools.nb import ROOT
SYSTEM = re.compile(r'^(libc|libm|libdl|librt|libpthread|ld-linux.*|libstdc\+\+|libgcc_s|libgomp|'
                    r'libcuda|libz|libgfortran|libopenblas|libquadmath)\.so')


# NVIDIA's cuobjdump, from PyPI (290 KB), to cross-check this file's reader of the GPU code.
CUOBJDUMP = 'nvidia-cuda-cuobjdump==13.5.37'


def requirements():
    # mxnet-cu112 is in requirements-gpu-nodeps.txt on Python 3.13 (its metadata says numpy<2)
    lines = [l for name in ('requirements-gpu.txt', 'requirements-gpu-nodeps.txt')
             for l in open(os.path.join(ROOT, name)).read().splitlines()]
    reqs = [l.split('#')[0].strip() for l in lines]
    return [r for r in reqs if r.startswith('nvidia-') or r.startswith('mxnet-cu112')] + [CUOBJDUMP]


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
                if name.endswith('/bin/cuobjdump') and not os.path.exists(os.path.join(extracted, name)):
                    os.chmod(z.extract(name, extracted), 0o755)
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
    libmxnet = os.path.join(extracted, provides['libmxnet.so'][1])
    report_driver_floor(wheel_dir, libmxnet)
    cuobjdump = glob.glob(os.path.join(extracted, 'nvidia', '*', 'bin', 'cuobjdump'))
    agrees = report_gpu_code(libmxnet, cuobjdump[0] if cuobjdump else None)
    return 1 if missing or not agrees else 0


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


# --- Which GPUs libmxnet.so can run on ------------------------------------------------------------
# The reader of the library's GPU code and NVIDIA's rule of what runs where are helpers.gpu_code's
# (helpers.devices uses them to leave out a GPU MXNet cannot run on); cuobjdump cross-checks them.

# Compute capabilities by architecture (CUDA C++ Programming Guide, "Compute Capabilities"; NVIDIA's
# "CUDA GPUs - Compute Capability" list).
ARCHITECTURES = [('Maxwell', (5, 0)), ('Pascal', (6, 0)), ('Volta', (7, 0)), ('Turing', (7, 5)),
                 ('Ampere', (8, 0)), ('Ada (L4, L40, RTX 40xx)', (8, 9)), ('Hopper (H100, H200)', (9, 0)),
                 ('Blackwell (B200)', (10, 0)), ('Blackwell (RTX 50xx)', (12, 0))]


def cuobjdump_code(cuobjdump, path):
    """The count of helpers.gpu_code.library_code, by NVIDIA's cuobjdump ('ELF file 3: x.3.sm_70.cubin')."""
    out = subprocess.run([cuobjdump, '--list-elf', '--list-ptx', path], capture_output=True, text=True,
                         check=True, timeout=600).stdout
    return collections.Counter(({'ELF': 'SASS'}.get(kind, kind), int(arch))
                               for kind, arch in re.findall(r'^(ELF|PTX) file\s+\d+: \S+\.sm_(\d+)\.', out, re.M))


def report_gpu_code(libmxnet, cuobjdump=None):
    """Print which machine code libmxnet.so carries and which GPU generations it can run on; with
    cuobjdump, also whether NVIDIA's tool reads the same. Returns False if the two disagree."""
    code = gpu_code.library_code(libmxnet)
    kinds = ', '.join(f'{kind} sm_{arch} in {n} fat binaries' for (kind, arch), n in sorted(code.items()))
    print(f'\nGPU code in libmxnet.so: {kinds or "none"}')
    for name, cc in ARCHITECTURES:
        print(f'  {name:26s} compute capability {cc[0]}.{cc[1]}: '
              f'{"runs" if gpu_code.runs_on(code, cc) else "NO kernel image (cudaErrorNoKernelImageForDevice)"}')
    if cuobjdump is None:
        return True
    agrees = cuobjdump_code(cuobjdump, libmxnet) == code
    print(f'cuobjdump --list-elf --list-ptx reads {"the same" if agrees else "OTHER code: the reader above is wrong"}')
    return agrees


def write_sample(libmxnet, out):
    """Write the smallest fat-binary container of libmxnet.so that has every architecture the library
    has, for tools/gpu_probe.py to load on a GPU machine (libmxnet.so itself is 890 MB)."""
    data = gpu_code.fatbin(libmxnet)
    archs = set(gpu_code.library_code(libmxnet))
    offset, length, entries = min((c for c in gpu_code.containers(data) if set(c[2]) == archs),
                                  key=lambda c: c[1])
    with open(out, 'wb') as f:
        f.write(data[offset:offset + length])
    return entries


if __name__ == '__main__':
    if len(sys.argv) == 4 and sys.argv[1] == '--sample':        # --sample LIBMXNET OUT
        print(write_sample(sys.argv[2], sys.argv[3]))
        sys.exit(0)
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else '/tmp/mxnet-cu112-wheels'))
