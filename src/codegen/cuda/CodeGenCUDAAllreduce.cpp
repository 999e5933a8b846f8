// thread_allreduce (ir/IR.h) as CUDA C. Every thread of the block executes it, as a barrier.
//  - Fast path: the group is a power of two of consecutive threads (the reduced axes are
//    threadIdx.x, or x and y) and every warp is full (or the block is one partial warp): a
//    butterfly of __shfl_xor_sync within each warp, then, for groups larger than a warp, the
//    warps' results through shared memory. Each butterfly step combines (lower thread, higher
//    thread) in that order on both sides, so every thread of a group gets the same bits.
//  - Otherwise: every thread stores its value into a shared array, and every thread combines its
//    group's values from the identity in the interpreter's order.
// Where shared memory is used (groups across warps, or the general case) a __syncthreads() ends
// the reduction, so that the scratch array is not overwritten by the next reduction while another
// thread still reads it; such an all-reduce is a barrier of the block (insert_barriers and the SPMD
// interpreter treat it as one). A group within a warp (allreduce_within_warps, lower/PassUtil.h)
// reduces in registers alone and ends without a barrier: it is no barrier for the passes either,
// and insert_barriers places a thread_barrier around it where shared memory needs one.
#include "codegen/cuda/CodeGenCUDAImpl.h"
#include "lower/PassUtil.h"
#include "tessel/Error.h"

namespace tessel::internal {

namespace {

struct AllreduceArgs {
    int n = 0, m = 0;
    const Call* op = nullptr;
    const Expr& value(int v) const { return op->args[2 + v]; }
    const Expr& identity(int v) const { return op->args[2 + n + v]; }
    const Expr& lhs(int v) const { return op->args[2 + 2 * n + v]; }
    const Expr& rhs(int v) const { return op->args[2 + 3 * n + v]; }
    const Expr& result(int v) const { return op->args[2 + 4 * n + v]; }
    const Expr& dest(int v) const { return op->args[2 + 5 * n + v]; }
    const Expr& thread(int k) const { return op->args[2 + 6 * n + k]; }
};

AllreduceArgs parse(const Call* op) {
    AllreduceArgs a;
    a.op = op;
    a.n = static_cast<int>(as_const_int(op->args[0]).value());
    a.m = static_cast<int>(as_const_int(op->args[1]).value());
    return a;
}

bool power_of_two(int64_t v) {
    return v > 0 && (v & (v - 1)) == 0;
}

}  // namespace

std::string CodeGenCUDA::linear_thread_index() const {
    int64_t x = *as_const_int(kernel_->block[0]), y = *as_const_int(kernel_->block[1]);
    std::string s = "(int)threadIdx.x";
    if (y > 1) s += " + " + std::to_string(x) + " * (int)threadIdx.y";
    if (*as_const_int(kernel_->block[2]) > 1)
        s += " + " + std::to_string(x * y) + " * (int)threadIdx.z";
    return s;
}

// out = combine(a, b), binding the combiner's lhs/rhs variables in a block of their own.
void CodeGenCUDA::combine(const Call* call, const std::vector<std::string>& out,
                          const std::vector<std::string>& a, const std::vector<std::string>& b) {
    AllreduceArgs r = parse(call);
    line("{");
    ++indent_;
    for (int v = 0; v < r.n; ++v) {
        std::string ty = value_type(r.value(v).type());
        line("const " + ty + " " + name_of(r.lhs(v).as<Variable>()) + " = " + a[v] + ";");
        line("const " + ty + " " + name_of(r.rhs(v).as<Variable>()) + " = " + b[v] + ";");
    }
    std::vector<std::string> results;
    for (int v = 0; v < r.n; ++v) {
        ++lazy_depth_;  // nothing may be hoisted out of this block
        std::string e = expr(r.result(v));
        --lazy_depth_;
        results.push_back(fresh("comb"));
        line("const " + value_type(r.value(v).type()) + " " + results[v] + " = " + e + ";");
    }
    for (int v = 0; v < r.n; ++v) line(out[v] + " = " + results[v] + ";");
    --indent_;
    line("}");
}

void CodeGenCUDA::allreduce(const Call* op) {
    AllreduceArgs r = parse(op);
    std::vector<int> axes;
    for (int k = 0; k < r.m; ++k) {
        auto it = thread_axis_.find(r.thread(k).as<Variable>());
        if (it == thread_axis_.end()) {
            TESSEL_THROW(CompileError) << "cuda: thread_allreduce in kernel " << kernel_->name
                                       << " reduces over a variable that is not a threadIdx loop";
        }
        axes.push_back(it->second);
    }
    int64_t dims[3], total = 1, group = 1;
    for (int a = 0; a < 3; ++a) {
        auto c = as_const_int(kernel_->block[a]);
        if (!c) {
            TESSEL_THROW(CompileError)
                << "cuda: the cross-thread reduction of stage " << kernel_->stage << " in kernel "
                << kernel_->name << " needs constant thread extents";
        }
        dims[a] = *c;
        total *= *c;
    }
    int mask = 0;
    for (int a : axes) mask |= 1 << a;
    for (int a : axes) group *= dims[a];
    std::vector<std::string> acc, ident;
    std::vector<std::string> values;
    for (int v = 0; v < r.n; ++v) values.push_back(expr(r.value(v)));
    for (int v = 0; v < r.n; ++v) ident.push_back(expr(r.identity(v)));
    flush_pre();
    line("{  // thread_allreduce over " + std::to_string(group) + " threads per group");
    ++indent_;
    line("const int tsl_tid = " + linear_thread_index() + ";");
    for (int v = 0; v < r.n; ++v) {
        acc.push_back(fresh("red"));
        line(value_type(r.value(v).type()) + " " + acc[v] + " = " + values[v] + ";");
    }
    bool lowest = mask == 1 || mask == 3;  // x, or x and y: consecutive threads
    bool warps_full = total % 32 == 0 || total < 32;
    if (lowest && power_of_two(group) && warps_full) {
        combine(op, acc, ident, acc);  // identity first, as the interpreter starts from it
        warp_allreduce(op, acc, static_cast<int>(group), static_cast<int>(total));
    } else {
        shared_allreduce(op, acc, axes);
    }
    for (int v = 0; v < r.n; ++v) {
        Type t = r.value(v).type();
        line(name_of(r.dest(v).as<Variable>()) + "[0] = " + to_memory(acc[v], t) + ";");
    }
    if (!allreduce_within_warps(dims, axes)) line("__syncthreads();");
    --indent_;
    line("}");
}

void CodeGenCUDA::warp_allreduce(const Call* op, const std::vector<std::string>& acc, int group,
                                 int total) {
    AllreduceArgs r = parse(op);
    std::string mask = total >= 32 ? "0xffffffffu" : std::to_string((1u << total) - 1) + "u";
    for (int off = std::min(group, 32) / 2; off >= 1; off /= 2) {
        line("{");
        ++indent_;
        std::vector<std::string> other;
        for (int v = 0; v < r.n; ++v) {
            other.push_back(fresh("other"));
            line("const " + value_type(r.value(v).type()) + " " + other[v] + " = tsl_shfl_xor(" +
                 mask + ", " + acc[v] + ", " + std::to_string(off) + ");");
        }
        // Both partners combine (lower thread's value, higher thread's value).
        std::string upper = "(tsl_tid & " + std::to_string(off) + ") != 0";
        std::vector<std::string> lo, hi;
        for (int v = 0; v < r.n; ++v) {
            std::string ty = value_type(r.value(v).type());
            lo.push_back(fresh("lo"));
            hi.push_back(fresh("hi"));
            line("const " + ty + " " + lo[v] + " = " + upper + " ? " + other[v] + " : " + acc[v] +
                 ";");
            line("const " + ty + " " + hi[v] + " = " + upper + " ? " + acc[v] + " : " + other[v] +
                 ";");
        }
        combine(op, acc, lo, hi);
        --indent_;
        line("}");
    }
    if (group <= 32) return;
    // Larger groups: one result per warp through shared memory, combined in warp order.
    int warps = group / 32, all_warps = total / 32;
    std::vector<std::string> scratch;
    for (int v = 0; v < r.n; ++v) {
        Type t = r.value(v).type();
        scratch.push_back(fresh("red_buf"));
        int64_t bytes = t.is_float() && t.bits == 16 ? 4 : t.bytes();
        shared_.push_back({value_type(t), scratch[v], all_warps, bytes});
    }
    line("if ((tsl_tid & 31) == 0) {");
    for (int v = 0; v < r.n; ++v) line("    " + scratch[v] + "[tsl_tid >> 5] = " + acc[v] + ";");
    line("}");
    line("__syncthreads();");
    std::string first = "(tsl_tid / " + std::to_string(group) + ") * " + std::to_string(warps);
    for (int v = 0; v < r.n; ++v) line(acc[v] + " = " + scratch[v] + "[" + first + "];");
    line("for (int tsl_w = 1; tsl_w < " + std::to_string(warps) + "; ++tsl_w) {");
    ++indent_;
    std::vector<std::string> in;
    for (int v = 0; v < r.n; ++v) in.push_back(scratch[v] + "[" + first + " + tsl_w]");
    combine(op, acc, acc, in);
    --indent_;
    line("}");
}

// The general case: the group's values in shared memory, combined by every thread in the order of
// the reduced axes (the first listed varying slowest), from the identity.
void CodeGenCUDA::shared_allreduce(const Call* op, const std::vector<std::string>& acc,
                                   const std::vector<int>& axes) {
    AllreduceArgs r = parse(op);
    int64_t dims[3], total = 1, group = 1;
    for (int a = 0; a < 3; ++a) total *= (dims[a] = *as_const_int(kernel_->block[a]));
    for (int a : axes) group *= dims[a];
    const int64_t stride[3] = {1, dims[0], dims[0] * dims[1]};
    std::vector<std::string> scratch;
    for (int v = 0; v < r.n; ++v) {
        Type t = r.value(v).type();
        scratch.push_back(fresh("red_buf"));
        int64_t bytes = t.is_float() && t.bits == 16 ? 4 : t.bytes();
        shared_.push_back({value_type(t), scratch[v], total, bytes});
        line(scratch[v] + "[tsl_tid] = " + acc[v] + ";");
    }
    line("__syncthreads();");
    // The group's first thread: this thread with every reduced coordinate set to 0.
    std::string base = "tsl_tid";
    static const char* const tid[] = {"threadIdx.x", "threadIdx.y", "threadIdx.z"};
    for (int a : axes) base += " - " + std::to_string(stride[a]) + " * (int)" + tid[a];
    line("const int tsl_base = " + base + ";");
    for (int v = 0; v < r.n; ++v) line(acc[v] + " = " + expr(r.identity(v)) + ";");
    line("for (int tsl_k = 0; tsl_k < " + std::to_string(group) + "; ++tsl_k) {");
    ++indent_;
    std::string member = "tsl_base";
    int64_t div = 1;
    for (int k = static_cast<int>(axes.size()) - 1; k >= 0; --k) {
        int a = axes[k];
        member += " + ((tsl_k / " + std::to_string(div) + ") % " + std::to_string(dims[a]) +
                  ") * " + std::to_string(stride[a]);
        div *= dims[a];
    }
    line("const int tsl_member = " + member + ";");
    std::vector<std::string> in;
    for (int v = 0; v < r.n; ++v) in.push_back(scratch[v] + "[tsl_member]");
    combine(op, acc, acc, in);
    --indent_;
    line("}");
}

}  // namespace tessel::internal
