"""helpers.gpu_code (notebook 00): which GPUs a library has machine code for (its .nv_fatbin), and
NVIDIA's rule for what runs where. The fat binaries here are built by hand in the layout cuobjdump
reads; `python -m tools.check_gpu_libraries` reads mxnet-cu112's libmxnet.so and checks the reader
against cuobjdump (docs/gpu.md)."""
import re
import struct
import subprocess

import mxnet
import pytest

from helpers import gpu_code


def entry(kind, arch, payload=b'\0' * 24):
    header = struct.pack('<HHIQIIHHI', kind, 0x0101, 64, len(payload), 0, 0, 0, 0, arch).ljust(64, b'\0')
    return header + payload


def fat_binary(*entries):
    body = b''.join(entries)
    return struct.pack('<IHHQ', gpu_code.FATBIN_MAGIC, 1, 16, len(body)) + body


def test_every_entry_of_every_fat_binary_is_read_across_padding():
    mxnet_like = fat_binary(*(entry(2, a) for a in (50, 60, 70, 80, 86)))
    data = b'\0' * 8 + mxnet_like + b'\0' * 16 + fat_binary(entry(1, 52), entry(2, 90))
    found = gpu_code.containers(data)
    assert [c[0] for c in found] == [8, 8 + len(mxnet_like) + 16]
    assert found[0][2] == [('SASS', a) for a in (50, 60, 70, 80, 86)] and found[1][2] == [('PTX', 52), ('SASS', 90)]
    assert gpu_code.containers(b'') == gpu_code.containers(b'\0' * 64) == []


def test_a_truncated_fat_binary_is_read_as_far_as_it_goes():
    data = fat_binary(entry(2, 70), entry(2, 80))
    assert gpu_code.containers(data[:-100])[0][2] == [('SASS', 70)]


def test_the_section_is_the_one_readelf_lists():
    lib = mxnet.libinfo.find_lib_path()[0]
    out = subprocess.run(['readelf', '-S', '-W', lib], capture_output=True, text=True, check=True).stdout
    size = int(re.search(r'\.rodata\s+PROGBITS\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)', out).group(1), 16)
    assert gpu_code._section(lib, '.rodata').nbytes == size > 0
    has_cuda = mxnet.runtime.Features().is_enabled('CUDA')
    assert bool(gpu_code.fatbin().nbytes) == bool(gpu_code.library_code()) == has_cuda


def test_a_file_that_is_no_library_is_a_value_error(tmp_path):
    (tmp_path / 'x.so').write_bytes(b'not an ELF file')
    with pytest.raises(ValueError, match='path: .* is not a 64-bit little-endian ELF'):
        gpu_code.library_code(tmp_path / 'x.so')
    with pytest.raises(ValueError, match='path: no file'):
        gpu_code.fatbin(tmp_path / 'missing.so')


@pytest.mark.parametrize('cc, runs', [((5, 0), True), ((5, 2), True), ((7, 5), True), ((8, 6), True),
                                      ((8, 9), True), ((9, 0), False), ((10, 0), False), ((12, 0), False),
                                      ((3, 5), False)])
def test_sass_runs_only_on_its_own_major_version_at_or_above_its_minor(cc, runs):
    mxnet_cu112 = [('SASS', a) for a in (50, 60, 70, 80, 86)]
    assert gpu_code.runs_on(mxnet_cu112, cc) is runs


def test_sass_for_a_later_minor_does_not_run_on_an_earlier_one_and_ptx_runs_on_anything_later():
    assert not gpu_code.runs_on([('SASS', 86)], (8, 0))
    assert gpu_code.runs_on([('PTX', 86)], (9, 0)) and gpu_code.runs_on({('PTX', 86): 3}, (12, 0))
    assert not gpu_code.runs_on([('PTX', 86)], (8, 0)) and not gpu_code.runs_on([], (8, 0))


def test_without_a_driver_the_capability_is_unknown():
    if mxnet.context.num_gpus() == 0:
        assert gpu_code.compute_capability(0) is None
    assert gpu_code.compute_capability(1000) is None
