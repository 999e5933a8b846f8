"""Test models written with onnx.helper, nothing downloaded (docs/models.md, "Test models"):
ResNet-50, MobileNetV2 and a BERT-base encoder, with seeded He-scaled weights and BatchNorm
statistics that keep activations of order one. `width` scales the channels (hidden size) and
`layers` the blocks per stage (encoder layers), so CI runs reduced versions of the same graphs.

    m = resnet50(width=0.25, layers=(1, 1, 1, 1), image=64)   # an onnx.ModelProto
"""
import math

import numpy as np

OPSET = 17


class _Builder:
    def __init__(self, seed):
        import onnx
        from onnx import helper, numpy_helper
        self.onnx, self.h, self.nh = onnx, helper, numpy_helper
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, base):
        self.count += 1
        return f"{base}_{self.count}"

    def const(self, base, array):
        n = self.name(base)
        self.inits.append(self.nh.from_array(np.asarray(array), n))
        return n

    def node(self, op, inputs, base=None, **attrs):
        out = self.name(base or op.lower())
        self.nodes.append(self.h.make_node(op, inputs, [out], name=out + ".node", **attrs))
        return out

    def he(self, shape, fan_in, gain=2.0):
        return (self.rng.standard_normal(shape) * math.sqrt(gain / fan_in)).astype(np.float32)

    def conv_bn(self, x, cin, cout, k, stride=1, group=1, gamma=1.0):
        w = self.const("w", self.he((cout, cin // group, k, k), cin // group * k * k))
        y = self.node("Conv", [x, w], "conv", kernel_shape=[k, k], strides=[stride, stride],
                      pads=[k // 2] * 4, group=group)
        r = self.rng
        stats = [np.full(cout, gamma, np.float32) * r.uniform(0.8, 1.2, cout).astype(np.float32),
                 (r.standard_normal(cout) * 0.1).astype(np.float32),
                 (r.standard_normal(cout) * 0.1).astype(np.float32),
                 r.uniform(0.5, 1.5, cout).astype(np.float32)]
        names = [self.const(s, v) for s, v in zip(("gamma", "beta", "mean", "var"), stats)]
        # The statistics describe a batch whose mean and variance they are (order one after).
        return self.node("BatchNormalization", [y] + names, "bn", epsilon=1e-5)

    def model(self, inputs, outputs, name):
        g = self.h.make_graph(self.nodes, name, inputs, outputs, self.inits)
        opsets = [self.h.make_opsetid("", OPSET)]
        # The IR version the opset needs, not the onnx package's newest: runtimes lag behind it
        # (onnxruntime 1.30 reads IR 13 at most, onnx 1.20 writes 14).
        m = self.h.make_model(g, opset_imports=opsets, producer_name="tessel.frontend.models",
                              ir_version=self.h.find_min_ir_version_for(opsets))
        self.onnx.checker.check_model(m)
        return m

    def tensor(self, name, elem, shape):
        return self.h.make_tensor_value_info(name, elem, shape)

    def gemm_head(self, x, cin, classes):
        w = self.const("fc_w", self.he((classes, cin), cin, 1.0))
        b = self.const("fc_b", np.zeros(classes, np.float32))
        return self.node("Gemm", [x, w, b], "fc", transB=1)


def _ch(c, width, divisor=8):
    return max(divisor, int(c * width + divisor / 2) // divisor * divisor)


def resnet50(width=1.0, layers=(3, 4, 6, 3), image=224, classes=1000, seed=0):
    """ResNet-50 v1.5 (stride on the 3x3 conv) for input (1, 3, image, image)."""
    b = _Builder(seed)
    T = b.onnx.TensorProto
    c0 = _ch(64, width)
    x = b.conv_bn("input", 3, c0, 7, stride=2)
    x = b.node("Relu", [x])
    x = b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = c0
    for stage, (n, mid) in enumerate(zip(layers, (64, 128, 256, 512))):
        mid = _ch(mid, width)
        for i in range(n):
            stride = 2 if i == 0 and stage > 0 else 1
            y = b.node("Relu", [b.conv_bn(x, cin, mid, 1)])
            y = b.node("Relu", [b.conv_bn(y, mid, mid, 3, stride=stride)])
            y = b.conv_bn(y, mid, mid * 4, 1, gamma=0.5)
            skip = b.conv_bn(x, cin, mid * 4, 1, stride=stride) if i == 0 else x
            x = b.node("Relu", [b.node("Add", [y, skip])])
            cin = mid * 4
    x = b.node("Flatten", [b.node("GlobalAveragePool", [x])], axis=1)
    y = b.gemm_head(x, cin, classes)
    return b.model([b.tensor("input", T.FLOAT, [1, 3, image, image])],
                   [b.tensor(y, T.FLOAT, [1, classes])], "resnet50")


def mobilenet_v2(width=1.0, layers=None, image=224, classes=1000, seed=0):
    """MobileNetV2 (ReLU6 as Clip 0..6); `layers` caps the blocks of each stage."""
    b = _Builder(seed)
    T = b.onnx.TensorProto
    lo, hi = b.const("zero", np.array(0.0, np.float32)), b.const("six", np.array(6.0, np.float32))

    def relu6(v):
        return b.node("Clip", [v, lo, hi])
    cin = _ch(32, width)
    x = relu6(b.conv_bn("input", 3, cin, 3, stride=2))
    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                (6, 160, 3, 2), (6, 320, 1, 1)]
    for t, c, n, s in settings:
        cout = _ch(c, width)
        for i in range(n if layers is None else min(n, layers)):
            stride = s if i == 0 else 1
            hid = cin * t
            y = relu6(b.conv_bn(x, cin, hid, 1)) if t != 1 else x
            y = relu6(b.conv_bn(y, hid, hid, 3, stride=stride, group=hid))
            y = b.conv_bn(y, hid, cout, 1, gamma=0.5)
            x = b.node("Add", [x, y]) if stride == 1 and cin == cout else y
            cin = cout
    last = _ch(1280, max(width, 1.0))
    x = relu6(b.conv_bn(x, cin, last, 1))
    x = b.node("Flatten", [b.node("GlobalAveragePool", [x])], axis=1)
    y = b.gemm_head(x, last, classes)
    return b.model([b.tensor("input", T.FLOAT, [1, 3, image, image])],
                   [b.tensor(y, T.FLOAT, [1, classes])], "mobilenet_v2")


def bert_encoder(layers=12, hidden=768, heads=12, seq=128, vocab=30522, ffn=None, seed=0):
    """A BERT-base encoder (post-norm, GELU by Erf) for input_ids and attention_mask (1, seq)
    int64; outputs the last hidden state (1, seq, hidden) and the pooler's (1, hidden). The
    embedding layer norm is written out (ReduceMean, Sub, Pow, Sqrt, Div) as older exporters
    write it; head reshapes go through a Shape / Gather / Concat subgraph, folded at import."""
    b = _Builder(seed)
    T = b.onnx.TensorProto
    ffn = ffn or 4 * hidden
    dh = hidden // heads

    def lin(x, cin, cout):
        w = b.const("w", b.he((cin, cout), cin, 1.0))
        bias = b.const("b", (b.rng.standard_normal(cout) * 0.02).astype(np.float32))
        return b.node("Add", [b.node("MatMul", [x, w]), bias])

    def ln(x):
        g = b.const("ln_g", b.rng.uniform(0.8, 1.2, hidden).astype(np.float32))
        beta = b.const("ln_b", (b.rng.standard_normal(hidden) * 0.05).astype(np.float32))
        return b.node("LayerNormalization", [x, g, beta], axis=-1, epsilon=1e-12)

    def ln_decomposed(x):
        mu = b.node("ReduceMean", [x], axes=[-1])
        d = b.node("Sub", [x, mu])
        var = b.node("ReduceMean", [b.node("Pow", [d, b.const("two", np.float32(2.0))])],
                     axes=[-1])
        den = b.node("Sqrt", [b.node("Add", [var, b.const("eps", np.float32(1e-12))])])
        g = b.const("ln_g", b.rng.uniform(0.8, 1.2, hidden).astype(np.float32))
        beta = b.const("ln_b", (b.rng.standard_normal(hidden) * 0.05).astype(np.float32))
        return b.node("Add", [b.node("Mul", [b.node("Div", [d, den]), g]), beta])

    def heads_shape(x):  # [batch, seq, heads, dh] from x's shape, as exporters write it
        s = b.node("Shape", [x])
        dims = [b.node("Unsqueeze", [b.node("Gather", [s, b.const("i", np.int64(i))], axis=0),
                                     b.const("ax", np.array([0], np.int64))]) for i in (0, 1)]
        return b.node("Concat", dims + [b.const("hd", np.array([heads, dh], np.int64))], axis=0)

    ids_emb = b.node("Gather", [b.const("word_emb", (b.rng.standard_normal(
        (vocab, hidden)) * 0.5).astype(np.float32)), "input_ids"], axis=0)
    pos = b.const("pos_emb", (b.rng.standard_normal((512, hidden)) * 0.5).astype(np.float32))
    pos = b.node("Gather", [pos, b.const("pos_ids", np.arange(seq, dtype=np.int64)[None])],
                 axis=0)
    typ = b.const("type_emb", (b.rng.standard_normal((1, hidden)) * 0.5).astype(np.float32))
    x = ln_decomposed(b.node("Add", [b.node("Add", [ids_emb, pos]), typ]))
    m = b.node("Cast", [b.node("Unsqueeze", ["attention_mask",
                                             b.const("ax", np.array([1, 2], np.int64))])],
               to=T.FLOAT)
    mask = b.node("Mul", [b.node("Sub", [b.const("one", np.float32(1.0)), m]),
                          b.const("neg", np.float32(-10000.0))])
    for _ in range(layers):
        q, k, v = (b.node("Reshape", [lin(x, hidden, hidden), heads_shape(x)]) for _ in range(3))
        q = b.node("Transpose", [q], perm=[0, 2, 1, 3])
        k = b.node("Transpose", [k], perm=[0, 2, 3, 1])
        v = b.node("Transpose", [v], perm=[0, 2, 1, 3])
        s = b.node("Div", [b.node("MatMul", [q, k]), b.const("sqrt_dh", np.float32(dh ** 0.5))])
        p = b.node("Softmax", [b.node("Add", [s, mask])], axis=-1)
        c = b.node("Transpose", [b.node("MatMul", [p, v])], perm=[0, 2, 1, 3])
        c = b.node("Reshape", [c, b.const("shape", np.array([1, seq, hidden], np.int64))])
        x = ln(b.node("Add", [lin(c, hidden, hidden), x]))
        h = lin(x, hidden, ffn)
        erf = b.node("Erf", [b.node("Div", [h, b.const("sqrt2", np.float32(2 ** 0.5))])])
        g = b.node("Mul", [b.node("Mul", [h, b.node("Add", [erf, b.const("one", np.float32(1))])]),
                           b.const("half", np.float32(0.5))])
        x = ln(b.node("Add", [lin(g, ffn, hidden), x]))
    first = b.node("Gather", [x, b.const("first", np.int64(0))], axis=1)
    wp = b.const("pool_w", b.he((hidden, hidden), hidden, 1.0))
    pooled = b.node("Tanh", [b.node("Gemm", [first, wp, b.const("pool_b", np.zeros(
        hidden, np.float32))], transB=1)])
    last = b.node("Identity", [x], "last_hidden_state")
    return b.model([b.tensor("input_ids", T.INT64, [1, seq]),
                    b.tensor("attention_mask", T.INT64, [1, seq])],
                   [b.tensor(last, T.FLOAT, [1, seq, hidden]),
                    b.tensor(pooled, T.FLOAT, [1, hidden])], "bert_encoder")
