# float16 and bfloat16 conv2d on tensor cores by default (docs/operators.md, "Tensor cores"): an
# implicit GEMM (Schedule.reindex) whose im2col gathers are inlined into the mma.sync kernel's
# shared tiles, NHWC and NCHW, any extents, split-K for few pixels and long windows, the stem's 3
# channels through a stored copy; checked in the SPMD interpreter against a float64 convolution
# and compiled by NVRTC.

import re

import ml_dtypes
import numpy as np
import pytest

import tessel as ts
from tessel import op

SM90 = "cuda -arch=sm_90"


def conv_ref(x, w, stride, pad, nhwc):
    """float64 convolution: x NHWC / NCHW, w HWIO / OIHW."""
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    if not nhwc:
        x = x.transpose(0, 2, 3, 1)
        w = w.transpose(2, 3, 1, 0)
    n, h, wd, c = x.shape
    r, s, _, k = w.shape
    xp = np.zeros((n, h + 2 * pad, wd + 2 * pad, c))
    xp[:, pad:pad + h, pad:pad + wd, :] = x
    oh = (h + 2 * pad - r) // stride + 1
    ow = (wd + 2 * pad - s) // stride + 1
    out = np.zeros((n, oh, ow, k))
    for i in range(r):
        for j in range(s):
            patch = xp[:, i:i + stride * oh:stride, j:j + stride * ow:stride, :]
            out += np.einsum("nhwc,ck->nhwk", patch, w[i, j])
    return out if nhwc else out.transpose(0, 3, 1, 2)


def conv(n, h, c, k, r, stride, pad, nhwc=True, dtype="float16", epilogue=False, target=SM90,
         out_dtype=None, instruction="mma_sync"):
    """Builds the conv under the default schedule, runs it in the interpreter against conv_ref;
    returns the lowered function's text and the kernel's CUDA source."""
    xs = (n, h, h, c) if nhwc else (n, c, h, h)
    ws = (r, r, c, k) if nhwc else (k, c, r, r)
    x = ts.placeholder(xs, dtype=dtype, name="x")
    w = ts.placeholder(ws, dtype=dtype, name="w")
    f = op.conv2d_nhwc if nhwc else op.conv2d_nchw
    y = f(x, w, stride=stride, padding=pad, out_dtype=out_dtype)
    args = [x, w]
    npdt = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16
    rng = np.random.default_rng(0)
    vx = rng.uniform(-1, 1, xs).astype(npdt)
    vw = rng.uniform(-1, 1, ws).astype(npdt)
    arrays = [vx, vw]
    ref = conv_ref(vx, vw, stride, pad, nhwc)
    if epilogue:  # + bias (per output channel), relu
        bshape = (k,) if nhwc else (k, 1, 1)
        b = ts.placeholder(bshape, dtype=dtype, name="b")
        vb = rng.uniform(-1, 1, bshape).astype(npdt)
        y = op.relu(op.add(y, b))
        args.append(b)
        arrays.append(vb)
        ref = np.maximum(ref + vb.astype(np.float64), 0)
    s = op.default_schedule(y, ts.Target(target))
    fn = ts.lower(s, args + [y])
    text = str(fn)
    assert instruction in text
    out = np.full(ref.shape, np.nan, dtype=np.float32 if out_dtype == "float32" else npdt)
    fn.run(*arrays, out)
    # float32 accumulation; the 16-bit output rounded once
    tol = 1e-5 if out_dtype == "float32" else 1e-2 if dtype == "bfloat16" else 2e-3
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=tol, atol=tol * 8)
    return text, ts.build(s, args + [y], target=target).get_source("cu")


@pytest.mark.parametrize("n,h,c,k,r,stride,pad", [
    (1, 9, 16, 24, 3, 1, 1),    # a 3 x 3 window, pixels and output channels at no tile's edge
    (2, 7, 32, 40, 3, 2, 1),    # stride 2, two images in the pixels
    (1, 10, 64, 48, 1, 1, 0),   # 1 x 1: a plain matrix product of the pixels
    (1, 8, 64, 16, 1, 2, 0),    # 1 x 1 stride 2
    (2, 14, 64, 32, 3, 1, 1),   # pipelined k tiles across the window's rows (nested guards)
], ids=str)
def test_nhwc_conv_runs_on_tensor_cores(n, h, c, k, r, stride, pad):
    _, cu = conv(n, h, c, k, r, stride, pad)
    # The input's im2col tile is copied 16 bytes (8 channels) at a time by cp.async, the padding
    # zero-filled by the copy itself; the HWIO weight's tile 8 output channels at a time into a
    # k-major tile, its fragments loaded by ldmatrix .trans: nothing stored first.
    assert "cp.async.cg.shared.global" in cu and "mma.sync" in cu
    assert "gather_global" not in cu and "tsl_ldmatrix_x4_trans(w_gather" in cu
    # No tile element stored by a plain assignment: every copy is asynchronous, the edge and
    # the window's padding included (nested guards, one condition for the copy's 8 lanes).
    assert re.search(r"\b(x|conv2d_nhwc_pad)_gather_shared\[[^\n]*\] = ", cu) is None


def test_nchw_bfloat16_and_an_epilogue():
    conv(1, 9, 16, 24, 3, 1, 1, nhwc=False)
    conv(2, 6, 16, 32, 3, 1, 1, dtype="bfloat16", epilogue=True)
    conv(2, 6, 16, 32, 3, 1, 1, nhwc=False, epilogue=True)


def test_a_float32_output_and_an_unfused_bias():
    """The conv itself the output (float32: no conversion to fuse), and a bias added to a batch
    of one (op.add reads the conv at index 0 of the batch axis, which the epilogue cannot fuse):
    the conv is still a tensor-core kernel, the bias a kernel of its own."""
    conv(1, 6, 16, 32, 3, 1, 1, out_dtype="float32")
    text, cu = conv(1, 6, 16, 32, 3, 1, 1, epilogue=True)
    assert cu.count("__global__") == 2


def test_three_input_channels_take_a_stored_copy():
    """The stem's 3 channels (k = 7 x 7 x 3 = 147): the im2col is stored with rows padded to 16
    bytes, the k tiles zero-padded past 147."""
    text, _ = conv(1, 12, 3, 16, 7, 2, 3)
    assert ".global" in text


def test_few_pixels_and_a_long_window_split_k():
    """4 x 4 pixels, 3 x 3 x 128 = 1152 long: the reduction is split into parts that divide it
    (the inlined gathers read real elements past k), summed by a second kernel."""
    text, cu = conv(1, 4, 128, 32, 3, 1, 1)
    assert ".rf" in text
    assert cu.count("__global__") == 2  # the parts (the weight read in place) and their sum


def test_nvrtc_compiles_resnet_layers_for_sm80_and_sm90():
    for arch in ("sm_80", "sm_90"):
        for n, h, c, k, r, stride, pad in ((1, 56, 64, 64, 3, 1, 1), (8, 28, 512, 128, 1, 1, 0),
                                           (1, 7, 512, 512, 3, 1, 1), (1, 224, 3, 64, 7, 2, 3)):
            x = ts.placeholder((n, h, h, c), dtype="float16", name="x")
            w = ts.placeholder((r, r, c, k), dtype="float16", name="w")
            y = op.conv2d_nhwc(x, w, stride=stride, padding=pad)
            target = "cuda -arch=" + arch
            ptx = ts.build(op.default_schedule(y, ts.Target(target)), [x, w, y],
                           target=target).get_source("ptx")
            assert "mma.sync.aligned.m16n8k16.row.col.f32.f16" in ptx


SM90A_2 = "cuda -arch=sm_90a -num-cores=2"


@pytest.mark.parametrize("n,h,c,k,r,stride,pad,dtype,epilogue", [
    (1, 12, 64, 128, 3, 1, 1, "float16", False),   # 144 pixels: two block rows, the second 16
    (3, 15, 64, 128, 3, 2, 1, "bfloat16", True),   # stride 2, 192 pixels, + bias and relu
    (1, 12, 128, 128, 1, 1, 0, "float16", False),  # 1 x 1: k = 128, two k tiles
], ids=str)
def test_sm_90a_conv_runs_on_wgmma_with_a_shared_epilogue(n, h, c, k, r, stride, pad, dtype,
                                                           epilogue):
    """On sm_90a an NHWC conv whose channels come in eights and whose window is whole k tiles of
    64 is tutorial 08's kernel: the im2col gathers inlined into 16-byte cp.async copies of the
    swizzled tiles (the HWIO weight's in column panels of 64 output channels, n-major, which the
    _bt wgmma reads with B's transpose bit), the accumulators stored into a float32 tile in
    shared memory, which the conv (and its bias and activation) copies out with guards."""
    text, cu = conv(n, h, c, k, r, stride, pad, dtype=dtype, epilogue=epilogue, target=SM90A_2,
                    instruction="wgmma(")
    assert cu.count("__global__") == 1
    assert "cp.async" in cu
    assert "(shared)" in text.split("wgmma(")[0]  # the epilogue's tile


def test_sm_90a_resnet_layers_choose_wgmma_where_its_tiles_fill_the_gpu():
    """Batch 8's 56 x 56 and 28 x 28 layers fill the 132 SMs with 128-row tiles and take wgmma
    (NVRTC compiles it); its 14 x 14 and 7 x 7 layers split k into parts that divide it, the
    parts' tiles filling the SMs (two kernels: the partial sums on wgmma, their sum); at batch 1
    even split tiles leave them idle, and mma.sync's smaller tiles serve."""
    for (n, h, c, k, r), want, kernels in (
            ((8, 56, 64, 64, 3), True, 1), ((8, 28, 128, 128, 3), True, 1),
            ((8, 56, 64, 256, 1), True, 1), ((8, 14, 256, 256, 3), True, 2),
            ((8, 7, 512, 512, 3), True, 2), ((1, 56, 64, 64, 3), False, 1)):
        x = ts.placeholder((n, h, h, c), dtype="float16", name="x")
        w = ts.placeholder((r, r, c, k), dtype="float16", name="w")
        y = op.conv2d_nhwc(x, w, stride=1, padding=r // 2)
        target = "cuda -arch=sm_90a"
        m = ts.build(op.default_schedule(y, ts.Target(target)), [x, w, y], target=target)
        ptx = m.get_source("ptx")
        assert ("wgmma.mma_async.sync.aligned.m64n" in ptx) == want, (n, h, c, k, r)
        assert ("mma.sync.aligned.m16n8k16" in ptx) != want, (n, h, c, k, r)
        assert m.get_source("cu").count("__global__") == kernels, (n, h, c, k, r)


@pytest.mark.parametrize("n,h,c,k", [(1, 11, 256, 128), (1, 8, 256, 128)], ids=str)
def test_sm_90a_conv_splits_k_on_wgmma_below_a_wave(n, h, c, k):
    """Too few tiles for the SMs (8 here): the 3 x 3 x 256 = 2304-long window in 9 parts of 256
    that divide it (the inlined gathers read real elements past a part), each part's partial
    sums a wgmma product stored directly, its stores stopping at the 121 pixels' edge (or tiles
    of one warp group for 64), a second kernel summing the parts into the conv."""
    text, cu = conv(n, h, c, k, 3, 1, 1, target="cuda -arch=sm_90a -num-cores=8",
                    instruction="wgmma(")
    assert ".rf" in text and 'thread_binding(0, 9, "blockIdx.z")' in text
    assert cu.count("__global__") == 2
