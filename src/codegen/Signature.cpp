// Signatures of lowered functions, shared by the backends.
#include "codegen/Signature.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "tessel/Error.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel::internal {

DataType runtime_type(Type t, const char* backend) {
    switch (t.code) {
        case TypeCode::Int: return {DataTypeCode::Int, t.bits, t.lanes};
        case TypeCode::UInt: return {DataTypeCode::UInt, t.bits, t.lanes};
        case TypeCode::Float: return {DataTypeCode::Float, t.bits, t.lanes};
        case TypeCode::BFloat: return {DataTypeCode::BFloat, t.bits, t.lanes};
        case TypeCode::Bool: return {DataTypeCode::Bool, 8, t.lanes};
        case TypeCode::Handle: break;
    }
    TESSEL_THROW(CompileError) << backend << ": a kernel argument cannot have type " << t;
}

KernelSignature make_signature(const LoweredFunc& f, const BuildOptions& options, DeviceType device,
                               const char* backend, std::vector<Var>* shape_vars) {
    for (const std::string& name : options.in_place) {
        bool found = false;
        for (const Buffer& b : f.args) found = found || b.name() == name;
        if (!found) {
            TESSEL_THROW(CompileError) << "build: in_place names '" << name
                                       << "', which is not an argument of '" << f.name << "'";
        }
    }
    std::unordered_set<const IRNode*> written, read;
    post_order_visit(f.body, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::Store)
            written.insert(static_cast<const Store*>(n)->buffer_var.get());
        if (n->node_type == IRNodeType::Load)
            read.insert(static_cast<const Load*>(n)->buffer_var.get());
    });
    std::map<std::string, const Variable*> by_name;
    KernelSignature sig{f.name, device, {}};
    for (const Buffer& b : f.args) {
        bool in_place = std::find(options.in_place.begin(), options.in_place.end(), b.name()) !=
                        options.in_place.end();
        ArgSpec spec{b.name(), runtime_type(b.dtype(), backend), {}, ArgAccess::Read, in_place, 0};
        if (written.count(b->data.get()))
            spec.access = read.count(b->data.get()) ? ArgAccess::ReadWrite : ArgAccess::Write;
        for (const Expr& e : b.shape()) {
            if (auto c = as_const_int(e)) {
                spec.shape.emplace_back(*c);
                continue;
            }
            const Variable* v = e.as<Variable>();
            if (!v) {
                TESSEL_THROW(CompileError) << backend << ": argument '" << b.name()
                                           << "' has an extent that is neither a constant nor "
                                              "a variable";
            }
            auto [it, fresh] = by_name.emplace(v->name, v);
            if (fresh) shape_vars->emplace_back(v);
            if (it->second != v) {
                TESSEL_THROW(CompileError)
                    << backend << ": two different extent variables are named '" << v->name << "'";
            }
            spec.shape.emplace_back(v->name);
        }
        sig.args.push_back(std::move(spec));
    }
    return sig;
}

}  // namespace tessel::internal
