// Phase 1 of feature extraction (FeaturesInternal.h): one walk of the IR at the feature point
// records the loops, buffers, allocations and store statements. A hand-written switch rather
// than an IRVisitor: this runs for every candidate the search scores.
#include <algorithm>

#include "FeaturesInternal.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel::internal {

namespace {

int64_t const_or(const Expr& e, int64_t fallback) {
    std::optional<int64_t> v = as_const_int(e);
    return v ? *v : fallback;
}

// Collects the BufferLoads of an expression (and of their indices) and the Lets in it.
class LoadCollector : public IRVisitor {
public:
    explicit LoadCollector(std::vector<const BufferLoad*>* loads, std::vector<FeatureLet>* lets)
        : loads_(loads), lets_(lets) {}
    using IRVisitor::visit;

protected:
    void visit(const BufferLoad* op) override {
        loads_->push_back(op);
        IRVisitor::visit(op);
    }
    void visit(const Let* op) override {
        lets_->push_back({op->var.get(), &op->value});
        IRVisitor::visit(op);
    }

private:
    std::vector<const BufferLoad*>* loads_;
    std::vector<FeatureLet>* lets_;
};

class Walker {
public:
    explicit Walker(FeatureProgram* p) : p_(p) {}
    void walk(const Stmt& s);

private:
    int buffer_id(const Variable* data);
    int buffer_of(const Buffer& b);
    void add_store(const BufferStore* op);
    void add_allocate(const Allocate* op);

    FeatureProgram* p_;
    std::vector<int> loops_;  // the loops around the current statement, outermost first
    std::vector<int64_t> unroll_pragmas_;
    double outer_prod_ = 1;
};

void Walker::walk(const Stmt& s) {
    if (!s.defined()) return;
    switch (s.node_type()) {
        case IRNodeType::For: {
            const For* op = s.as<For>();
            FeatureLoop loop;
            loop.var = op->loop_var.get();
            loop.min = const_or(op->min, 0);
            loop.extent = std::max<int64_t>(const_or(op->extent, 1), 1);
            loop.kind = op->kind;
            loop.thread_tag = &op->thread_tag;
            p_->loops.push_back(loop);
            loops_.push_back(static_cast<int>(p_->loops.size()) - 1);
            double saved = outer_prod_;
            outer_prod_ *= double(loop.extent);
            walk(op->body);
            outer_prod_ = saved;
            loops_.pop_back();
            return;
        }
        case IRNodeType::AttrStmt: {
            const AttrStmt* op = s.as<AttrStmt>();
            bool pragma = op->key == "pragma_auto_unroll_max_step";
            if (pragma) unroll_pragmas_.push_back(const_or(op->value, 0));
            walk(op->body);
            if (pragma) unroll_pragmas_.pop_back();
            return;
        }
        case IRNodeType::LetStmt: {
            const LetStmt* op = s.as<LetStmt>();
            p_->lets.push_back({op->var.get(), &op->value});
            walk(op->body);
            return;
        }
        case IRNodeType::Allocate: add_allocate(s.as<Allocate>()); return;
        case IRNodeType::Seq:
            for (const Stmt& c : s.as<Seq>()->stmts) walk(c);
            return;
        case IRNodeType::IfThenElse:
            walk(s.as<IfThenElse>()->then_case);
            walk(s.as<IfThenElse>()->else_case);
            return;
        case IRNodeType::BufferStore: add_store(s.as<BufferStore>()); return;
        default: return;  // Evaluate, AssertStmt, flat Store: nothing to describe
    }
}

int Walker::buffer_id(const Variable* data) {
    for (size_t i = 0; i < p_->buffers.size(); ++i)
        if (p_->buffers[i].data == data) return static_cast<int>(i);
    FeatureBuffer b;
    b.data = data;
    p_->buffers.push_back(b);
    return static_cast<int>(p_->buffers.size()) - 1;
}

// The buffer's entry, with its shape and strides filled on first sight.
int Walker::buffer_of(const Buffer& buf) {
    int id = buffer_id(buf->data.get());
    FeatureBuffer& b = p_->buffers[id];
    if (b.elem_bytes) return id;
    b.name = buf.name();
    b.elem_bytes = buf.dtype().element_of().bytes();
    size_t n = buf.shape().size();
    b.shape.resize(n);
    for (size_t d = 0; d < n; ++d) b.shape[d] = const_or(buf.shape()[d], -1);
    b.strides.assign(n, 1);
    b.compact = buf->strides.empty();
    if (!b.compact) {
        for (size_t d = 0; d < n && d < buf->strides.size(); ++d)
            b.strides[d] = const_or(buf->strides[d], 1);
    } else {
        for (size_t d = n; d-- > 1;)
            b.strides[d - 1] = b.strides[d] * std::max<int64_t>(b.shape[d], 1);
    }
    return id;
}

void Walker::add_allocate(const Allocate* op) {
    FeatureBuffer& b = p_->buffers[buffer_id(op->buffer_var.get())];
    b.allocated = true;
    b.alloc_elements = 1;
    for (const Expr& e : op->extents)
        b.alloc_elements *= double(std::max<int64_t>(const_or(e, 1), 1));
    b.alloc_outer_prod = outer_prod_;
    b.alloc_depth = loops_.size();
    walk(op->body);
}

void Walker::add_store(const BufferStore* op) {
    FeatureStore st;
    st.store = op;
    st.loops = loops_;
    st.outer_prod = outer_prod_;
    st.auto_unroll_max_step = unroll_pragmas_.empty() ? 0 : unroll_pragmas_.back();
    std::vector<const BufferLoad*> loads;
    LoadCollector collect(&loads, &p_->lets);
    collect.visit(op->value);
    for (const Expr& i : op->indices) collect.visit(i);
    st.accesses.push_back({buffer_of(op->buffer), &op->indices, true});
    for (const BufferLoad* l : loads)
        st.accesses.push_back({buffer_of(l->buffer), &l->indices, false});
    p_->stores.push_back(std::move(st));
}

}  // namespace

FeatureProgram collect_feature_program(const Stmt& body) {
    FeatureProgram p;
    Walker(&p).walk(body);
    return p;
}

}  // namespace tessel::internal
