"""Which GPUs an MXNet build can run on: the machine code in its library, and a GPU's compute
capability (notebook 00; :mod:`helpers.devices` leaves out a GPU that the installed MXNet has no
code for, and says so).

A CUDA library keeps its GPU code in the ELF section ``.nv_fatbin``: a run of fat binaries, each
with one entry per GPU architecture, either SASS (machine code for one architecture) or PTX (an
intermediate form the driver compiles for the GPU it finds). NVIDIA's rules (CUDA C++ Programming
Guide, "Binary Compatibility" and "PTX Compatibility"): SASS built for ``sm_XY`` runs only on GPUs of
compute capability ``X.Z`` with ``Z >= Y``, the same major version (NVIDIA does not promise it on
Tegra, e.g. Jetson's 8.7; these are x86-64 wheels); PTX for ``compute_XY`` runs on any GPU of
compute capability ``X.Y`` or later. ``mxnet-cu112`` 1.9.1 carries SASS for sm_50, 60,
70, 80 and 86 and no PTX (``python -m tools.check_gpu_libraries`` reads it, and NVIDIA's
``cuobjdump`` agrees): it runs on Maxwell to Ada (5.0 to 8.9), not on Hopper (H100, 9.0) or later,
where every kernel compiled into ``libmxnet.so`` fails with ``cudaErrorNoKernelImageForDevice``: a
fat binary cut out of it does not load on an H100 (``CUDA_ERROR_NO_BINARY_FOR_GPU``, docs/gpu-runs/).

Nothing here imports MXNet or needs a GPU; :func:`compute_capability` asks the driver, when there
is one.
"""
import collections
import ctypes
import functools
import mmap
import os
import struct

from helpers import checks

__all__ = ['fatbin', 'containers', 'library_code', 'runs_on', 'compute_capability']

FATBIN_MAGIC = 0xBA55ED50
KIND = {1: 'PTX', 2: 'SASS'}
# cuda.h: CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR and _MINOR
_CC_ATTRIBUTES = (75, 76)


def _buffer(data):
    if isinstance(data, (bytes, bytearray, memoryview, mmap.mmap)):
        return data
    raise TypeError(f'data must be bytes (a .nv_fatbin section), got {type(data).__name__}')


def containers(data):
    """The fat binaries in ``data`` (the bytes of a ``.nv_fatbin`` section; notebook 00) as a list of
    ``(offset, length, [(kind, arch), ...])``, kind ``'SASS'`` or ``'PTX'``, arch ``10 * major +
    minor`` (86 is sm_86). The layout is the one NVIDIA's cuobjdump reads: a 16-byte header (magic
    0xBA55ED50, version, header size, payload size), then entries with kind, header size, payload
    size and, at byte 28 of the entry, the architecture."""
    data = _buffer(data)
    found, i = [], 0
    while i + 16 <= len(data):
        magic, _version, header, size = struct.unpack_from('<IHHQ', data, i)
        if magic != FATBIN_MAGIC:
            i += 8                      # fat binaries are 8-byte aligned, with padding between them
            continue
        j, end, entries = i + header, min(i + header + size, len(data)), []
        while j + 32 <= end:
            kind, _, entry_header, payload = struct.unpack_from('<HHIQ', data, j)
            arch, = struct.unpack_from('<I', data, j + 28)
            entries.append((KIND.get(kind, f'kind {kind}'), arch))
            j += max(entry_header + payload, 32)
        found.append((i, end - i, entries))
        i = end
    return found


def _section(path, name):
    """The bytes of ELF section ``name`` of the 64-bit little-endian file at ``path`` (empty when it
    has no such section), read through mmap: libmxnet.so is 890 MB."""
    with open(path, 'rb') as f:
        if f.read(6) != b'\x7fELF\x02\x01':
            raise ValueError(f'path: {path} is not a 64-bit little-endian ELF library')
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    shoff, = struct.unpack_from('<Q', mm, 0x28)
    entsize, count, names = struct.unpack_from('<HHH', mm, 0x3A)

    def header(i):                      # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size
        return struct.unpack_from('<IIQQQQ', mm, shoff + i * entsize)

    strings = header(names)[4]
    for i in range(count):
        at, _, _, _, offset, size = header(i)
        start = strings + at
        if mm[start:mm.find(b'\0', start)] == name.encode():
            return memoryview(mm)[offset:offset + size]
    return memoryview(b'')


def _library(path):
    if path is None:
        import mxnet
        path = mxnet.libinfo.find_lib_path()[0]
    path = os.fspath(checks.path(path, 'path'))
    if not os.path.isfile(path):
        raise ValueError(f'path: no file {path!r}')
    return os.path.realpath(path)


def fatbin(path=None):
    """The bytes of the ``.nv_fatbin`` section of a library (notebook 00; by default the installed
    MXNet's ``libmxnet.so``), without reading the rest of it; empty for a build without CUDA."""
    return _section(_library(path), '.nv_fatbin')


@functools.lru_cache(maxsize=None)
def _code(path):
    return collections.Counter(e for _, _, entries in containers(_section(path, '.nv_fatbin')) for e in entries)


def library_code(path=None):
    """``Counter({(kind, arch): fat binaries})`` of the GPU code in a library (notebook 00): by
    default the installed MXNet's ``libmxnet.so``. Empty for a build without CUDA."""
    return collections.Counter(_code(_library(path)))


def runs_on(code, capability):
    """Whether GPU code with these ``(kind, arch)`` entries (:func:`library_code`) can run on a GPU
    of compute capability ``(major, minor)`` (notebook 00), by NVIDIA's rules (module docstring)."""
    if isinstance(code, (str, bytes)) or not hasattr(code, '__iter__'):
        raise TypeError(f'code must be (kind, arch) pairs such as ("SASS", 86), got {code!r}')
    code = list(code)
    if not all(isinstance(e, tuple) and len(e) == 2 and e[0] in ('SASS', 'PTX') for e in code):
        raise ValueError(f'code must be (kind, arch) pairs with kind "SASS" or "PTX", got {code!r}')
    code = [(kind, checks.whole(arch, 'code: arch', 10, 999)) for kind, arch in code]
    if not isinstance(capability, tuple):
        raise TypeError(f'capability must be a (major, minor) tuple, got {capability!r}')
    if len(capability) != 2:
        raise ValueError(f'capability must be a (major, minor) tuple, got {capability!r}')
    major = checks.whole(capability[0], 'capability: major', 1, 99)
    cc = 10 * major + checks.whole(capability[1], 'capability: minor', 0, 9)
    return any((kind == 'SASS' and arch // 10 == major and arch <= cc) or (kind == 'PTX' and arch <= cc)
               for kind, arch in code)


def compute_capability(device_id):
    """``(major, minor)`` of the GPU that CUDA numbers ``device_id`` (under ``CUDA_VISIBLE_DEVICES``,
    among the visible ones, as MXNet numbers them; notebook 00), from the driver (libcuda.so.1), or
    None where there is no driver or no such GPU. Never raises for the machine it runs on."""
    device_id = checks.whole(device_id, 'device_id', 0, checks.MAX_DEVICES)
    try:
        cuda = ctypes.CDLL('libcuda.so.1')
    except OSError:
        return None
    device, values = ctypes.c_int(), [ctypes.c_int(), ctypes.c_int()]
    if cuda.cuInit(0) or cuda.cuDeviceGet(ctypes.byref(device), device_id):
        return None
    if any(cuda.cuDeviceGetAttribute(ctypes.byref(v), a, device) for v, a in zip(values, _CC_ATTRIBUTES)):
        return None
    return values[0].value, values[1].value
