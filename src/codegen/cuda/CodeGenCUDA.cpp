// CUDA C generation: the host/device split, then one device function per kernel and its launch.
#include "codegen/cuda/CodeGenCUDA.h"

#include <algorithm>
#include <cctype>

#include "codegen/cuda/CodeGenCUDAImpl.h"
#include "tessel/Error.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel::internal {

namespace {

constexpr int64_t kStaticSharedLimit = 48 * 1024;

// Names a generated identifier may not take: C++ keywords and the CUDA names the code uses.
bool reserved(const std::string& s) {
    static const char* const words[] = {
        "auto",         "bool",      "break",     "case",     "char",     "const",
        "continue",     "default",   "do",        "double",   "else",     "enum",
        "extern",       "false",     "float",     "for",      "goto",     "if",
        "inline",       "int",       "long",      "register", "restrict", "return",
        "short",        "signed",    "sizeof",    "static",   "struct",   "switch",
        "true",         "typedef",   "union",     "unsigned", "void",     "volatile",
        "while",        "class",     "new",       "delete",   "this",     "template",
        "typename",     "namespace", "operator",  "private",  "public",   "protected",
        "virtual",      "friend",    "using",     "asm",      "try",      "catch",
        "throw",        "threadIdx", "blockIdx",  "blockDim", "gridDim",  "warpSize",
        "min",          "max",       "abs",       "exp",      "log",      "sqrt",
        "pow",          "floor",     "ceil",      "round",    "trunc",    "fma",
        "erf",          "tanh",      "sin",       "cos",      "isnan",    "main",
        "and",          "or",        "not",       "xor",      "float2",   "float4",
        "int2",         "int4",      "uint2",     "uint4",    "dim3",     "NULL",
        "nullptr",      "alignas",   "constexpr", "decltype", "noexcept", "static_assert",
        "thread_local", "mutable",   "explicit",  "export"};
    for (const char* w : words)
        if (s == w) return true;
    return s.rfind("tsl_", 0) == 0 || s.rfind("__", 0) == 0;
}

std::string sanitize(const std::string& name) {
    std::string s;
    for (char c : name) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "v_" + s;
    if (reserved(s)) s = "v_" + s;
    return s;
}

}  // namespace

CodeGenCUDA::CodeGenCUDA(const LoweredFunc& f, const std::vector<Var>& shape_vars,
                         const HostDeviceSplit& split, const CudaCodegenOptions& options)
    : f_(f), shape_vars_(shape_vars), split_(split), options_(options) {
    for (size_t i = 0; i < f.args.size(); ++i) {
        arg_alignment_.push_back(f.args[i].dtype().bytes());
        global_param_[f.args[i]->data.get()] = static_cast<int>(i);
    }
    for (size_t i = 0; i < split.workspace_vars.size(); ++i)
        global_param_[split.workspace_vars[i].get()] = static_cast<int>(f.args.size() + i);
}

std::string CodeGenCUDA::fresh(const std::string& hint) {
    std::string base = sanitize(hint);
    std::string s = base;
    for (int k = 1; used_names_.count(s); ++k) s = base + "_" + std::to_string(k);
    used_names_.insert(s);
    return s;
}

// Variables keep one name per kernel (names only label them: two variables may share one).
std::string CodeGenCUDA::name_of(const Variable* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    std::string hint = v->name;
    auto p = global_param_.find(v);
    if (p != global_param_.end() && p->second < static_cast<int>(f_.args.size()))
        hint = f_.args[p->second].name();
    return names_[v] = fresh(hint);
}

void CodeGenCUDA::line(const std::string& s) {
    body_ << std::string(4 * indent_, ' ') << s << "\n";
}

// Hoisted vector loads go right before the statement that uses them.
void CodeGenCUDA::flush_pre() {
    for (const std::string& s : pre_) line(s);
    pre_.clear();
    hoisted_.clear();
}

void CodeGenCUDA::reset(const DeviceKernel& k) {
    kernel_ = &k;
    body_.str("");
    indent_ = 1;
    names_.clear();
    used_names_.clear();
    lane_names_.clear();
    thread_axis_.clear();
    buffers_.clear();
    shared_.clear();
    lane_count_.clear();
    wgmma_acc_.clear();
    tma_maps_.clear();
    bounds_.clear();
    modular_.clear();
    pre_.clear();
    hoisted_.clear();
    index_depth_ = lazy_depth_ = 0;
    // Shape variables are positive extents: this proves most index divisions non-negative.
    for (const Var& v : shape_vars_)
        bounds_[v.get()] = Interval(make_const(v.type(), int64_t(1)), Expr());
}

void CodeGenCUDA::collect_buffers(const Stmt& body) {
    auto touch = [&](const Var& v, Type t, bool write) {
        auto p = global_param_.find(v.get());
        if (p == global_param_.end()) return;
        BufferInfo& info = buffers_[v.get()];
        info.elem = t.element_of();
        info.param = p->second;
        info.read = info.read || !write;
        info.written = info.written || write;
    };
    std::unordered_map<const Variable*, Type> allocated;  // cp_async: the source's element type
    post_order_visit(body, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::Allocate) {
            const Allocate* op = static_cast<const Allocate*>(n);
            allocated[op->buffer_var.get()] = op->dtype;
        }
    });
    post_order_visit(body, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::Call &&
            static_cast<const Call*>(n)->op == Intrinsic::tile_arrive) {  // its int32 counters
            const Call* op = static_cast<const Call*>(n);
            touch(Var(op->args[0].as<Variable>()), Int(32), false);
            touch(Var(op->args[0].as<Variable>()), Int(32), true);
        } else if (n->node_type == IRNodeType::Call &&
                   static_cast<const Call*>(n)->op == Intrinsic::cp_async) {
            const Call* op = static_cast<const Call*>(n);
            auto a = allocated.find(op->args[0].as<Variable>());
            if (a != allocated.end()) touch(Var(op->args[2].as<Variable>()), a->second, false);
        } else if (n->node_type == IRNodeType::Load) {
            const Load* op = static_cast<const Load*>(n);
            touch(op->buffer_var, op->type, false);
        } else if (n->node_type == IRNodeType::Store) {
            const Store* op = static_cast<const Store*>(n);
            touch(op->buffer_var, op->value.type(), true);
        } else if (n->node_type == IRNodeType::Call) {
            // A tensor-core intrinsic writes its first tile operand (ir/IR.h).
            const Call* op = static_cast<const Call*>(n);
            if (!is_tensor_core_intrinsic(op->op)) return;
            if (op->op == Intrinsic::wgmma_fence || op->op == Intrinsic::wgmma_commit ||
                op->op == Intrinsic::wgmma_wait)
                return;
            const size_t dst = op->op == Intrinsic::mma_sync || op->op == Intrinsic::wgmma ? 0
                               : op->op == Intrinsic::ldmatrix                             ? 2
                                                                                           : 1;
            if (const Load* l = op->args[dst].as<Load>()) touch(l->buffer_var, l->type, true);
        }
    });
}

// Buffers (arguments, then workspaces, in plan order), then the shape variables the kernel uses.
std::vector<CudaParam> CodeGenCUDA::params_of(const Stmt& body) {
    std::vector<CudaParam> params;
    for (const auto& [var, info] : buffers_)
        if (info.param >= 0) params.push_back({CudaParam::Kind::Buffer, info.param});
    std::sort(params.begin(), params.end(),
              [](const CudaParam& a, const CudaParam& b) { return a.index < b.index; });
    for (size_t i = 0; i < tma_maps_.size(); ++i)
        params.push_back({CudaParam::Kind::TensorMap, static_cast<int>(i)});
    for (size_t i = 0; i < shape_vars_.size(); ++i) {
        if (uses_var(body, shape_vars_[i]))
            params.push_back({CudaParam::Kind::ShapeVar, static_cast<int>(i)});
    }
    check_free_variables(body);
    return params;
}

std::string CodeGenCUDA::signature(const DeviceKernel& k, const std::vector<CudaParam>& params) {
    std::string s = "extern \"C\" __global__ void ";
    int64_t threads = 1;
    bool constant = true;
    for (const Expr& e : k.block) {
        auto c = as_const_int(e);
        constant = constant && c.has_value();
        threads *= c.value_or(1);
    }
    // A kernel that moves registers between its warp groups (setmaxnreg) must have its register
    // count fixed at entry: one block an SM.
    bool setmaxnreg = false;
    post_order_visit(k.body, [&](const IRNode* n) {
        setmaxnreg = setmaxnreg || (n->node_type == IRNodeType::Call &&
                                    static_cast<const Call*>(n)->op == Intrinsic::setmaxnreg);
    });
    if (constant)
        s += "__launch_bounds__(" + std::to_string(threads) + (setmaxnreg ? ", 1" : "") + ") ";
    // In a kernel that loads a global buffer it also stores to (a reduction into its output,
    // say), the arguments it only reads lose __restrict__ (they stay const). NVRTC 13 marks loads
    // through a `const __restrict__` argument read-only early; it then merges
    // `c ? in[i] : out[j]` into one load through a selected pointer and keeps the mark, so the
    // load is an ld.global.nc that returns out[j] as it was before the kernel's own stores
    // (tests/regression/issue_cuda_fuzz_argmax_gpu_mismatch_test.cpp). Without the pair it
    // proves read-only loads from the final pointer, which is sound. The written arguments keep
    // __restrict__, so an accumulator in global memory still lives in a register across its
    // loop.
    bool read_write = std::any_of(buffers_.begin(), buffers_.end(), [](const auto& b) {
        return b.second.param >= 0 && b.second.read && b.second.written;
    });
    s += k.name + "(";
    for (size_t i = 0; i < params.size(); ++i) {
        if (i) s += ", ";
        if (params[i].kind == CudaParam::Kind::ShapeVar) {
            s += "long long tsl_shape_" + std::to_string(params[i].index);
            continue;
        }
        if (params[i].kind == CudaParam::Kind::TensorMap) {
            s += "const __grid_constant__ tsl_tensor_map " + tma_maps_[params[i].index].name;
            continue;
        }
        const Variable* var = nullptr;
        for (const auto& [v, info] : buffers_)
            if (info.param == params[i].index) var = v;
        const BufferInfo& info = buffers_.at(var);
        bool is_arg = params[i].index < static_cast<int>(f_.args.size());
        bool in_place =
            is_arg && std::find(options_.in_place.begin(), options_.in_place.end(),
                                f_.args[params[i].index].name()) != options_.in_place.end();
        s += (info.written ? "" : "const ") + memory_type(info.elem) + "* " +
             (in_place || (read_write && !info.written) ? "" : "__restrict__ ") + name_of(var);
    }
    return s + ")";
}

// Shared arrays: static when they fit in 48 KB, else one dynamic buffer (offsets aligned 16, or
// as an array asks: wgmma's swizzled operands 1024, the dynamic buffer's base aligned at run time).
std::string CodeGenCUDA::shared_declarations(CudaLaunch* launch) {
    int64_t total = 0, base_align = 16;
    std::vector<int64_t> offsets;
    for (const SharedArray& a : shared_) {
        total = (total + a.align - 1) / a.align * a.align;
        offsets.push_back(total);
        total += (a.count * a.elem_bytes + 15) / 16 * 16;
        base_align = std::max(base_align, a.align);
    }
    std::string s;
    if (total <= kStaticSharedLimit) {
        for (const SharedArray& a : shared_)
            s += "    __shared__ __align__(" + std::to_string(a.align) + ") " + a.c_type + " " +
                 a.name + "[" + std::to_string(a.count) + "];\n";
        return s;
    }
    s += "    // " + std::to_string(total) + " bytes of shared memory: more than 48 KB, dynamic\n";
    s += "    extern __shared__ __align__(16) unsigned char tsl_dynamic_shared_raw[];\n";
    if (base_align > 16) {  // the window offset rounded up (the launch asks for the slack)
        const std::string m = std::to_string(base_align - 1);
        s += "    unsigned char* const tsl_dynamic_shared = tsl_dynamic_shared_raw + ((" +
             std::to_string(base_align) + "u - ((unsigned)__cvta_generic_to_shared(" +
             "tsl_dynamic_shared_raw) & " + m + "u)) & " + m + "u);\n";
        total += base_align - 16;
    } else {
        s += "    unsigned char* const tsl_dynamic_shared = tsl_dynamic_shared_raw;\n";
    }
    for (size_t i = 0; i < shared_.size(); ++i) {
        const SharedArray& a = shared_[i];
        s += "    " + a.c_type + "* const " + a.name + " = reinterpret_cast<" + a.c_type +
             "*>(tsl_dynamic_shared + " + std::to_string(offsets[i]) + ");\n";
    }
    launch->dynamic_shared_bytes = LaunchExpr::constant(total);
    return s;
}

// Every variable the kernel reads is bound inside it, a shape variable or a buffer it can reach;
// anything else (e.g. a buffer of another function) would only fail in NVRTC.
void CodeGenCUDA::check_free_variables(const Stmt& body) {
    std::unordered_set<const Variable*> bound, known;
    for (const Var& v : shape_vars_) known.insert(v.get());
    for (const auto& [v, index] : global_param_) known.insert(v);
    auto bind = [&](const Var& v) { bound.insert(v.get()); };
    post_order_visit(body, [&](const IRNode* n) {
        switch (n->node_type) {
            case IRNodeType::For: return bind(static_cast<const For*>(n)->loop_var);
            case IRNodeType::LetStmt: return bind(static_cast<const LetStmt*>(n)->var);
            case IRNodeType::Let: return bind(static_cast<const Let*>(n)->var);
            case IRNodeType::Allocate: return bind(static_cast<const Allocate*>(n)->buffer_var);
            case IRNodeType::Call: {
                const Call* c = static_cast<const Call*>(n);
                if (c->op != Intrinsic::thread_allreduce) return;
                int64_t k = *as_const_int(c->args[0]);
                for (int64_t i = 2 + 2 * k; i < 2 + 4 * k; ++i)
                    bound.insert(c->args[i].as<Variable>());
                return;
            }
            default: return;
        }
    });
    post_order_visit(body, [&](const IRNode* n) {
        const Variable* v = nullptr;
        if (n->node_type == IRNodeType::Variable) v = static_cast<const Variable*>(n);
        if (n->node_type == IRNodeType::Load) v = static_cast<const Load*>(n)->buffer_var.get();
        if (n->node_type == IRNodeType::Store) v = static_cast<const Store*>(n)->buffer_var.get();
        if (!v || bound.count(v) || known.count(v)) return;
        TESSEL_THROW(CompileError) << "cuda: kernel " << kernel_->name << " (stage "
                                   << kernel_->stage << ") uses " << v->name
                                   << ", which is neither bound in it nor a shape variable or "
                                      "buffer of '"
                                   << f_.name << "'";
    });
}

namespace {

// A programmatic dependent launch (CudaLaunch::dependent): a kernel after the first waits, in
// every thread and before anything else, for the grid before it to complete and its writes to be
// visible (so also for every grid before that one, which it waited for in turn); a kernel before
// the last lets the next one launch at once. The next one's blocks then take the SMs the moment
// they are free, and wait there, instead of being launched when this grid has ended. Triggering at
// entry cannot starve this grid: the trigger takes effect once every block of it has started.
std::string dependent_launch_code(bool waits, bool triggers) {
    std::string s;
    if (waits) s += "    asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n";
    if (triggers) s += "    asm volatile(\"griddepcontrol.launch_dependents;\");\n";
    return s;
}

}  // namespace

CudaLaunch CodeGenCUDA::emit_kernel(const DeviceKernel& k, size_t index, size_t count,
                                    std::ostream& os) {
    reset(k);
    collect_buffers(k.body);
    collect_tma_maps(k.body);
    std::vector<CudaParam> params = params_of(k.body);
    std::string sig = signature(k, params);  // names the parameters first
    std::string shape_decls;
    for (const CudaParam& p : params) {
        if (p.kind != CudaParam::Kind::ShapeVar) continue;
        const Var& v = shape_vars_[p.index];
        shape_decls += "    const " + value_type(v.type()) + " " + name_of(v.get()) + " = (" +
                       value_type(v.type()) + ")tsl_shape_" + std::to_string(p.index) + ";\n";
    }
    stmt(k.body);
    CudaLaunch launch;
    launch.function = k.name;
    launch.stage = k.stage;
    for (int a = 0; a < 3; ++a) {
        launch.grid[a] = to_launch_expr(k.grid[a], shape_vars_, "the grid of " + k.name);
        launch.block[a] = to_launch_expr(k.block[a], shape_vars_, "the block of " + k.name);
    }
    launch.dynamic_shared_bytes = LaunchExpr::constant(0);
    launch.params = params;
    for (const TmaMap& m : tma_maps_) launch.tensor_maps.push_back(tensor_map(m));
    const bool dependent = options_.dependent_launch;
    launch.dependent = dependent && index > 0;
    os << "// stage " << k.stage << "\n" << sig << " {\n";
    os << dependent_launch_code(launch.dependent, dependent && index + 1 < count);
    os << shared_declarations(&launch) << shape_decls << body_.str() << "}\n\n";
    return launch;
}

CudaCode codegen_cuda(const LoweredFunc& f, const std::vector<Var>& shape_vars,
                      const CudaCodegenOptions& options) {
    HostDeviceSplit split = collect_kernels(f, shape_vars);
    CodeGenCUDA cg(f, shape_vars, split, options);
    CudaCode code;
    std::ostringstream os;
    os << cuda_prelude();
    bool tensor_cores = false, tma = false;
    post_order_visit(f.body, [&](const IRNode* n) {
        if (n->node_type != IRNodeType::Call) return;
        const Intrinsic op = static_cast<const Call*>(n)->op;
        tensor_cores = tensor_cores || is_tensor_core_intrinsic(op);
        tma = tma || op == Intrinsic::mbarrier_init || op == Intrinsic::tma_load ||
              op == Intrinsic::tma_store;
    });
    if (tensor_cores) os << cuda_tensor_core_prelude();
    if (tma) os << cuda_tma_prelude();
    for (size_t i = 0; i < split.kernels.size(); ++i)
        code.plan.launches.push_back(cg.emit_kernel(split.kernels[i], i, split.kernels.size(), os));
    code.plan.workspaces = split.workspaces;
    code.source = os.str();
    code.arg_alignment = cg.arg_alignment();
    return code;
}

}  // namespace tessel::internal
