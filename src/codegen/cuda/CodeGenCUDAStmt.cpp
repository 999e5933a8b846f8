// CUDA C printing of statements (see CodeGenCUDAImpl.h). Thread-bound loops are no loops: each
// thread runs its own iteration, as the SPMD interpreter runs them.
#include "codegen/cuda/CodeGenCUDAImpl.h"
#include "tessel/Error.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/Equality.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel::internal {

void CodeGenCUDA::stmt(const Stmt& s) {
    if (!s.defined()) return;
    switch (s.node_type()) {
        case IRNodeType::LetStmt: return let_stmt(s.as<LetStmt>());
        case IRNodeType::AttrStmt: return stmt(s.as<AttrStmt>()->body);
        case IRNodeType::AssertStmt: {
            // No host to report to: a failed check stops the kernel with an error the runtime
            // sees at its next synchronisation, rather than computing out of bounds.
            const AssertStmt* op = s.as<AssertStmt>();
            std::string c = index_expr(op->condition);
            flush_pre();
            std::string msg = op->message;
            for (char& ch : msg)
                if (ch == '\n' || ch == '*' || ch == '/') ch = ' ';
            line("if (!" + c + ") __trap();  // " + msg);
            return;
        }
        case IRNodeType::For: return for_loop(s.as<For>());
        case IRNodeType::Store: return store(s.as<Store>());
        case IRNodeType::Allocate: return allocate(s.as<Allocate>());
        case IRNodeType::Seq:
            for (const Stmt& x : s.as<Seq>()->stmts) stmt(x);
            return;
        case IRNodeType::IfThenElse: return if_then_else(s.as<IfThenElse>());
        case IRNodeType::Evaluate: return evaluate(s.as<Evaluate>());
        default:
            TESSEL_THROW(CompileError) << "cuda: " << node_type_name(s.node_type())
                                       << " must be lowered away before code generation";
    }
}

// A scope of its own: the same variable may be bound again by a later (e.g. unrolled) copy.
void CodeGenCUDA::let_stmt(const LetStmt* op) {
    Type t = op->value.type();
    std::string n = name_of(op->var.get());
    std::vector<std::string> lanes;
    for (int l = 0; l < t.lanes; ++l) lanes.push_back(expr(op->value, l));
    flush_pre();
    line("{");
    ++indent_;
    // An enclosing binding of the same variable (its lanes) is visible again after this one.
    auto outer = lane_names_.extract(op->var.get());
    if (t.is_vector()) {
        std::vector<std::string>& names = lane_names_[op->var.get()];
        for (int l = 0; l < t.lanes; ++l) {
            names.push_back(fresh(n + "_l" + std::to_string(l)));
            line("const " + value_type(t) + " " + names[l] + " = " + lanes[l] + ";");
        }
    } else {
        line("const " + value_type(t) + " " + n + " = " + lanes[0] + ";");
        bounds_[op->var.get()] = bounds_of(op->value, bounds_);
        modular_[op->var.get()] = modular_set_of(op->value, modular_);
    }
    stmt(op->body);
    lane_names_.erase(op->var.get());
    if (!outer.empty()) lane_names_.insert(std::move(outer));
    --indent_;
    line("}");
}

void CodeGenCUDA::push_bounds(const Var& v, const Expr& min, const Expr& extent) {
    bounds_[v.get()] = Interval::from_range(Range(min, extent));
    modular_.erase(v.get());
}

void CodeGenCUDA::for_loop(const For* op) {
    if (op->kind == ForKind::ThreadBound && thread_tag_axis(op->thread_tag) >= 0)
        return thread_loop(op);
    // Serial, unrolled (if unroll_loops left it), vthread left by the passes: one after another.
    // Vectorized and parallel loops are legal as serial loops too (their iterations are
    // independent); they are not expected here.
    std::string ty = value_type(op->loop_var.type());
    std::string v = name_of(op->loop_var.get());
    std::string min = index_expr(op->min), extent = index_expr(op->extent);
    flush_pre();
    if (op->kind == ForKind::Unrolled) line("#pragma unroll");
    std::string end = is_zero(op->min) ? extent : min + " + " + extent;
    line("for (" + ty + " " + v + " = " + min + "; " + v + " < " + end + "; ++" + v + ") {");
    push_bounds(op->loop_var, op->min, op->extent);
    ++indent_;
    stmt(op->body);
    --indent_;
    line("}");
}

// blockIdx/threadIdx: the thread's own iteration. A loop with a smaller extent than the launch
// dimension (the interpreter runs no iteration for the threads past it) is guarded.
void CodeGenCUDA::thread_loop(const For* op) {
    int axis = thread_tag_axis(op->thread_tag);
    bool block = is_block_tag(op->thread_tag);
    const Expr& dim = block ? kernel_->grid[axis] : kernel_->block[axis];
    Expr extent = simplify(tessel::cast(Int(64), op->extent));
    bool guard = !structural_equal(extent, dim);
    if (auto a = as_const_int(extent), b = as_const_int(dim); a && b) guard = *a != *b;
    std::string ty = value_type(op->loop_var.type());
    std::string idx = op->thread_tag;
    std::string v = name_of(op->loop_var.get());
    std::string min = index_expr(op->min);
    std::string ext = guard ? index_expr(op->extent) : "";
    flush_pre();
    line("{");
    ++indent_;
    std::string value = "(" + ty + ")" + idx;
    if (uses_var(op->body, op->loop_var))  // (TMA's single-thread nests use none)
        line("const " + ty + " " + v + " = " + (is_zero(op->min) ? value : value + " + " + min) +
             ";");
    if (guard) line("if ((" + ty + ")" + idx + " < " + ext + ") {");
    if (!block) thread_axis_[op->loop_var.get()] = axis;
    push_bounds(op->loop_var, op->min, op->extent);
    indent_ += guard ? 1 : 0;
    stmt(op->body);
    indent_ -= guard ? 1 : 0;
    if (guard) line("}");
    --indent_;
    line("}");
}

// Vector stores compute every lane before storing any (a store may overlap the lanes it reads).
void CodeGenCUDA::store(const Store* op) {
    Type t = op->value.type();
    std::string buf = name_of(op->buffer_var.get());
    Type elem = t.element_of();
    if (t.is_scalar()) {
        std::string v = expr(op->value), i = index_expr(op->index);
        std::string p =
            op->predicate.defined() && !is_one(op->predicate) ? index_expr(op->predicate) : "";
        flush_pre();
        std::string s = buf + "[" + i + "] = " + to_memory(v, elem) + ";";
        line(p.empty() ? s : "if (" + p + ") " + s);
        return;
    }
    const Load* src = op->value.as<Load>();
    if (src && dense_bits(op->buffer_var, op->index, op->predicate, t) &&
        dense_bits(src->buffer_var, src->index, src->predicate, t)) {
        std::string vt = t.lanes == 8 ? "uint4" : "uint2";
        std::string to = index_expr(op->index.as<Ramp>()->base);
        std::string from = index_expr(src->index.as<Ramp>()->base);
        flush_pre();
        line("*reinterpret_cast<" + vt + "*>(" + buf + " + " + to + ") = *reinterpret_cast<const " +
             vt + "*>(" + name_of(src->buffer_var.get()) + " + " + from + ");");
        return;
    }
    std::vector<std::string> lanes;
    for (int l = 0; l < t.lanes; ++l) lanes.push_back(expr(op->value, l));
    // 4 or 8 aligned 16-bit lanes (a tensor-core epilogue's conversion to float16): packed two to
    // a 32-bit word, one 8- or 16-byte store.
    if (dense_bits(op->buffer_var, op->index, op->predicate, t)) {
        std::string base = index_expr(op->index.as<Ramp>()->base);
        flush_pre();
        line("{");
        ++indent_;
        std::vector<std::string> words;
        for (int l = 0; l < t.lanes; l += 2) {
            words.push_back(fresh("word"));
            line("const unsigned " + words.back() + " = ((unsigned)" + "(" +
                 to_memory(lanes[l], elem) + ") & 0xFFFFu) | (((unsigned)" + "(" +
                 to_memory(lanes[l + 1], elem) + ") & 0xFFFFu) << 16);");
        }
        const std::string vt = t.lanes == 8 ? "uint4" : "uint2";
        std::string make = "make_" + vt + "(" + words[0];
        for (size_t w = 1; w < words.size(); ++w) make += ", " + words[w];
        line("*reinterpret_cast<" + vt + "*>(" + buf + " + " + base + ") = " + make + ");");
        --indent_;
        line("}");
        return;
    }
    if (dense_vector_access(op->buffer_var, op->index, op->predicate, t)) {
        std::string vt = (t.is_float() ? "float"
                          : t.is_int() ? "int"
                                       : "uint") +
                         std::to_string(t.lanes);
        std::string base = index_expr(op->index.as<Ramp>()->base);
        std::string make = "make_" + vt + "(" + lanes[0];
        for (int l = 1; l < t.lanes; ++l) make += ", " + lanes[l];
        flush_pre();
        line("*reinterpret_cast<" + vt + "*>(" + buf + " + " + base + ") = " + make + ");");
        return;
    }
    std::vector<std::string> idx, pred;
    for (int l = 0; l < t.lanes; ++l) {
        idx.push_back(index_expr(op->index, op->index.type().is_vector() ? l : 0));
        bool masked = op->predicate.defined() && !is_one(op->predicate);
        pred.push_back(masked ? index_expr(op->predicate, l) : "");
    }
    flush_pre();
    line("{");
    ++indent_;
    std::vector<std::string> tmp;
    for (int l = 0; l < t.lanes; ++l) {
        tmp.push_back(fresh("lane"));
        line("const " + value_type(elem) + " " + tmp[l] + " = " + lanes[l] + ";");
    }
    for (int l = 0; l < t.lanes; ++l) {
        std::string s = buf + "[" + idx[l] + "] = " + to_memory(tmp[l], elem) + ";";
        line(pred[l].empty() ? s : "if (" + pred[l] + ") " + s);
    }
    --indent_;
    line("}");
}

// Shared arrays are hoisted to the function's top (one per block, as the interpreter makes them);
// local ones (and global ones inside a kernel: private to the thread) are C arrays.
void CodeGenCUDA::allocate(const Allocate* op) {
    int64_t count = op->dtype.lanes;
    for (const Expr& e : op->extents) {
        auto c = as_const_int(e);
        if (!c) {
            TESSEL_THROW(CompileError)
                << "cuda: " << scope_name(op->scope) << " buffer " << op->buffer_var.name()
                << " in kernel " << kernel_->name << " (stage " << kernel_->stage
                << ") has a size that is not a constant; GPU on-chip buffers need constant sizes";
        }
        count *= *c;
    }
    Type elem = op->dtype.element_of();
    std::string n = name_of(op->buffer_var.get());
    bool declared = buffers_.count(op->buffer_var.get()) > 0;  // e.g. an unrolled copy
    BufferInfo& info = buffers_[op->buffer_var.get()];
    info.elem = elem;
    info.aligned16 = true;
    if (op->scope == StorageScope::Shared) {
        if (!declared) shared_.push_back({memory_type(elem), n, count, elem.bytes()});
        return stmt(op->body);
    }
    if (op->scope == StorageScope::Warp) {  // each lane holds 1/32 (ir/Fragment.h)
        if (count % 32)
            TESSEL_THROW(CompileError) << "cuda: warp buffer " << op->buffer_var.name() << " of "
                                       << count << " elements (a multiple of 32 expected)";
        count /= 32;
        lane_count_[op->buffer_var.get()] = count;
    }
    line("{");  // a scope of its own: a later copy of this allocation declares it again
    ++indent_;
    line("__align__(16) " + memory_type(elem) + " " + n + "[" + std::to_string(count) + "];");
    stmt(op->body);
    --indent_;
    line("}");
}

void CodeGenCUDA::if_then_else(const IfThenElse* op) {
    std::string c = index_expr(op->condition);
    flush_pre();
    line("if (" + c + ") {");
    ++indent_;
    stmt(op->then_case);
    --indent_;
    if (op->else_case.defined()) {
        line("} else {");
        ++indent_;
        stmt(op->else_case);
        --indent_;
    }
    line("}");
}

void CodeGenCUDA::evaluate(const Evaluate* op) {
    if (const Call* c = op->value.as<Call>()) {
        if (c->op == Intrinsic::thread_barrier) return line("__syncthreads();");
        if (c->op == Intrinsic::thread_allreduce) return allreduce(c);
        if (c->op == Intrinsic::cp_async) return cp_async(c);
        if (c->op == Intrinsic::tile_arrive) return tile_arrive(c);
        if (c->op == Intrinsic::cp_async_commit)
            return line("asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");");
        if (c->op == Intrinsic::cp_async_wait)
            return line("asm volatile(\"cp.async.wait_group " +
                        std::to_string(*as_const_int(c->args[0])) + ";\\n\" ::: \"memory\");");
        if (c->op == Intrinsic::fence_proxy_async)
            return line("asm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: \"memory\");");
        if (is_tensor_core_intrinsic(c->op)) return tensor_core(c);
        if (c->op == Intrinsic::mbarrier_init || c->op == Intrinsic::mbarrier_expect_tx ||
            c->op == Intrinsic::mbarrier_wait || c->op == Intrinsic::mbarrier_arrive ||
            c->op == Intrinsic::tma_load || c->op == Intrinsic::tma_store ||
            c->op == Intrinsic::tma_store_wait)
            return tma(c);
        if (c->op == Intrinsic::setmaxnreg)
            return line(std::string("asm volatile(\"setmaxnreg.") +
                        (*as_const_int(c->args[1]) ? "inc" : "dec") + ".sync.aligned.u32 " +
                        std::to_string(*as_const_int(c->args[0])) + ";\\n\" ::: \"memory\");");
    }
    std::string v = expr(op->value);
    flush_pre();
    line("(void)" + v + ";");
}

// tile_arrive (ir/IR.h): every thread fences its global writes for the device, a barrier, then
// thread (0, 0, 0) arrives with one atomic add; the count-th arrival resets the counter, and
// __syncthreads_or tells every thread of the block, which then fences again (acquire) before it
// reads what the other blocks wrote.
void CodeGenCUDA::tile_arrive(const Call* op) {
    const std::string counter = name_of(op->args[0].as<Variable>());
    const std::string last = name_of(op->args[3].as<Variable>());
    const std::string tile = index_expr(op->args[1]);
    const std::string count = std::to_string(*as_const_int(op->args[2]));
    flush_pre();
    line("{");
    ++indent_;
    line("__threadfence();");
    line("__syncthreads();");
    line("int tessel_last = 0;");
    line("if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {");
    ++indent_;
    line("tessel_last = atomicAdd((int*)&" + counter + "[" + tile + "], 1) == " + count + " - 1;");
    line("if (tessel_last) atomicExch((int*)&" + counter + "[" + tile + "], 0);");
    --indent_;
    line("}");
    line(last + "[0] = __syncthreads_or(tessel_last);");
    line("if (" + last + "[0]) __threadfence();");
    --indent_;
    line("}");
}

// cp.async (sm_80+): .cg (L2 only) for 16 bytes, .ca for 4 and 8 (.cg takes only 16); the
// source size operand gives the zero fill of padded tiles. The shared address is the 32-bit
// offset in the shared window; the global one a generic pointer, as CUDA's own headers pass it.
void CodeGenCUDA::cp_async(const Call* op) {
    const Variable* dst = op->args[0].as<Variable>();
    const Variable* src = op->args[2].as<Variable>();
    const int64_t bytes = *as_const_int(op->args[4]);
    auto it = buffers_.find(src);
    if (it != buffers_.end() && it->second.param >= 0 &&
        it->second.param < static_cast<int>(f_.args.size())) {
        int64_t& align = arg_alignment_[it->second.param];
        align = std::max<int64_t>(align, bytes);
    }
    std::string d = index_expr(op->args[1]), s = index_expr(op->args[3]);
    std::string n = index_expr(op->args[5]);
    flush_pre();
    // The shared address in 32 bits: the buffer's (loop-invariant) window offset plus the byte
    // offset, not a 64-bit generic pointer converted per copy. The source size operand only
    // where it can be less than the copy (zero fill).
    const std::string buf = name_of(dst);
    const std::string to = "(unsigned)__cvta_generic_to_shared(" + buf + ") + (unsigned)(" + d +
                           ") * (unsigned)sizeof(*" + buf + ")";
    const std::optional<int64_t> full = as_const_int(op->args[5]);
    const bool fill = !full || *full != bytes;
    line("asm volatile(\"cp.async." + std::string(bytes == 16 ? "cg" : "ca") +
         ".shared.global [%0], [%1], " + std::to_string(bytes) + (fill ? ", %2" : "") +
         ";\\n\" :: \"r\"(" + to + "), \"l\"(" + name_of(src) + " + " + s + ")" +
         (fill ? ", \"r\"((int)(" + n + "))" : "") + " : \"memory\");");
}

}  // namespace tessel::internal
