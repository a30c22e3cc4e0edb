"""On a GPU machine, before (or instead of) installing mxnet-cu112: can this GPU run MXNet 1.9.1's
kernels, and how does CUDA number the GPUs a process sees?

    python -m tools.check_gpu_libraries --sample LIBMXNET sample.fatbin   # anywhere, from the wheel
    python -m tools.gpu_probe --fatbin sample.fatbin --cudart libcudart.so.11.0 [--json OUT]

Needs an NVIDIA driver (libcuda.so.1), nothing else: no MXNet, no CUDA toolkit. It

1. reads the GPU's name and compute capability and the driver's CUDA version (CUDA driver API);
2. loads a fat binary cut out of libmxnet.so (the smallest of its containers with every architecture
   the library has; ``tools.check_gpu_libraries.write_sample``): the driver either finds machine code
   for this GPU in it or answers CUDA_ERROR_NO_BINARY_FOR_GPU, as MXNet's own kernels would
   (cudaErrorNoKernelImageForDevice at their first launch). A hand-written PTX kernel, which the
   driver compiles for any GPU, is loaded and launched beside it as the control;
3. counts the GPUs under several ``CUDA_VISIBLE_DEVICES`` values with ``cudaGetDeviceCount`` of the
   CUDA 11 runtime, the call MXNet's ``mx.context.num_gpus()`` makes (``Context::GetGPUCount``),
   each in a fresh process because CUDA reads the variable once, when it starts.

docs/gpu.md says what a run on an H100 showed; its log and JSON are in docs/gpu-runs/.
"""
import argparse
import ctypes
import json
import os
import subprocess
import sys

CUDA_ERROR_NO_BINARY_FOR_GPU = 209
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 75, 76
# A kernel that does nothing, in PTX: the driver JIT-compiles PTX for whatever GPU it runs on.
NOOP_PTX = b""".version 6.0
.target sm_50
.address_size 64
.visible .entry noop() { ret; }
"""


def _cuda():
    cuda = ctypes.CDLL('libcuda.so.1')
    cuda.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    return cuda


def _name(cuda, result):
    text = ctypes.c_char_p()
    cuda.cuGetErrorName(result, ctypes.byref(text))
    return text.value.decode() if text.value else str(result)


def _check(cuda, result, what):
    if result:
        raise RuntimeError(f'{what}: {_name(cuda, result)} ({result})')


def device_and_modules(fatbin_path):
    """Name, compute capability and driver of GPU 0; the result of loading the sample and the PTX."""
    cuda = _cuda()
    _check(cuda, cuda.cuInit(0), 'cuInit')
    version, count, dev = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    _check(cuda, cuda.cuDriverGetVersion(ctypes.byref(version)), 'cuDriverGetVersion')
    _check(cuda, cuda.cuDeviceGetCount(ctypes.byref(count)), 'cuDeviceGetCount')
    _check(cuda, cuda.cuDeviceGet(ctypes.byref(dev), 0), 'cuDeviceGet')
    name = ctypes.create_string_buffer(256)
    _check(cuda, cuda.cuDeviceGetName(name, 256, dev), 'cuDeviceGetName')
    cc = []
    for attribute in (CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR):
        value = ctypes.c_int()
        _check(cuda, cuda.cuDeviceGetAttribute(ctypes.byref(value), attribute, dev), 'cuDeviceGetAttribute')
        cc.append(value.value)
    ctx = ctypes.c_void_p()
    _check(cuda, cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), 'cuDevicePrimaryCtxRetain')
    _check(cuda, cuda.cuCtxSetCurrent(ctx), 'cuCtxSetCurrent')

    def load(image):
        module = ctypes.c_void_p()
        result = cuda.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(image))
        return result, module

    with open(fatbin_path, 'rb') as f:
        sample, _ = load(f.read())
    ptx, module = load(NOOP_PTX)
    launched = None
    if ptx == 0:
        function = ctypes.c_void_p()
        _check(cuda, cuda.cuModuleGetFunction(ctypes.byref(function), module, b'noop'), 'cuModuleGetFunction')
        launched = cuda.cuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, None, None, None) or cuda.cuCtxSynchronize()
    return dict(gpu=name.value.decode(), compute_capability=f'{cc[0]}.{cc[1]}', gpus_seen=count.value,
                driver_cuda=f'{version.value // 1000}.{version.value % 1000 // 10}',
                libmxnet_sample=_name(cuda, sample), ptx_control=_name(cuda, ptx),
                ptx_launch=None if launched is None else _name(cuda, launched))


def count_gpus(cudart):
    """cudaGetDeviceCount of this CUDA runtime, as MXNet calls it: (count, error name)."""
    rt = ctypes.CDLL(cudart)
    rt.cudaGetErrorName.restype = ctypes.c_char_p
    count, version = ctypes.c_int(-1), ctypes.c_int()
    rt.cudaRuntimeGetVersion(ctypes.byref(version))
    error = rt.cudaGetDeviceCount(ctypes.byref(count))
    return dict(count=count.value if error == 0 else 0, error=rt.cudaGetErrorName(error).decode(),
                runtime=f'{version.value // 1000}.{version.value % 1000 // 10}' if version.value else None)


def visible_devices_table(cudart, uuid):
    """cudaGetDeviceCount under each CUDA_VISIBLE_DEVICES value, each in a fresh process."""
    values = [None, '0', '', '1', '0,1', '1,0', '-1,0', uuid]
    rows = []
    for value in values:
        env = {k: v for k, v in os.environ.items() if k != 'CUDA_VISIBLE_DEVICES'}
        if value is not None:
            env['CUDA_VISIBLE_DEVICES'] = value
        out = subprocess.run([sys.executable, '-m', 'tools.gpu_probe', '--count', '--cudart', cudart],
                             env=env, capture_output=True, text=True, timeout=120, check=True).stdout
        rows.append(dict(CUDA_VISIBLE_DEVICES=value, **json.loads(out)))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--fatbin', help='sample fat binary from tools.check_gpu_libraries --sample')
    parser.add_argument('--cudart', required=True, help='path to libcudart.so.11.0 (nvidia-cuda-runtime-cu11)')
    parser.add_argument('--count', action='store_true', help=argparse.SUPPRESS)   # the child's job
    parser.add_argument('--json', help='also write the results here')
    args = parser.parse_args(argv)
    if args.count:
        print(json.dumps(count_gpus(args.cudart)))
        return 0
    if not args.fatbin:
        parser.error('--fatbin is required')
    smi = subprocess.run(['nvidia-smi', '--query-gpu=uuid', '--format=csv,noheader'], capture_output=True,
                         text=True, timeout=60, check=True).stdout.split()
    result = dict(device=device_and_modules(args.fatbin), visible=visible_devices_table(args.cudart, smi[0]))
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(result, f, indent=1)
    d = result['device']
    print(f"GPU 0: {d['gpu']}, compute capability {d['compute_capability']}, driver for CUDA {d['driver_cuda']}, "
          f"{d['gpus_seen']} GPU(s) seen")
    print(f"load libmxnet.so's sample fat binary: {d['libmxnet_sample']}")
    print(f"load the PTX control: {d['ptx_control']}; launch it: {d['ptx_launch']}")
    print('\nCUDA_VISIBLE_DEVICES   cudaGetDeviceCount (CUDA runtime ' + result['visible'][0]['runtime'] + ')')
    for row in result['visible']:
        value = 'unset' if row['CUDA_VISIBLE_DEVICES'] is None else repr(row['CUDA_VISIBLE_DEVICES'])
        print(f"  {value:40s} {row['count']}  {row['error']}")
    return 0


if __name__ == '__main__':
    sys.exit(main())
