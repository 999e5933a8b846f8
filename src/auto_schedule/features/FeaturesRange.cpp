// IndexRange (FeaturesInternal.h): interval evaluation of the index expressions of one store over
// its loops. Plain interval arithmetic in doubles (no overflow; the sizes feed log-scaled
// features), exact for the affine indices schedules make, an over-approximation for the rest.
#include <algorithm>
#include <cmath>

#include "FeaturesInternal.h"

namespace tessel::internal {

namespace {

IndexSpan point(double v) {
    return {v, v};
}

IndexSpan hull(IndexSpan a, IndexSpan b) {
    return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}

IndexSpan mul(IndexSpan a, IndexSpan b) {
    double p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
    return {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
}

// a / b rounded down, for a constant divisor; otherwise `a` (an unknown divisor keeps the span).
IndexSpan div(IndexSpan a, IndexSpan b) {
    if (b.lo != b.hi || b.lo == 0) return a;
    double lo = std::floor(a.lo / b.lo), hi = std::floor(a.hi / b.lo);
    return {std::min(lo, hi), std::max(lo, hi)};
}

// a mod b with the divisor's sign, for a constant divisor: exact while `a` stays in one period.
IndexSpan mod(IndexSpan a, IndexSpan b) {
    double c = std::max(std::fabs(b.lo), std::fabs(b.hi));
    if (c == 0) return point(0);
    if (b.lo == b.hi && std::floor(a.lo / c) == std::floor(a.hi / c)) {
        double base = std::floor(a.lo / c) * c;
        return {a.lo - base, a.hi - base};
    }
    return {0, c - 1};
}

}  // namespace

IndexRange::IndexRange(const FeatureProgram& program, const FeatureStore& store)
    : program_(program) {
    for (int id : store.loops) {
        const FeatureLoop& l = program.loops[id];
        vars_.push_back(l.var);
        full_.push_back({double(l.min), double(l.min + l.extent - 1)});
    }
    now_ = full_;
}

void IndexRange::vary_from(size_t from) {
    for (size_t i = 0; i < full_.size(); ++i) now_[i] = i >= from ? full_[i] : point(full_[i].lo);
}

void IndexRange::vary_only(size_t level) {
    for (size_t i = 0; i < full_.size(); ++i) now_[i] = i == level ? full_[i] : point(full_[i].lo);
}

IndexSpan IndexRange::eval(const Expr& e) const {
    switch (e.node_type()) {
        case IRNodeType::IntImm: return point(double(e.as<IntImm>()->value));
        case IRNodeType::UIntImm: return point(double(e.as<UIntImm>()->value));
        case IRNodeType::FloatImm: return point(e.as<FloatImm>()->value);
        case IRNodeType::Variable: {
            const Variable* v = e.as<Variable>();
            for (size_t i = 0; i < vars_.size(); ++i)
                if (vars_[i] == v) return now_[i];
            for (const FeatureLet& l : program_.lets)
                if (l.var == v) return eval(*l.value);
            return point(0);
        }
        case IRNodeType::Cast: return eval(e.as<Cast>()->value);
        case IRNodeType::Add: {
            IndexSpan a = eval(e.as<Add>()->a), b = eval(e.as<Add>()->b);
            return {a.lo + b.lo, a.hi + b.hi};
        }
        case IRNodeType::Sub: {
            IndexSpan a = eval(e.as<Sub>()->a), b = eval(e.as<Sub>()->b);
            return {a.lo - b.hi, a.hi - b.lo};
        }
        case IRNodeType::Mul: return mul(eval(e.as<Mul>()->a), eval(e.as<Mul>()->b));
        case IRNodeType::Div: return div(eval(e.as<Div>()->a), eval(e.as<Div>()->b));
        case IRNodeType::FloorDiv: return div(eval(e.as<FloorDiv>()->a), eval(e.as<FloorDiv>()->b));
        case IRNodeType::Mod: return mod(eval(e.as<Mod>()->a), eval(e.as<Mod>()->b));
        case IRNodeType::FloorMod: return mod(eval(e.as<FloorMod>()->a), eval(e.as<FloorMod>()->b));
        case IRNodeType::Min: {
            IndexSpan a = eval(e.as<Min>()->a), b = eval(e.as<Min>()->b);
            return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
        }
        case IRNodeType::Max: {
            IndexSpan a = eval(e.as<Max>()->a), b = eval(e.as<Max>()->b);
            return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
        }
        case IRNodeType::Select:
            return hull(eval(e.as<Select>()->true_value), eval(e.as<Select>()->false_value));
        case IRNodeType::Call: {
            const Call* c = e.as<Call>();
            if (c->op == Intrinsic::if_then_else) return hull(eval(c->args[1]), eval(c->args[2]));
            return point(0);
        }
        case IRNodeType::Ramp: {
            const Ramp* r = e.as<Ramp>();
            IndexSpan base = eval(r->base);
            IndexSpan last = mul(eval(r->stride), point(r->lanes - 1));
            return {base.lo + std::min(0.0, last.lo), base.hi + std::max(0.0, last.hi)};
        }
        case IRNodeType::Broadcast: return eval(e.as<Broadcast>()->value);
        case IRNodeType::Let: return eval(e.as<Let>()->body);
        default: return point(0);  // data-dependent (loads) or boolean: no span of its own
    }
}

}  // namespace tessel::internal
