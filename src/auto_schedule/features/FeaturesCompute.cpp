// Group 1 of the features (FeaturesInternal.h): what a store computes (operation counts by kind,
// times the iterations of its loops), how its loops are annotated, and the GPU launch extents
// around it.
#include <algorithm>

#include "FeaturesInternal.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel::internal {

namespace {

// The 16 operation counters in column order.
enum OpCount {
    kFloatMad,
    kFloatAddSub,
    kFloatMul,
    kFloatDivMod,
    kFloatCmp,
    kFloatMath,
    kFloatOther,
    kIntMad,
    kIntAddSub,
    kIntMul,
    kIntDivMod,
    kIntCmp,
    kIntMath,
    kIntOther,
    kBoolOp,
    kSelectOp,
    kNumOpCounts
};

bool is_math(Intrinsic op) {
    switch (op) {
        case Intrinsic::exp:
        case Intrinsic::exp2:
        case Intrinsic::log:
        case Intrinsic::log2:
        case Intrinsic::sqrt:
        case Intrinsic::rsqrt:
        case Intrinsic::tanh:
        case Intrinsic::sigmoid:
        case Intrinsic::erf:
        case Intrinsic::sin:
        case Intrinsic::cos:
        case Intrinsic::pow: return true;
        default: return false;
    }
}

// Counts the operations of one execution of a store: its value and every index (its own and its
// loads'). a * b + c, a * b - c and c - a * b count as one multiply-add (the backends contract
// them), as does an explicit fma.
class OpCounter : public IRVisitor {
public:
    double count[kNumOpCounts] = {};
    using IRVisitor::visit;

protected:
    void add(const Expr& e, OpCount f, OpCount i) {
        count[e.type().is_float() ? f : i] += lanes(e);
    }
    static double lanes(const Expr& e) { return e.type().lanes; }
    template <typename T>
    void add_or_mad(const T* op, const Expr& self) {
        const Mul* m =
            op->a.template as<Mul>() ? op->a.template as<Mul>() : op->b.template as<Mul>();
        if (!m) {
            add(self, kFloatAddSub, kIntAddSub);
            IRVisitor::visit(op);
            return;
        }
        add(self, kFloatMad, kIntMad);
        const Expr& other = op->a.template as<Mul>() ? op->b : op->a;
        visit(m->a);
        visit(m->b);
        visit(other);
    }
    void visit(const Add* op) override { add_or_mad(op, Expr(op)); }
    void visit(const Sub* op) override { add_or_mad(op, Expr(op)); }
    void visit(const Mul* op) override { binary(op, Expr(op), kFloatMul, kIntMul); }
    void visit(const Div* op) override { binary(op, Expr(op), kFloatDivMod, kIntDivMod); }
    void visit(const Mod* op) override { binary(op, Expr(op), kFloatDivMod, kIntDivMod); }
    void visit(const FloorDiv* op) override { binary(op, Expr(op), kFloatDivMod, kIntDivMod); }
    void visit(const FloorMod* op) override { binary(op, Expr(op), kFloatDivMod, kIntDivMod); }
    void visit(const Min* op) override { binary(op, Expr(op), kFloatCmp, kIntCmp); }
    void visit(const Max* op) override { binary(op, Expr(op), kFloatCmp, kIntCmp); }
    void visit(const EQ* op) override { compare(op); }
    void visit(const NE* op) override { compare(op); }
    void visit(const LT* op) override { compare(op); }
    void visit(const LE* op) override { compare(op); }
    void visit(const GT* op) override { compare(op); }
    void visit(const GE* op) override { compare(op); }
    void visit(const And* op) override { logic(op, Expr(op)); }
    void visit(const Or* op) override { logic(op, Expr(op)); }
    void visit(const Not* op) override { logic(op, Expr(op)); }
    void visit(const Select* op) override {
        count[kSelectOp] += lanes(Expr(op));
        IRVisitor::visit(op);
    }
    void visit(const Call* op) override;

private:
    template <typename T>
    void binary(const T* op, const Expr& self, OpCount f, OpCount i) {
        add(self, f, i);
        IRVisitor::visit(op);
    }
    template <typename T>
    void compare(const T* op) {
        count[op->a.type().is_float() ? kFloatCmp : kIntCmp] += op->a.type().lanes;
        IRVisitor::visit(op);
    }
    template <typename T>
    void logic(const T* op, const Expr& self) {
        count[kBoolOp] += lanes(self);
        IRVisitor::visit(op);
    }
};

void OpCounter::visit(const Call* op) {
    Expr self(op);
    bool is_float = !op->args.empty() && op->args[0].type().is_float();
    if (op->op == Intrinsic::if_then_else)
        count[kSelectOp] += lanes(self);
    else if (op->op == Intrinsic::fma)
        add(self, kFloatMad, kIntMad);
    else if (is_math(op->op))
        count[is_float ? kFloatMath : kIntMath] += lanes(self);
    else if (op->op != Intrinsic::likely)
        count[is_float ? kFloatOther : kIntOther] += lanes(self);
    IRVisitor::visit(op);
}

OpCounter count_ops(const FeatureStore& store) {
    OpCounter c;
    c.visit(store.store->value);
    for (const Expr& i : store.store->indices) c.visit(i);
    return c;
}

// Positions of an annotated loop (column order after num, prod, len).
enum Position {
    kNone,
    kInnerSpatial,
    kMiddleSpatial,
    kOuterSpatial,
    kInnerReduce,
    kMiddleReduce,
    kOuterReduce,
    kMixed
};

// Per loop of the store's nest: whether it is spatial for the store rather than a reduction loop:
// its variable appears in the store's own indices, or it encloses the allocation of the stored
// buffer (each of its iterations fills a new tile: the loops outside a cache stage's buffer).
std::vector<char> spatial_loops(const FeatureProgram& p, const FeatureStore& store) {
    std::vector<const IRNode*> vars;
    for (const Expr& i : store.store->indices)
        post_order_visit(i, [&](const IRNode* n) {
            if (n->node_type == IRNodeType::Variable) vars.push_back(n);
        });
    const FeatureBuffer& stored = p.buffers[store.accesses[0].buffer];
    size_t outside = stored.allocated ? stored.alloc_depth : 0;
    std::vector<char> spatial;
    for (size_t i = 0; i < store.loops.size(); ++i) {
        const Variable* v = p.loops[store.loops[i]].var;
        spatial.push_back(i < outside || std::find(vars.begin(), vars.end(), v) != vars.end());
    }
    return spatial;
}

// Where the loop at nest position `at` sits among the store's loops of its own class.
Position position(const std::vector<char>& spatial, size_t at) {
    bool first = true, last = true;
    for (size_t i = 0; i < spatial.size(); ++i) {
        if (i == at || spatial[i] != spatial[at]) continue;
        if (i < at) first = false;
        if (i > at) last = false;
    }
    if (last) return spatial[at] ? kInnerSpatial : kInnerReduce;
    if (first) return spatial[at] ? kOuterSpatial : kOuterReduce;
    return spatial[at] ? kMiddleSpatial : kMiddleReduce;
}

// num, prod, len and the one-hot position of the store's loops of one kind.
void annotation(const FeatureProgram& p, const FeatureStore& store,
                const std::vector<char>& spatial, ForKind kind, float* out) {
    double num = 0, prod = 1, len = 0;
    int innermost = -1;
    bool mixed = false;
    for (size_t i = 0; i < store.loops.size(); ++i) {
        const FeatureLoop& l = p.loops[store.loops[i]];
        if (l.kind != kind) continue;
        if (innermost >= 0 && spatial[i] != spatial[innermost]) mixed = true;
        num += 1;
        prod *= double(l.extent);
        len = double(l.extent);
        innermost = static_cast<int>(i);
    }
    Position pos = innermost < 0 ? kNone : mixed ? kMixed : position(spatial, innermost);
    out[0] = float(num);
    out[1] = float(num > 0 ? prod : 0);
    out[2] = float(len);
    out[3 + pos] = 1;
}

void gpu(const FeatureProgram& p, const FeatureStore& store, const FeatureContext& context,
         float* out) {
    static const char* const kTags[6] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                         "threadIdx.x", "threadIdx.y", "threadIdx.z"};
    out[0] = context.is_gpu ? 1 : 0;
    double len[7] = {1, 1, 1, 1, 1, 1, 1};
    for (int id : store.loops) {
        const FeatureLoop& l = p.loops[id];
        if (l.kind != ForKind::ThreadBound) continue;
        for (int t = 0; t < 6; ++t)
            if (*l.thread_tag == kTags[t]) len[t] *= double(l.extent);
    }
    const std::string& name = store.store->buffer.name();
    for (const auto& [stage, extent] : context.vthread_extents)
        if (stage == name) len[6] = double(extent);
    for (int t = 0; t < 7; ++t) out[1 + t] = float(len[t]);
}

}  // namespace

double float_ops_per_execution(const FeatureStore& store) {
    OpCounter c = count_ops(store);
    double ops = 0;
    for (int f = kFloatMad; f <= kFloatOther; ++f) ops += c.count[f] * (f == kFloatMad ? 2 : 1);
    return ops;
}

void compute_features(const FeatureProgram& program, const FeatureStore& store,
                      const FeatureContext& context, float* row) {
    OpCounter c = count_ops(store);
    for (int f = 0; f < kNumOpCounts; ++f)
        row[kColCompute + f] = float(c.count[f] * store.outer_prod);
    std::vector<char> spatial = spatial_loops(program, store);
    const ForKind kinds[3] = {ForKind::Vectorized, ForKind::Unrolled, ForKind::Parallel};
    for (int k = 0; k < 3; ++k)
        annotation(program, store, spatial, kinds[k], row + kColAnnotations + k * kAnnotationWidth);
    gpu(program, store, context, row + kColGpu);
}

}  // namespace tessel::internal
