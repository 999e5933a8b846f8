"""Compiles a CUDA C source with NVRTC and launches its kernels through the driver API (ctypes),
for benchmark kernels written by hand (gemm_fp16_cuda's register-only mma.sync peak), and gives
the cubin of any source (for a SASS listing by cuobjdump/nvdisasm where the host has them).

The NVRTC used is the one already loaded in the process (tessel's: import tessel first), else
the first libnvrtc found; kernels run in the CUDA runtime's primary context (torch's), on the
stream given, so torch.cuda.Event times them."""
import ctypes
import ctypes.util
import glob
import os
import shutil
import subprocess
import tempfile


def _loaded(name):
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if name in os.path.basename(path):
                    return path
    except OSError:
        pass
    return None


def _nvrtc():
    path = _loaded("libnvrtc.so")
    candidates = [path] if path else []
    candidates += [ctypes.util.find_library("nvrtc") or "", "libnvrtc.so", "libnvrtc.so.13",
                   "libnvrtc.so.12", "/usr/local/cuda/lib64/libnvrtc.so"]
    try:
        import torch  # its wheel ships NVRTC under nvidia/cuda_nvrtc/lib
        base = os.path.dirname(os.path.dirname(torch.__file__))
        candidates += glob.glob(os.path.join(base, "nvidia", "cuda_nvrtc", "lib", "libnvrtc.so*"))
    except ImportError:
        pass
    for c in candidates:
        if not c:
            continue
        try:
            return ctypes.CDLL(c)
        except OSError:
            continue
    raise RuntimeError("no libnvrtc found")


def _check_nvrtc(lib, rc, what):
    if rc != 0:
        lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        raise RuntimeError(f"NVRTC {what}: {lib.nvrtcGetErrorString(rc).decode()}")


def compile_cubin(source, arch, name="kernel.cu"):
    """The cubin of `source` for `arch` ("sm_90"); RuntimeError with NVRTC's log on failure."""
    lib = _nvrtc()
    prog = ctypes.c_void_p()
    _check_nvrtc(lib, lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(),
                                             0, None, None), "create")
    opts = [f"-arch={arch}".encode(), b"-std=c++17"]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    if rc != 0:
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        raise RuntimeError("NVRTC compile failed:\n" + log.value.decode(errors="replace"))
    size = ctypes.c_size_t()
    _check_nvrtc(lib, lib.nvrtcGetCUBINSize(prog, ctypes.byref(size)), "cubin size")
    cubin = ctypes.create_string_buffer(size.value)
    _check_nvrtc(lib, lib.nvrtcGetCUBIN(prog, cubin), "cubin")
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return cubin.raw


def sass(cubin):
    """The SASS listing of a cubin by cuobjdump or nvdisasm, or None if the host has neither."""
    for tool, args in (("cuobjdump", ["-sass"]), ("nvdisasm", [])):
        exe = shutil.which(tool) or (os.path.exists(f"/usr/local/cuda/bin/{tool}") and
                                     f"/usr/local/cuda/bin/{tool}")
        if not exe:
            continue
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(cubin)
            f.flush()
            out = subprocess.run([exe, *args, f.name], capture_output=True, text=True)
            if out.returncode == 0:
                return out.stdout
    return None


class Kernel:
    """A __global__ function of a cubin, loaded in the current (primary) context."""

    def __init__(self, cubin, name):
        self.cuda = ctypes.CDLL("libcuda.so.1")
        # The device's primary context made current in this thread (torch's, when it has made
        # one; without a current context the load fails with CUDA_ERROR_INVALID_CONTEXT, 201).
        self._check(self.cuda.cuInit(0), "init")
        device, ctx = ctypes.c_int(), ctypes.c_void_p()
        self._check(self.cuda.cuDeviceGet(ctypes.byref(device), 0), "device")
        self._check(self.cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), device), "context")
        self._check(self.cuda.cuCtxSetCurrent(ctx), "set context")
        self.module = ctypes.c_void_p()
        self._check(self.cuda.cuModuleLoadData(ctypes.byref(self.module), cubin), "load")
        self.function = ctypes.c_void_p()
        self._check(self.cuda.cuModuleGetFunction(ctypes.byref(self.function), self.module,
                                                  name.encode()), "get " + name)

    def _check(self, rc, what):
        if rc != 0:
            raise RuntimeError(f"CUDA driver: {what} failed with error {rc}")

    def allow_dynamic_shared(self, nbytes):
        """Lets launches ask for `nbytes` of dynamic shared memory (above the default 48 KB)."""
        max_dynamic_shared_size_bytes = 8  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        self._check(self.cuda.cuFuncSetAttribute(self.function, max_dynamic_shared_size_bytes,
                                                 ctypes.c_int(nbytes)), "set shared size")

    def launch(self, grid, block, args, stream=0, shared=0):
        """args: ctypes values (c_void_p for device pointers, c_int, ...); `shared`: bytes of
        dynamic shared memory."""
        ptrs = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
        self._check(self.cuda.cuLaunchKernel(self.function, *grid, *block, shared,
                                             ctypes.c_void_p(stream), ptrs, None), "launch")
