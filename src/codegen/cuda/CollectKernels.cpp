// CollectKernels: kernels and workspaces of a split function (see the header).
#include "codegen/cuda/CollectKernels.h"

#include <cctype>
#include <functional>
#include <unordered_set>

#include "tessel/Error.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRVisitor.h"
#include "tessel/lower/SplitHostDevice.h"

namespace tessel::internal {

namespace {

class Collector {
public:
    Collector(const LoweredFunc& f, const std::vector<Var>& shape_vars)
        : f_(f), shape_vars_(shape_vars) {
        for (const Buffer& b : f.args) global_.insert(b->data.get());
    }

    HostDeviceSplit run() {
        walk(f_.body);
        return std::move(out_);
    }

private:
    void walk(const Stmt& s) {
        if (const Seq* q = s.as<Seq>()) {
            for (const Stmt& c : q->stmts) walk(c);
        } else if (const Allocate* a = s.as<Allocate>()) {
            add_workspace(a);
        } else if (const AttrStmt* a = s.as<AttrStmt>(); a && a->key == kDeviceKernelAttr) {
            add_kernel(a->body);
        } else if (const AttrStmt* z = s.as<AttrStmt>(); z && z->key == "zeroed_workspace") {
            walk(z->body);  // (its workspace, around it, is marked so)
        } else {
            TESSEL_CHECK(s.as<Evaluate>())
                << "cuda: '" << f_.name << "' is not split into kernels (split_host_device): "
                << node_type_name(s.node_type()) << " on the host side";
        }
    }

    void add_workspace(const Allocate* op) {
        const AttrStmt* z = op->body.as<AttrStmt>();
        const bool zeroed = z && z->key == "zeroed_workspace" && z->value.same_as(op->buffer_var);
        TESSEL_CHECK(op->scope == StorageScope::Global) << "a non-global workspace";
        Expr elems = make_const(Int(64), int64_t(op->dtype.bytes()) * op->dtype.lanes);
        for (const Expr& e : op->extents) elems = elems * cast(Int(64), e);
        std::string what = "the size of workspace " + op->buffer_var.name();
        out_.workspaces.push_back(
            {op->buffer_var.name(), to_launch_expr(simplify(elems), shape_vars_, what), zeroed});
        out_.workspace_vars.push_back(op->buffer_var);
        out_.workspace_types.push_back(op->dtype.element_of());
        global_.insert(op->buffer_var.get());
        walk(op->body);
    }

    void add_kernel(const Stmt& s) {
        DeviceKernel k;
        std::string fname = f_.name;
        for (char& c : fname)
            if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';  // a C identifier
        k.name = fname + "_kernel" + std::to_string(out_.kernels.size());
        k.stage = kernel_stage(s, global_);
        k.body = s;
        KernelGeometry g = kernel_geometry(s);
        k.grid = g.grid;
        k.block = g.block;
        out_.kernels.push_back(std::move(k));
    }

    const LoweredFunc& f_;
    const std::vector<Var>& shape_vars_;
    std::unordered_set<const Variable*> global_;
    HostDeviceSplit out_;
};

void postfix(const Expr& e, const std::vector<Var>& shape_vars, const std::string& what,
             LaunchExpr* out) {
    using Op = LaunchExpr::Op;
    if (auto c = as_const_int(e)) {
        out->terms.push_back({Op::Const, *c});
        return;
    }
    if (const Variable* v = e.as<Variable>()) {
        for (size_t i = 0; i < shape_vars.size(); ++i) {
            if (shape_vars[i].get() == v) {
                out->terms.push_back({Op::ShapeVar, int64_t(i)});
                return;
            }
        }
        TESSEL_THROW(CompileError) << "cuda: " << what << " depends on " << v->name
                                   << ", which is not a shape variable of the kernel's arguments";
    }
    if (const Cast* c = e.as<Cast>(); c && c->value.type().is_int_or_uint()) {
        return postfix(c->value, shape_vars, what, out);
    }
    auto binary = [&](const Expr& a, const Expr& b, Op op) {
        postfix(a, shape_vars, what, out);
        postfix(b, shape_vars, what, out);
        out->terms.push_back({op, 0});
    };
    // clang-format off
    if (const Add* op = e.as<Add>()) return binary(op->a, op->b, Op::Add);
    if (const Sub* op = e.as<Sub>()) return binary(op->a, op->b, Op::Sub);
    if (const Mul* op = e.as<Mul>()) return binary(op->a, op->b, Op::Mul);
    if (const FloorDiv* op = e.as<FloorDiv>()) return binary(op->a, op->b, Op::FloorDiv);
    if (const FloorMod* op = e.as<FloorMod>()) return binary(op->a, op->b, Op::FloorMod);
    if (const Min* op = e.as<Min>()) return binary(op->a, op->b, Op::Min);
    if (const Max* op = e.as<Max>()) return binary(op->a, op->b, Op::Max);
    // clang-format on
    TESSEL_THROW(CompileError) << "cuda: " << what << " is an expression the launch plan cannot "
                               << "evaluate (a " << node_type_name(e.node_type())
                               << "); launch sizes may use +, -, *, floordiv, floormod, min, max "
                               << "of constants and shape variables";
}

}  // namespace

LaunchExpr to_launch_expr(const Expr& e, const std::vector<Var>& shape_vars,
                          const std::string& what) {
    LaunchExpr out;
    postfix(e, shape_vars, what, &out);
    return out;
}

HostDeviceSplit collect_kernels(const LoweredFunc& f, const std::vector<Var>& shape_vars) {
    return Collector(f, shape_vars).run();
}

}  // namespace tessel::internal
