"""tessel.frontend.from_onnx: an ONNX model (opsets 13-21) as a model graph of `ts.op` calls.

A model file is untrusted input: every malformed case this can detect (a cycle, a dangling or
duplicated name, a missing or wrong-sized initializer, an absurd shape or attribute) is a
`ModelError` naming the node, never a crash or an unbounded allocation."""
import numpy as np

from ..import _tessel as _ts
from . import _blocked, _ops
from ._fold import fold
from .graph import Graph, ModelError, Node, Value

OPSETS = (13, 21)
MAX_DIM = 1 << 31           # any extent above this is an absurd shape
MAX_ELEMENTS = 1 << 33      # nor a tensor of more elements (32 GiB of float32)


class _OnnxNode:
    """The fields of an ONNX NodeProto this importer reads, with attributes as Python values."""

    def __init__(self, proto, index, attrs):
        self.name = proto.name or f"{proto.op_type}_{index}"
        self.op_type = proto.op_type
        self.domain = proto.domain
        self.inputs = list(proto.input)
        self.outputs = list(proto.output)
        self.attrs = attrs


class _Context:
    def __init__(self, opset, onnx):
        self.opset = opset
        self.onnx = onnx
        self.consts = {}   # name -> numpy array
        self.values = {}   # name -> Value (run-time tensors and constants alike)
        self.aliases = {}  # name -> name (Identity, Dropout)
        self.used_consts = set()
        self.blocked = None  # _blocked.Blocked when importing with blocked activations

    def is_blocked(self, name):
        """Whether `name` is a blocked twin (N, C / b, H, W, b) of an NCHW value."""
        return self.blocked is not None and name in self.blocked.of.values()

    def nchw_shape(self, name):
        """The shape of value `name`, NCHW for a value that has only its blocked twin yet."""
        return self.values[name].shape if self.blocked is None else \
            self.blocked.nchw_shape(self, name)

    def fail(self, node, msg):
        raise ModelError(f"node '{node.name}' ({node.op_type}, opset {self.opset}): {msg}")

    def resolve(self, name):
        while name in self.aliases:
            name = self.aliases[name]
        return name

    def is_const(self, name):
        return name in self.consts

    def const(self, name):
        if name not in self.consts:
            raise _NotConstant(name)
        return self.consts[name]

    def shape(self, name):
        return self.values[name].shape

    def np_dtype(self, onnx_type):
        return np.dtype(self.onnx.helper.tensor_dtype_to_np_dtype(int(onnx_type))).name

    def add_const(self, node, what, array):
        name = f"{node.name}.{what}"
        while name in self.values:
            name += "_"
        self.set_const(name, np.array(array, order="C"))
        return name

    def set_const(self, name, array):
        self.consts[name] = array
        self.values[name] = Value(name, array.shape, array.dtype.name)


class _NotConstant(Exception):
    def __init__(self, name):
        self.name = name


def _check_shape(where, shape):
    total = 1
    for d in shape:
        if d < 0 or d > MAX_DIM:
            raise ModelError(f"{where}: absurd extent {d} in shape {list(shape)}")
        total *= d
    if total > MAX_ELEMENTS:
        raise ModelError(f"{where}: shape {list(shape)} holds {total} elements, more than "
                         f"{MAX_ELEMENTS}")


def _load(onnx, model_or_path):
    if isinstance(model_or_path, onnx.ModelProto):
        return model_or_path
    if isinstance(model_or_path, (bytes, bytearray)):
        try:
            return onnx.load_from_string(bytes(model_or_path))
        except Exception as e:  # a protobuf DecodeError: not a model
            raise ModelError(f"not an ONNX model: {e}") from None
    try:
        return onnx.load(str(model_or_path))
    except (OSError, ValueError) as e:
        raise ModelError(f"cannot read the model '{model_or_path}': {e}") from None
    except Exception as e:
        raise ModelError(f"'{model_or_path}' is not an ONNX model: {e}") from None


def _opset(model):
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            v = int(o.version)
            if not OPSETS[0] <= v <= OPSETS[1]:
                raise ModelError(f"opset {v} is not supported (opsets {OPSETS[0]}-{OPSETS[1]})")
            return v
    raise ModelError("the model imports no ai.onnx opset")


def _initializers(onnx, ctx, graph):
    for t in graph.initializer:
        if t.name in ctx.values:
            raise ModelError(f"initializer '{t.name}' is defined twice")
        dims = [int(d) for d in t.dims]
        _check_shape(f"initializer '{t.name}'", dims)
        if t.data_location == onnx.TensorProto.EXTERNAL:
            raise ModelError(f"initializer '{t.name}': external data was not loaded (load the "
                             f"model from its path, beside its data file)")
        try:
            a = onnx.numpy_helper.to_array(t)
        except Exception as e:
            raise ModelError(f"initializer '{t.name}' of shape {dims}: {e}") from None
        if list(a.shape) != dims:
            raise ModelError(f"initializer '{t.name}' holds {a.size} values for shape {dims}")
        ctx.set_const(t.name, a)


def _inputs(onnx, ctx, graph, shapes):
    shapes = dict(shapes or {})
    inputs = []
    for vi in graph.input:
        if vi.name in ctx.consts:
            continue  # an initializer listed as an input (IR version < 4): a constant
        tt = vi.type.tensor_type
        if shapes.get(vi.name) is not None:
            dims = [int(d) for d in shapes.pop(vi.name)]
        else:
            shapes.pop(vi.name, None)
            dims = []
            for i, d in enumerate(tt.shape.dim):
                if not d.HasField("dim_value"):
                    sym = d.dim_param or "?"
                    raise ModelError(f"input '{vi.name}': dimension {i} is symbolic ('{sym}'); "
                                     f"give its size: from_onnx(..., shapes={{'{vi.name}': "
                                     f"(...)}})")
                dims.append(int(d.dim_value))
        _check_shape(f"input '{vi.name}'", dims)
        v = Value(vi.name, dims, ctx.np_dtype(tt.elem_type))
        if v.name in ctx.values:
            raise ModelError(f"input '{vi.name}' is defined twice")
        ctx.values[v.name] = v
        inputs.append(v)
    if shapes:
        raise ModelError(f"shapes= names no input of the model: {sorted(shapes)}")
    return inputs


def _attrs(onnx, proto, where):
    out = {}
    for a in proto.attribute:
        if a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
            raise ModelError(f"{where}: subgraph attributes (control flow) are not supported")
        v = onnx.helper.get_attribute_value(a)
        if isinstance(v, onnx.TensorProto):
            v = onnx.numpy_helper.to_array(v)
        elif isinstance(v, (list, tuple)) and len(v) > 1024:
            raise ModelError(f"{where}: attribute '{a.name}' holds {len(v)} values")
        out[a.name] = v
    return out


def _sorted_nodes(onnx, graph, known):
    """The nodes in an order where each reads only what is defined before it (Kahn's)."""
    nodes = [_OnnxNode(p, i, _attrs(onnx, p, f"node '{p.name or p.op_type}'"))
             for i, p in enumerate(graph.node)]
    producer = {}
    for n in nodes:
        for o in n.outputs:
            if not o:
                continue
            if o in producer or o in known:
                raise ModelError(f"node '{n.name}' ({n.op_type}): output '{o}' is defined twice")
            producer[o] = n
    for n in nodes:
        for i in n.inputs:
            if i and i not in producer and i not in known:
                raise ModelError(f"node '{n.name}' ({n.op_type}): input '{i}' is not defined "
                                 f"(no node, input or initializer of that name)")
    order, done, state = [], set(), {}
    for root in nodes:  # iterative DFS: a deep chain must not overflow the Python stack
        stack = [(root, False)]
        while stack:
            n, expanded = stack.pop()
            if expanded:
                state[id(n)] = 2
                order.append(n)
                continue
            if state.get(id(n)) == 2:
                continue
            if state.get(id(n)) == 1:
                raise ModelError(f"node '{n.name}' ({n.op_type}): the graph has a cycle through "
                                 f"this node")
            state[id(n)] = 1
            stack.append((n, True))
            for i in n.inputs:
                p = producer.get(i)
                if p is not None and state.get(id(p)) != 2:
                    if state.get(id(p)) == 1:
                        raise ModelError(f"node '{p.name}' ({p.op_type}): the graph has a cycle "
                                         f"through this node")
                    stack.append((p, False))
    del done
    return order


def _readers_and_producers(nodes):
    """How many node inputs read each value, and the node producing each first output."""
    readers = {}
    for n in nodes:
        for i in n.inputs:
            readers[i] = readers.get(i, 0) + 1
    return readers, {n.outputs[0]: n for n in nodes if n.outputs}


def _fold_batch_norms(ctx, nodes, outputs):
    """Conv -> BatchNormalization with constant weights and statistics: the BN's scale and shift
    folded into the convolution's weights and bias."""
    readers, by_output = _readers_and_producers(nodes)
    kept = []
    for n in nodes:
        conv = by_output.get(n.inputs[0]) if n.op_type == "BatchNormalization" else None
        if (conv is None or conv.op_type != "Conv" or readers.get(conv.outputs[0]) != 1
                or int(n.attrs.get("training_mode", 0))
                or conv.outputs[0] in outputs or len(n.outputs) > 1 and any(n.outputs[1:])
                or not all(ctx.is_const(i) for i in n.inputs[1:5])
                or not ctx.is_const(conv.inputs[1])
                or (len(conv.inputs) > 2 and conv.inputs[2] and not ctx.is_const(conv.inputs[2]))):
            kept.append(n)
            continue
        g, b, m, v = (ctx.consts[i].astype(np.float64) for i in n.inputs[1:5])
        w = ctx.consts[conv.inputs[1]]
        bias0 = (ctx.consts[conv.inputs[2]].astype(np.float64)
                 if len(conv.inputs) > 2 and conv.inputs[2] else np.zeros_like(g))
        if w.ndim != 4 or any(a.shape != (w.shape[0],) for a in (g, b, m, v, bias0)):
            kept.append(n)
            continue
        scale = g / np.sqrt(v + float(n.attrs.get("epsilon", 1e-5)))
        wname = ctx.add_const(conv, "bn_weight",
                              (w * scale[:, None, None, None]).astype(w.dtype))
        bname = ctx.add_const(conv, "bn_bias", ((bias0 - m) * scale + b).astype(w.dtype))
        conv.inputs = [conv.inputs[0], wname, bname]
        conv.outputs = [n.outputs[0]]
        by_output[n.outputs[0]] = conv
    return kept


def _fold_matmul_bias(ctx, nodes, outputs):
    """MatMul(x, W) -> Add(., b) with constant W (K, N) and b (N,): the bias goes into the dense
    product's own stage (dense(x, W^T, b))."""
    readers, by_output = _readers_and_producers(nodes)
    kept = []
    for n in nodes:
        mm, b = None, None
        if n.op_type == "Add" and len(n.inputs) == 2:
            for j in (0, 1):
                cand = by_output.get(n.inputs[j])
                if cand is not None and cand.op_type == "MatMul":
                    mm, b = cand, n.inputs[1 - j]
                    break
        if (mm is None or readers.get(mm.outputs[0]) != 1 or mm.outputs[0] in outputs
                or len(mm.inputs) != 2 or not ctx.is_const(mm.inputs[1])
                or not ctx.is_const(b) or getattr(mm, "bias", None)):
            kept.append(n)
            continue
        w, bv = ctx.consts[mm.inputs[1]], ctx.consts[b]
        if w.ndim != 2 or bv.shape != (w.shape[1],) or bv.dtype != w.dtype:
            kept.append(n)
            continue
        mm.bias = b
        mm.outputs = [n.outputs[0]]
        by_output[n.outputs[0]] = mm
    return kept


def _convert(ctx, n):
    if n.domain not in ("", "ai.onnx"):
        ctx.fail(n, f"operator domain '{n.domain}' is not supported")
    inputs = [ctx.resolve(i) if i else "" for i in n.inputs]
    n.inputs = inputs
    if n.op_type in ("Identity", "Dropout"):
        ctx.aliases[n.outputs[0]] = inputs[0]
        return None
    if n.op_type == "Shape":
        s = np.array(ctx.nchw_shape(inputs[0]), dtype=np.int64)
        ctx.set_const(n.outputs[0], s[n.attrs.get("start", 0):n.attrs.get("end", len(s))])
        return None
    if n.op_type == "Constant":
        v = next(iter(n.attrs.values()), None) if len(n.attrs) == 1 else None
        if v is None:
            ctx.fail(n, "a Constant needs exactly one value attribute")
        ctx.set_const(n.outputs[0], np.asarray(v))
        return None
    if all(i == "" or ctx.is_const(i) for i in inputs):
        attrs = dict(n.attrs)
        if "to" in attrs:
            attrs["to"] = ctx.np_dtype(attrs["to"])
        try:
            v = fold(n.op_type, attrs, [ctx.consts[i] if i else None for i in inputs])
        except Exception as e:
            ctx.fail(n, f"constant inputs do not fit: {e}")
        if v is not None:
            _check_shape(f"node '{n.name}'", v.shape)
            ctx.set_const(n.outputs[0], v)
            return None
    conv = _ops.CONVERTERS.get(n.op_type)
    if conv is None:
        ctx.fail(n, "operator not supported (docs/models.md lists the covered operators)")
    if ctx.blocked is not None:
        pre, conv, blocked_out = _layout(ctx, n, conv)
        if pre or blocked_out:
            made = _convert_with(ctx, n, conv)
            made = made if isinstance(made, list) else [made]
            if blocked_out:
                ctx.blocked.of[blocked_out] = made[-1].output
            return pre + made
    return _convert_with(ctx, n, conv)


def _layout(ctx, n, conv):
    """With blocked activations (_blocked.py): the nodes to run before `n` (an NCHW input
    blocked for a blocked convolution, blocked inputs made NCHW for an operator that does not keep
    the layout), the converter to use, and the ONNX name whose blocked twin `n` computes (None
    when `n` runs on NCHW values). Renames n's inputs and output accordingly."""
    blk = ctx.blocked
    pre = []
    if blk.blocked_conv(ctx, n):
        x = n.inputs[0]
        if x not in blk.of:
            cb = _blocked.input_block(ctx.values[x].shape[1], blk.block)
            twin = f"{x}@nchw{cb}c"
            pre.append(_build_node(ctx, _synthetic(f"{x}.block", "NchwToNchwc", [x], [twin]),
                                   [x], lambda t, cb=cb: _ts.op.nchw_to_nchwc(t, cb), (cb,)))
            blk.of[x] = twin
        n.inputs[0] = blk.of[x]
        conv = lambda ctx_, n_: _blocked.conv(ctx_, n_, blk)  # noqa: E731
    elif blk.keeps_layout(ctx, n):
        n.inputs = [blk.of[i] if i in blk.of and not ctx.is_const(i) else i for i in n.inputs]
    else:
        for i in dict.fromkeys(n.inputs):
            if i and i in blk.of and i not in ctx.values:
                pre.append(_unblock(ctx, i))
        return pre, conv, None
    out = n.outputs[0]
    n.outputs[0] = f"{out}@blocked"
    return pre, conv, out


def _unblock(ctx, name):
    """The node computing NCHW value `name` from its blocked twin."""
    twin = ctx.blocked.of[name]
    return _build_node(ctx, _synthetic(f"{name}.unblock", "NchwcToNchw", [twin], [name]), [twin],
                       lambda x: _ts.op.nchwc_to_nchw(x), ())


def _synthetic(name, op_type, inputs, outputs):
    """An ONNX node the importer adds (a view, a layout transform)."""
    node = _OnnxNode.__new__(_OnnxNode)
    node.name, node.op_type, node.domain = name, op_type, ""
    node.inputs, node.outputs, node.attrs = list(inputs), list(outputs), {}
    return node


def _convert_with(ctx, n, conv):
    """Node `n` converted by `conv`: its group, or its group and a view of the group's output."""
    extra = [o for o in n.outputs[1:] if o]
    if extra:
        ctx.fail(n, f"only the first output is supported, {extra} are used")
    try:
        runtime, make, params, *view_shape = conv(ctx, n)
    except _NotConstant as e:
        ctx.fail(n, f"input '{e.name}' must be a constant (an initializer or folded shape "
                    f"arithmetic)")
    except (KeyError, IndexError) as e:
        ctx.fail(n, f"missing input or attribute {e}")
    except (ValueError, TypeError, OverflowError) as e:  # attributes or shapes that do not fit
        ctx.fail(n, f"{e}")
    if not view_shape:
        return _build_node(ctx, n, runtime, make, params)
    # The group computes a tensor of another shape; the node's output is a view of it.
    out = n.outputs[0]
    n.outputs = [f"{out}.{n.op_type.lower()}"]
    node = _build_node(ctx, n, runtime, make, params)
    shape = tuple(view_shape[0])
    view = _synthetic(f"{n.name}.view", "Reshape", [node.output], [out])
    return [node, _build_node(ctx, view, [node.output], lambda x: _op_reshape(x, shape),
                              (shape,))]


def _op_reshape(x, shape):
    from .. import op
    return op.reshape(x, shape)


def _build_node(ctx, n, runtime, make, params):
    phs = [_ts.placeholder(ctx.values[i].shape, dtype=ctx.values[i].dtype, name=f"in{k}")
           for k, i in enumerate(runtime)]
    try:
        y = make(*phs)
    except (TypeError, ValueError) as e:  # DSLError (a TypeError): shapes or dtypes that do not fit
        ctx.fail(n, f"{e}")
    shape = tuple(int(d) for d in y.shape)
    _check_shape(f"node '{n.name}'", shape)
    out = Value(n.outputs[0], shape, str(y.dtype))
    ctx.values[out.name] = out
    for i in runtime:
        if i in ctx.consts:
            ctx.used_consts.add(i)
    sig = (n.op_type, repr(params),
           tuple((ctx.values[i].shape, ctx.values[i].dtype) for i in runtime))
    node = Node(n.name, n.op_type, runtime, out.name, make, sig)
    node.view = n.op_type in _ops.VIEWS and runtime == [n.inputs[0]]
    return node


def _fuse_elementwise(nodes, graph_outputs):
    """Element-wise consumers fused into their producer's group by the rules of _ops.fuses_into
    (conv + ReLU, dense + activation, element-wise chains: the residual add and its ReLU, GELU
    written out, the attention's scale and mask), repeatedly."""
    readers = {}
    for n in nodes:
        for i in n.inputs:
            readers[i] = readers.get(i, 0) + 1
    by_output = {}
    out = []
    for n in nodes:
        p = None
        if n.ops[0] in _ops.ELEMENTWISE:
            for j, i in enumerate(n.inputs):
                q = by_output.get(i)
                if (q is not None and readers[i] == 1 and i not in graph_outputs
                        and n.inputs.count(i) == 1
                        and _ops.fuses_into(q.ops[-1] if q.ops[0] in _ops.ELEMENTWISE
                                            else q.ops[0], n.ops[0], len(n.inputs))):
                    p = q
                    break
        if p is None:
            by_output[n.output] = n
            out.append(n)
            continue
        k = len(p.inputs)
        pm, nm, pos = p.make, n.make, j

        def make(*t, pm=pm, nm=nm, k=k, pos=pos):
            rest = list(t[k:])
            rest.insert(pos, pm(*t[:k]))
            return nm(*rest)
        p.inputs = p.inputs + n.inputs[:j] + n.inputs[j + 1:]
        p.make = make
        p.ops.append(n.ops[0])
        p.signature = (p.signature, n.signature, j)
        del by_output[p.output]
        p.output = n.output
        by_output[p.output] = p
        out.remove(p)  # the group runs where its last member did: after all of its inputs
        out.append(p)
    return out


def from_onnx(model_or_path, shapes=None, fuse=True, layout="NCHW"):
    """Imports an ONNX model (a path, bytes or an `onnx.ModelProto`; opsets 13-21) as a
    `tessel.frontend.Graph`. `shapes` maps input names to static shapes (needed for symbolic
    dimensions). `fuse=False` keeps one group per ONNX node. `layout="NCHW<b>c"` (e.g.
    "NCHW16c") runs the convolutions on blocked activations, the layers agreeing on the layout
    (docs/models.md, "Blocked activations"); the model's inputs and outputs stay as the model has
    them. Raises `ModelError` naming the node for anything it cannot import, ValueError for a
    layout it does not know."""
    block = _blocked.parse_layout(layout)
    try:
        import onnx
        import onnx.numpy_helper  # noqa: F401
    except ImportError:
        raise ImportError("tessel.frontend.from_onnx needs the onnx package: "
                          "pip install 'tessel[onnx]'") from None
    model = _load(onnx, model_or_path)
    opset = _opset(model)
    ctx = _Context(opset, onnx)
    if block:
        ctx.blocked = _blocked.Blocked(block)
    g = model.graph
    _initializers(onnx, ctx, g)
    inputs = _inputs(onnx, ctx, g, shapes)
    onodes = _sorted_nodes(onnx, g, set(ctx.values))
    out_names = [o.name for o in g.output]
    if not out_names:
        raise ModelError("the model has no outputs")
    onodes = _fold_batch_norms(ctx, onodes, set(out_names))
    onodes = _fold_matmul_bias(ctx, onodes, set(out_names))
    nodes = []
    for n in onodes:
        m = _convert(ctx, n)
        nodes.extend(m if isinstance(m, list) else [] if m is None else [m])
    outputs = []
    for name in out_names:
        r = ctx.resolve(name)
        if r not in ctx.values and ctx.blocked is not None and r in ctx.blocked.of:
            nodes.append(_unblock(ctx, r))
        if r not in ctx.values:
            raise ModelError(f"output '{name}' is not computed by any node")
        if r in ctx.consts:
            # A constant output: a copy node, so the compiled model has a buffer for it.
            r_node = Node(name, "Constant", [r], name, lambda x: _ts.op.reshape(x, x.shape),
                          ("Constant", ctx.values[r].shape))
            ctx.used_consts.add(r)
            ctx.values[name] = Value(name, ctx.values[r].shape, ctx.values[r].dtype)
            nodes.append(r_node)
            r = name
        outputs.append(ctx.values[r])
    if fuse:
        nodes = _fuse_elementwise(nodes, {v.name for v in outputs})
    nodes = _live(nodes, {v.name for v in outputs})
    consts = {k: ctx.consts[k] for k in {i for n in nodes for i in n.inputs} if k in ctx.consts}
    return Graph(inputs, outputs, consts, ctx.values, nodes)


def _live(nodes, outputs):
    """The nodes an output depends on (dead branches dropped)."""
    need = set(outputs)
    keep = []
    for n in reversed(nodes):
        if n.output in need:
            keep.append(n)
            need.update(n.inputs)
    return keep[::-1]
