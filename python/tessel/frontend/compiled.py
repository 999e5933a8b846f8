"""tessel.compile: a model graph built for a target and runnable from Python.

Each operator group is built once per distinct computation (equal groups share a kernel) with the
schedule `ts.op.default_schedule` chooses: the best record of the tuning logs in scope (`log=`, or
an enclosing `ts.apply_history_best`), else the shipped tuning logs, else the default rules.
Intermediate tensors live in buffers planned by liveness: a buffer is reused by a later group once
every reader of its tensor has run. On a GPU target the buffers and the weights live on the device
(the weights copied there once, at build), and the kernels run one after another on the legacy
default stream."""
import contextlib
import re
import time

import numpy as np

from ..op import default_schedule


class CompiledModel:
    """`m(*inputs)` runs the model on numpy arrays (or CPU DLPack tensors: tessel NDArrays, torch
    CPU tensors; or anything `numpy.asarray` takes) and returns the outputs as numpy arrays (a list for a
    model of several outputs). A model built for a GPU takes CUDA DLPack tensors of its device too
    (tessel NDArrays, torch CUDA tensors: read in place) and host arrays (copied to the device), and
    returns tessel NDArrays on the device (`.numpy()`, or `torch.from_dlpack`), each a copy of
    the output that the next call does not overwrite. `build_seconds`, `kernels` (distinct kernels built) and
    `buffer_bytes` (scratch memory of the intermediate tensors) describe the build; `tuned` names
    the groups whose kernel a record of the log given to `compile` scheduled (a record of the
    group's DAG: its fused-group task, or a bare operator's record where the group is one)."""

    def __init__(self, graph, target, steps, input_slots, output_args, build_seconds, kernels,
                 buffer_bytes, tuned=()):
        self.graph = graph
        self.target = target
        self._steps = steps              # (function, [arrays; None where a model input goes])
        self._input_slots = input_slots  # per model input: [(step, argument)] it feeds
        self._output_args = output_args  # per model output: the array it is written to
        self.build_seconds = build_seconds
        self.kernels = kernels
        self.buffer_bytes = buffer_bytes
        self.tuned = list(tuned)

    def __call__(self, *inputs):
        g = self.graph
        if len(inputs) != len(g.inputs):
            raise TypeError(f"the model takes {len(g.inputs)} inputs "
                            f"({[v.name for v in g.inputs]}), got {len(inputs)}")
        if self.target.kind == "cuda":
            return self._run_on_device(inputs)
        for v, uses, x in zip(g.inputs, self._input_slots, inputs):
            if not isinstance(x, np.ndarray) and hasattr(x, "__dlpack__"):
                x = np.from_dlpack(x)  # tessel NDArrays, torch CPU tensors: no copy
            a = np.asarray(x, dtype=v.dtype, order="C")  # (0-d stays 0-d)
            if a.shape != v.shape:
                raise ValueError(f"input '{v.name}': shape {a.shape}, the model's is {v.shape}")
            for k, j in uses:
                self._steps[k][1][j] = a
        for f, args in self._steps:
            f(*args)
        outs = [a.copy() for a in self._output_args]
        return outs[0] if len(outs) == 1 else outs

    def _run_on_device(self, inputs):
        from .. import nd
        device = self._device
        if device is None:
            raise RuntimeError(f"tessel.compile: the model was built for '{self.target}' on a "
                               f"machine without a CUDA device: its kernels (`modules`) compile, "
                               f"but it cannot run here")
        for i, (v, uses, x) in enumerate(zip(self.graph.inputs, self._input_slots, inputs)):
            a = None
            if hasattr(x, "__dlpack_device__") and x.__dlpack_device__()[0] == 2:  # kDLCUDA
                a = nd.from_dlpack(x)
                if a.device != device:
                    raise ValueError(f"input '{v.name}': on {a.device}, the model runs on "
                                     f"{device}")
                if a.dtype != v.dtype or a.shape != tuple(v.shape) or not a.is_contiguous:
                    raise ValueError(f"input '{v.name}': a {a.dtype} array of shape {a.shape}"
                                     f"{'' if a.is_contiguous else ' (strided)'}, the model's is "
                                     f"{v.dtype} {tuple(v.shape)} (contiguous)")
            else:
                if not isinstance(x, np.ndarray) and hasattr(x, "__dlpack__"):
                    x = np.from_dlpack(x)
                h = np.asarray(x, dtype=v.dtype, order="C")
                if h.shape != tuple(v.shape):
                    raise ValueError(f"input '{v.name}': shape {h.shape}, the model's is "
                                     f"{tuple(v.shape)}")
                if self._staging[i] is None:  # a device copy of each host input, made once
                    self._staging[i] = nd.empty(v.shape, v.dtype, device=device)
                a = self._staging[i].copyfrom(h)
            for k, j in uses:
                self._steps[k][1][j] = a
        for f, args in self._steps:
            f(*args)
        outs = [a.copyto(device) for a in self._output_args]
        return outs[0] if len(outs) == 1 else outs

    def export_library(self, path, header=None):
        """Writes the model as a shared library `path` with a C header (default `<name>.h` beside
        it) declaring `int32_t <name>_run(const void* const* inputs, void* const* outputs)`; the
        weights are inside the library. Returns the header's path (docs/models.md, "Export as a
        shared library")."""
        from .export import export_library
        return export_library(self, path, header)

    def c_header(self):
        """The C header `export_library` writes."""
        from .export import c_header
        return c_header(self)

    def _arena(self):
        """The exported run function's scratch arena: (offset of each planned buffer, bytes)."""
        from .export import _align
        offsets, size = [], 0
        for b in self._plan[2]:
            offsets.append(size)
            size = _align(size + b.nbytes)
        return offsets, size


def _views(graph):
    """name -> the tensor whose buffer it reads (itself unless a view of a group's output)."""
    root = {}
    for n in graph.nodes:
        base = root.get(n.inputs[0], n.inputs[0]) if n.view else None
        if base is not None and base not in graph.constants and \
                base not in {v.name for v in graph.inputs}:
            root[n.output] = base
    return root


def kernel_nodes(graph):
    """The groups that get a kernel (all but the views of a computed tensor), in order."""
    root = _views(graph)
    return [n for n in graph.nodes if n.output not in root]


def _plan(graph, root):
    """A scratch buffer (a flat array) for every group output, reused by liveness: once the last
    reader of a tensor (or of a view of it) has run, its buffer serves a later tensor of the same
    dtype and size."""
    last_read = {}
    for k, n in enumerate(graph.nodes):
        for i in n.inputs:
            last_read[root.get(i, i)] = k
    outputs = {root.get(v.name, v.name) for v in graph.outputs}
    buffer_of, buffers, free = {}, [], {}
    for k, n in enumerate(graph.nodes):
        if n.output in root:
            continue
        v = graph.values[n.output]
        key = _key(v)
        pool = free.get(key, [])
        if pool and n.output not in outputs:
            b = pool.pop()
        else:
            b = len(buffers)
            buffers.append(np.empty(key[1], dtype=key[0]))
        buffer_of[n.output] = b
        for i in {root.get(i, i) for i in n.inputs}:
            if last_read.get(i) == k and i in buffer_of and i not in outputs:
                free.setdefault(_key(graph.values[i]), []).append(buffer_of[i])
    for name, base in root.items():
        buffer_of[name] = buffer_of[base]
    return buffer_of, buffers


def _key(v):
    return (v.dtype, int(np.prod(v.shape)))


def _pre_transform(f, index, inputs, consts):
    """The names of kernel `f`'s inputs, its weights laid out once: when its schedule rewrites
    the layout of constant inputs (a `<kernel>_pre_transform` in the module), the transform runs
    here on the weights, and each transformed weight joins `consts` as `<weight>@k<index>` (the
    layout is the kernel's), which the kernel reads in the weight's place."""
    names = list(inputs)
    if len(f.kernel_names) < 2:
        return names
    spec = f.get_function(f.kernel_names[1]).arg_names
    weights = spec[:len(spec) // 2]  # in<i>, the kernel's i-th input (Graph.placeholders)
    positions = [int(w[2:]) for w in weights if re.fullmatch(r"in\d+", w)]
    if len(positions) != len(weights):
        raise RuntimeError(f"tessel.compile: kernel {f.kernel_names[0]} pre-transforms "
                           f"{weights}, which are not its inputs")
    packed_names = [f"{inputs[i]}@k{index}" for i in positions]
    if any(p not in consts for p in packed_names):
        packed = f.pre_transform(*(consts[inputs[i]] for i in positions))
        for p, a in zip(packed_names, packed if isinstance(packed, tuple) else (packed,)):
            consts[p] = a
    for i, p in zip(positions, packed_names):
        names[i] = p
    return names


def compile(graph, target="llvm", log=None, name="model"):
    """Builds every operator group of `graph` (a `tessel.frontend.Graph`) for `target` with the
    records of the tuning log `log` (a path: a log file, or a folder of logs such as `tessel-tune
    run --log-dir` writes) in scope, and returns a `CompiledModel`. A CPU target
    (`llvm`) runs it on the host; a GPU target (`cuda ...`, with a CUDA device present) runs it on
    the device, its weights and scratch buffers there (on a machine without a GPU the kernels are
    built and checked to compile, and running the model raises RuntimeError). `name` (a C
    identifier) prefixes the kernels' names and names the exported library's entry point
    (`<name>_run`)."""
    from .. import apply_history_best, build, dag_hash, read_records, Target
    t0 = time.perf_counter()
    if not (isinstance(name, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,63}", name)):
        raise ValueError(f"tessel.compile: name {name!r} is not a C identifier")
    tgt = target if isinstance(target, Target) else Target(target)
    if tgt.kind not in ("llvm", "cuda"):
        raise ValueError(f"tessel.compile: target '{target}': a compiled model is built for the "
                         f"CPU ('llvm') or CUDA ('cuda') only")
    root = _views(graph)
    buffer_of, buffers = _plan(graph, root)
    consts = {k: np.array(c, order="C") for k, c in graph.constants.items()}
    from .. import cuda, cuda_available, nd
    on_device = tgt.kind == "cuda" and cuda_available()
    device = cuda(0) if on_device else None
    # On the GPU: each planned buffer a device array, each weight copied there once.
    places = [nd.empty(b.shape, str(b.dtype), device=device) for b in buffers] if on_device \
        else buffers
    on_device_consts = {}

    def const_arg(name):
        if not on_device:
            return consts[name]
        if name not in on_device_consts:
            c = consts[name]
            on_device_consts[name] = nd.array(c.numpy() if hasattr(c, "numpy") else c,
                                              device=device)
        return on_device_consts[name]
    inputs = {v.name: i for i, v in enumerate(graph.inputs)}
    input_slots = [[] for _ in graph.inputs]
    scope = apply_history_best(str(log)) if log is not None else contextlib.nullcontext()
    logged = set()  # the DAG hashes the log holds records of
    if log is not None:
        logged = {int(r.task_key.rsplit(" ", 1)[-1], 16)
                  for r in read_records(str(log))[0] if r.ok}
    kernels, steps, tuned, is_tuned, plan = {}, [], [], {}, []
    with scope:
        for n in graph.nodes:
            if n.output in root:
                continue  # a view: no kernel
            k = len(steps)
            key = (n.signature, tuple(i in graph.constants for i in n.inputs))
            f = kernels.get(key)
            if f is None:
                phs = graph.placeholders(n)
                y = n.make(*phs)
                f = build(default_schedule(y, tgt), phs + [y], target=tgt,
                          name=f"{name}_k{len(kernels)}")
                kernels[key] = f
                is_tuned[key] = bool(logged) and dag_hash([y]) in logged
            if is_tuned[key]:
                tuned.append(n.name)
            index = list(kernels).index(key)
            names = _pre_transform(f, index, n.inputs, consts)
            args = []
            for j, arg in enumerate(names + [n.output]):
                # (The output is always a planned buffer: a constant model output, which a
                # copy node writes, shares its constant's name.)
                if arg in consts and j < len(names):
                    args.append(const_arg(arg))
                elif arg in inputs:
                    input_slots[inputs[arg]].append((k, j))
                    args.append(None)
                else:
                    args.append(places[buffer_of[arg]].reshape(list(graph.values[arg].shape)))
            steps.append((f, args))
            plan.append((index, names + [n.output]))
    output_args = []
    for v in graph.outputs:
        output_args.append(places[buffer_of[v.name]].reshape(list(v.shape)))
    m = CompiledModel(graph, tgt, steps, input_slots, output_args,
                      time.perf_counter() - t0, len(kernels),
                      int(sum(b.nbytes for b in buffers)), tuned)
    m.name = name
    m._device = device
    m._staging = [None] * len(graph.inputs)  # device copies of host inputs (GPU)
    m.modules = list(kernels.values())
    m._plan = (plan, buffer_of, buffers, consts)
    return m
