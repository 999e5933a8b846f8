// Cache primitives: cache_read and cache_write insert a copy stage and redirect reads through it.
// The stages' operations are rebuilt (as TVM's ReplaceDataFlow does); each stage keeps its
// `dag_op`, so the user's tensors still name their stages and the workload key is unchanged.
#include <algorithm>
#include <sstream>

#include "ScheduleInternal.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/te/Operation.h"

namespace tessel {

using internal::schedule_fail;
using A = ScheduleAccess;
using OpMap = std::vector<std::pair<Operation, Operation>>;

namespace internal {

StorageScope parse_scope(const Schedule& s, const char* prim, int stage, const std::string& scope) {
    if (scope == "global") return StorageScope::Global;
    if (scope == "shared") return StorageScope::Shared;
    if (scope == "local") return StorageScope::Local;
    if (scope == "warp") return StorageScope::Warp;
    schedule_fail(s, prim, stage,
                  "unknown storage scope '" + scope + "' (known: global, shared, local, warp)");
}

namespace {

// Replaces reads of mapped operations by reads of the same output of their replacements.
class RedirectReads : public IRMutator {
public:
    RedirectReads(const OpMap& a, const OpMap& b) : a_(a), b_(b) {}
    using IRMutator::visit;

protected:
    Expr visit(const TensorRead* op) override {
        Expr e = IRMutator::visit(op);
        const auto* r = e.as<TensorRead>();
        for (const OpMap* m : {&a_, &b_})
            for (const auto& [from, to] : *m)
                if (r->tensor.op().same_as(from))
                    return TensorRead::make(op_output(to, r->tensor.value_index()), r->indices);
        return e;
    }

private:
    const OpMap& a_;
    const OpMap& b_;
};

}  // namespace

void redirect_reads(std::vector<Stage>& stages, const std::vector<int>& readers, const OpMap& only,
                    OpMap all) {
    const OpMap none;
    for (size_t i = 0; i < stages.size(); ++i) {
        const ComputeOpNode* c = as_compute(stages[i].op);
        if (!c) continue;
        bool listed =
            std::find(readers.begin(), readers.end(), static_cast<int>(i)) != readers.end();
        RedirectReads r(listed ? only : none, all);
        std::vector<Expr> body;
        bool changed = false;
        for (const Expr& b : c->body) {
            body.push_back(r.mutate(b));
            changed = changed || !body.back().same_as(b);
        }
        if (!changed) continue;
        Operation op(new ComputeOpNode(c->name, c->axis, c->reduce_axis, std::move(body)));
        all.emplace_back(stages[i].op, op);
        stages[i].op = op;
    }
}

}  // namespace internal

namespace {

// A compute over `shape` whose outputs are `f`'s values (built with the DSL, so checked).
Operation copy_op(const std::vector<Expr>& shape, const std::string& name,
                  const std::function<std::vector<Expr>(const std::vector<Expr>&)>& f) {
    std::vector<Tensor> out = compute_multi(
        shape, [&](const std::vector<Var>& v) { return f(std::vector<Expr>(v.begin(), v.end())); },
        name);
    return out[0].op();
}

// Reads every output of `op` at `idx`.
std::vector<Expr> read_all(const Operation& op, const std::vector<Expr>& idx) {
    std::vector<Expr> values;
    for (int v = 0; v < op_num_outputs(op); ++v) values.push_back(op_output(op, v)(idx));
    return values;
}

}  // namespace

int Schedule::cache_read(int stage, const std::string& scope, const std::vector<int>& readers) {
    const char* prim = "cache_read";
    if (stage < 0 || stage >= static_cast<int>(stages_.size())) A::loop_stage(*this, prim, stage);
    const Stage& st = stages_[stage];
    // An inlined stage may be cached, as in TVM: the cache stage computes its values (the padded
    // input of a convolution, computed into shared memory by the cache's threads).
    StorageScope sc = internal::parse_scope(*this, prim, stage, scope);
    if (readers.empty()) schedule_fail(*this, prim, stage, "no readers given");
    std::vector<int> moved;  // reader indices after the insertion
    for (int r : readers) {
        std::ostringstream os;
        if (r < 0 || r >= static_cast<int>(stages_.size())) {
            os << "reader index " << r << " out of range (the schedule has " << stages_.size()
               << " stages)";
            schedule_fail(*this, prim, stage, os.str());
        }
        bool reads = false;
        for (const Tensor& t : op_inputs(stages_[r].op)) reads = reads || t.op().same_as(st.op);
        if (!reads) {
            os << "reader '" << stages_[r].name() << "' (stage " << r << ") does not read '"
               << st.name() << "'; readers:";
            for (size_t i = 0; i < stages_.size(); ++i)
                for (const Tensor& t : op_inputs(stages_[i].op))
                    if (t.op().same_as(st.op)) {
                        os << " " << i << " ('" << stages_[i].name() << "')";
                        break;
                    }
            schedule_fail(*this, prim, stage, os.str());
        }
        if (std::find(moved.begin(), moved.end(), r + 1) != moved.end()) {
            os << "reader " << r << " is listed twice";
            schedule_fail(*this, prim, stage, os.str());
        }
        moved.push_back(r + 1);
    }
    Operation src = st.op;
    Operation cache = copy_op(op_shape(src), st.name() + "." + scope,
                              [&](const std::vector<Expr>& idx) { return read_all(src, idx); });
    std::vector<Stage> saved = stages_;
    Stage cs = internal::make_stage(cache);
    cs.scope = sc;
    A::insert_stage(*this, stage + 1, std::move(cs));
    internal::redirect_reads(stages_, moved, {{src, cache}}, {});
    std::string error = internal::new_attachment_error(saved, stages_);
    if (!error.empty()) {
        stages_ = std::move(saved);
        schedule_fail(*this, prim, stage, error);
    }
    record(CacheReadStep{stage, scope, readers});
    return stage + 1;
}

int Schedule::cache_write(int stage, const std::string& scope) {
    const char* prim = "cache_write";
    Stage& st = A::loop_stage(*this, prim, stage);
    if (st.attach == AttachKind::Inlined)
        schedule_fail(*this, prim, stage, "is inlined; it has no storage to cache");
    StorageScope sc = internal::parse_scope(*this, prim, stage, scope);
    internal::require_untransformed(*this, prim, stage);
    const ComputeOpNode* c = as_compute(st.op);
    Operation orig = st.op;
    Operation cache(new ComputeOpNode(c->name + "." + scope, c->axis, c->reduce_axis, c->body));
    Operation copy = copy_op(op_shape(orig), c->name,
                             [&](const std::vector<Expr>& idx) { return read_all(cache, idx); });
    std::vector<Stage> saved = stages_;
    st = internal::replacement_stage(st, copy);
    Stage cs = internal::make_stage(cache);
    cs.scope = sc;
    A::insert_stage(*this, stage, std::move(cs));
    internal::redirect_reads(stages_, {}, {}, {{orig, copy}});
    // The cache stage reads the stage's producers now; one computed at a consumer breaks.
    std::string error = internal::new_attachment_error(saved, stages_);
    if (!error.empty()) {
        stages_ = std::move(saved);
        schedule_fail(*this, prim, stage, error);
    }
    record(CacheWriteStep{stage, scope});
    return stage;
}

}  // namespace tessel
