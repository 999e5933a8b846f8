"""ts.auto_schedule.extract_tasks: the registered operators a Python function calls, as a tuning
job for tessel-tune (docs/daemon.md, "Jobs from Python").

    def network(x, w1, w2):
        y = ts.op.relu(ts.op.conv2d_nchw(x, w1, padding=1))
        return ts.op.conv2d_nchw(y, w2, padding=1)

    tasks = ts.auto_schedule.extract_tasks(network, x, w1, w2, job="net.json",
                                           target="llvm -num-cores=2", trials_per_task=128)

While ``fn`` runs, the compute-heavy operators of ``ts.op`` (convolutions, dense, matmul,
batch_matmul, pooling, norms, softmax, element-wise functions) record the registered workload
(docs/operators.md, "Workloads") and parameters of each call; equal calls add up to a weight.
Layout operators (reshape, transpose, concatenate, ...) are not tuned and not recorded; a call its
workload cannot express (batch_matmul with a transposed operand, layer_norm without gamma and
beta) is not recorded either. Operators reached through a name imported
before the call (``from tessel.op import conv2d_nchw``) are not seen: call them as ``ts.op.X``.
"""
import json
from collections import OrderedDict

from . import op as _op
from ._tessel import auto_schedule as _native

_UNARY = ("relu", "gelu", "silu", "sigmoid", "tanh", "exp", "log", "sqrt", "abs", "negative")
_BINARY = ("add", "subtract", "multiply", "divide", "maximum", "minimum", "power")


def _pair(v):
    return [int(v), int(v)] if isinstance(v, int) else [int(x) for x in v]


def _padding(v):
    v = [int(v)] if isinstance(v, int) else [int(x) for x in v]
    if len(v) == 2:  # (vertical, horizontal)
        v = [v[0], v[1], v[0], v[1]]
    return v * 4 if len(v) == 1 else v


def _conv(layout):
    def params(x, w, stride=1, padding=0, dilation=1, groups=1, name=None):
        if layout == "nchw":
            n, c, h, wd = x.shape
            k, _, r, s = w.shape
        else:
            n, h, wd, c = x.shape
            r, s, _, k = w.shape
        return [n, c, h, wd, k, [r, s], _pair(stride), _padding(padding), _pair(dilation),
                int(groups), x.dtype]
    return "op.conv2d_" + layout, params


def _depthwise(x, w, stride=1, padding=0, dilation=1, name=None):
    n, c, h, wd = x.shape
    return [n, c, h, wd, w.shape[0] // c, [w.shape[2], w.shape[3]], _pair(stride),
            _padding(padding), _pair(dilation), x.dtype]


def _conv_transpose(x, w, stride=1, padding=0, dilation=1, output_padding=0, name=None):
    n, c, h, wd = x.shape
    _, k, r, s = w.shape
    return [n, c, h, wd, k, [r, s], _pair(stride), _padding(padding), _pair(dilation),
            _pair(output_padding), x.dtype]


def _dense(x, weight, bias=None, activation="none", name=None):
    m, k = x.shape
    return [m, weight.shape[0], k, 0 if bias is None else 1, activation, x.dtype]


def _matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    m, k = reversed(a.shape) if transpose_a else a.shape
    n = b.shape[0] if transpose_b else b.shape[1]
    return [m, n, k, int(transpose_a), int(transpose_b), a.dtype]


def _batch_matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    if transpose_a or transpose_b:
        return None  # op.batch_matmul has no transposed form
    bsz, m, k = a.shape
    return [max(bsz, b.shape[0]), m, b.shape[2], k, a.dtype]


def _pool2d(x, kind, window, stride=None, padding=0, count_include_pad=True, name=None):
    n, c, h, w = x.shape
    return [n, c, h, w, kind, _pair(window), _pair(window if stride is None else stride),
            _padding(padding), int(count_include_pad), x.dtype]


def _global_pool2d(x, kind="avg", name=None):
    return list(x.shape) + [kind, x.dtype]


def _adaptive_avg_pool2d(x, output_size, name=None):
    return list(x.shape) + _pair(output_size) + [x.dtype]


def _rms_norm(x, gamma=None, eps=1e-6, name=None):
    return None if gamma is None else [list(x.shape), x.dtype]


def _batch_norm(x, gamma, beta, mean, var, eps=1e-5, axis=1, name=None):
    return [list(x.shape), int(axis), x.dtype]


def _softmax(x, axis=-1, name=None):
    return [list(x.shape), int(axis), x.dtype]


def _layer_norm(x, gamma=None, beta=None, eps=1e-5, name=None):
    if gamma is None or beta is None:
        return None  # op.layer_norm's workload has both
    return [list(x.shape), x.dtype]


def _recorders():
    r = {
        "conv2d_nchw": _conv("nchw"),
        "conv2d_nhwc": _conv("nhwc"),
        "depthwise_conv2d_nchw": ("op.depthwise_conv2d_nchw", _depthwise),
        "conv2d_transpose_nchw": ("op.conv2d_transpose_nchw", _conv_transpose),
        "dense": ("op.dense", _dense),
        "matmul": ("op.matmul", _matmul),
        "batch_matmul": ("op.batch_matmul", _batch_matmul),
        "pool2d": ("op.pool2d", _pool2d),
        "global_pool2d": ("op.global_pool2d", _global_pool2d),
        "adaptive_avg_pool2d": ("op.adaptive_avg_pool2d", _adaptive_avg_pool2d),
        "softmax": ("op.softmax", _softmax),
        "log_softmax": ("op.log_softmax", _softmax),
        "layer_norm": ("op.layer_norm", _layer_norm),
        "rms_norm": ("op.rms_norm", _rms_norm),
        "batch_norm": ("op.batch_norm", _batch_norm),
    }
    for fn in _UNARY:
        r[fn] = ("op.unary", lambda x, name=None, _fn=fn: [list(x.shape), _fn, x.dtype])
    for fn in _BINARY:
        r[fn] = ("op.binary",
                 lambda a, b, name=None, _fn=fn: [list(a.shape), list(b.shape), _fn, a.dtype])
    return r


class _Recording:
    """Wraps the ts.op functions that have a workload while a function runs."""

    def __init__(self):
        self.counts = OrderedDict()  # (workload, params as JSON) -> count
        self.skipped = 0
        self.per_group = None  # when a model graph is traced: calls left to record in this group
        self._saved = {}

    def _wrap(self, name, workload, params_of, original):
        def recorded(*args, **kwargs):
            out = original(*args, **kwargs)
            if self.per_group is not None:
                if self.per_group == 0:
                    return out  # an epilogue of the group's operator (bias, activation, add)
                self.per_group -= 1
            try:
                params = params_of(*args, **kwargs)
            except (TypeError, ValueError, AttributeError):
                params = None  # a call the workload cannot express (symbolic shape, ...)
            if params is None:
                self.skipped += 1
            else:
                key = (workload, json.dumps(params))
                self.counts[key] = self.counts.get(key, 0) + 1
            return out
        recorded.__name__ = name
        recorded.__doc__ = original.__doc__
        return recorded

    def __enter__(self):
        for name, (workload, params_of) in _recorders().items():
            original = getattr(_op, name)
            self._saved[name] = original
            setattr(_op, name, self._wrap(name, workload, params_of, original))
        return self

    def __exit__(self, *exc):
        for name, original in self._saved.items():
            setattr(_op, name, original)
        return False


def extract_tasks(fn, *args, job=None, target="llvm", trials=None, trials_per_task=None,
                  fused=True, **job_fields):
    """Runs ``fn(*args)`` and returns the registered operators it called, as a list of
    ``{"workload", "params", "weight"}`` (weight: how many times it was called), in the order of
    their first call. ``fn`` may be a model graph of ``tessel.frontend`` instead: then each
    distinct fused operator group (the kernel ``ts.compile`` builds: a convolution with its ReLU,
    a dense product with its GELU, a residual add) is one task ``{"dag", "weight"}`` carrying the
    group's DAG (as ``ts.dag_to_json`` writes it), weighted by how many groups of the model
    compute it; with ``fused=False``, the group's first registered operator instead, as for a
    function. With ``job`` (a path), also writes them as a tessel-tune job for ``target``
    with the budget ``trials`` in all or ``trials_per_task`` (default 128 per task), and any
    other job field (``measurements_per_round``, ``strategy``, ``seed``, ``search``,
    ``measure``, ...); the job is checked as tessel-tune checks it before it is written
    (TesselRuntimeError listing every problem)."""
    from .frontend.graph import Graph
    if isinstance(fn, Graph) and fused:
        tasks = group_tasks(fn)
    else:
        with _Recording() as rec:
            if isinstance(fn, Graph):
                for node in fn.nodes:  # one task per operator group: its first registered call
                    rec.per_group = 1
                    node.make(*fn.placeholders(node))
            else:
                fn(*args)
        tasks = [{"workload": w, "params": json.loads(p), "weight": n}
                 for (w, p), n in rec.counts.items()]
    if job is not None:
        write_job(job, tasks, target=target, trials=trials, trials_per_task=trials_per_task,
                  **job_fields)
    return tasks


def group_dag(graph, node):
    """The DAG of one operator group of a model graph: its inputs' placeholders (as
    ``Graph.placeholders`` makes them) and its output. ``ts.compile`` builds the same DAG, so a
    tuning record of this DAG applies to the group."""
    from ._tessel import TensorDAG
    phs = graph.placeholders(node)
    return TensorDAG(phs, [node.make(*phs)])


def group_tasks(graph):
    """The distinct kernels of a model graph (views build none) as DAG tasks, with weights."""
    from ._tessel import dag_to_json
    from .frontend.compiled import kernel_nodes
    counts = OrderedDict()  # DAG JSON -> groups computing it
    for node in kernel_nodes(graph):
        text = dag_to_json(group_dag(graph, node))
        counts[text] = counts.get(text, 0) + 1
    return [{"dag": json.loads(t), "weight": n} for t, n in counts.items()]


def write_job(path, tasks, target="llvm", trials=None, trials_per_task=None, **job_fields):
    """Writes a tessel-tune job of ``tasks`` (as extract_tasks returns them) to ``path``, after
    checking it; returns the job as tessel-tune reads it (a dict)."""
    if not tasks:
        raise ValueError("write_job: no tasks (the function called no operator with a workload)")
    doc = {"format_version": 1, "target": target, "tasks": tasks}
    if trials is not None:
        doc["trials"] = int(trials)
    else:
        doc["trials_per_task"] = int(trials_per_task if trials_per_task is not None else 128)
    doc.update(job_fields)
    text = json.dumps(doc, indent=2)
    checked = _native.check_job(text, str(path))
    with open(path, "w") as f:
        f.write(text + "\n")
    return json.loads(checked)
