// build(): lower, check, generate LLVM IR, optimise, and wrap the JIT-compiled code in a Module.
#include "tessel/codegen/Build.h"

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <unordered_set>

#include "codegen/CodeGenLLVM.h"
#include "codegen/LLVMJIT.h"
#include "tessel/Error.h"
#include "tessel/ir/IRVisitor.h"
#include "tessel/lower/Lower.h"
#include "tessel/lower/VerifyLowered.h"

namespace tessel {

namespace {

DataType runtime_type(Type t) {
    switch (t.code) {
        case TypeCode::Int: return {DataTypeCode::Int, t.bits, t.lanes};
        case TypeCode::UInt: return {DataTypeCode::UInt, t.bits, t.lanes};
        case TypeCode::Float: return {DataTypeCode::Float, t.bits, t.lanes};
        case TypeCode::BFloat: return {DataTypeCode::BFloat, t.bits, t.lanes};
        case TypeCode::Bool: return {DataTypeCode::Bool, 8, t.lanes};
        case TypeCode::Handle: break;
    }
    TESSEL_THROW(CompileError) << "llvm: a kernel argument cannot have type " << t;
}

// The signature of `f`, and the symbolic extent variables in shape_vars() order.
KernelSignature make_signature(const LoweredFunc& f, const BuildOptions& options,
                               std::vector<Var>* shape_vars) {
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
    KernelSignature sig{f.name, DeviceType::CPU, {}};
    for (const Buffer& b : f.args) {
        bool in_place = std::find(options.in_place.begin(), options.in_place.end(), b.name()) !=
                        options.in_place.end();
        ArgSpec spec{b.name(), runtime_type(b.dtype()), {}, ArgAccess::Read, in_place, 0};
        if (written.count(b->data.get()))
            spec.access = read.count(b->data.get()) ? ArgAccess::ReadWrite : ArgAccess::Write;
        for (const Expr& e : b.shape()) {
            if (auto c = as_const_int(e)) {
                spec.shape.emplace_back(*c);
                continue;
            }
            const Variable* v = e.as<Variable>();
            if (!v) {
                TESSEL_THROW(CompileError) << "llvm: argument '" << b.name()
                                           << "' has an extent that is neither a constant nor "
                                              "a variable";
            }
            auto [it, fresh] = by_name.emplace(v->name, v);
            if (fresh) shape_vars->emplace_back(v);
            if (it->second != v) {
                TESSEL_THROW(CompileError)
                    << "llvm: two different extent variables are named '" << v->name << "'";
            }
            spec.shape.emplace_back(v->name);
        }
        sig.args.push_back(std::move(spec));
    }
    return sig;
}

std::string to_text(const llvm::Module& module) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module.print(os, nullptr);
    return text;
}

}  // namespace

bool has_llvm_backend() {
    return true;
}

void register_llvm_payload_loader() {
    internal::register_llvm_ir_loader();
}

Module build(const Schedule& s, const std::vector<Tensor>& args, const std::string& target,
             const std::string& name, const BuildOptions& options) {
    internal::parse_llvm_target(target);  // a bad target fails before lowering
    return build(lower(s, args, name), target, options);
}

Module build(const LoweredFunc& f, const std::string& target, const BuildOptions& options) {
    internal::LLVMTarget t = internal::parse_llvm_target(target);
    verify_lowered(f);
    std::vector<Var> shape_vars;
    KernelSignature sig = make_signature(f, options, &shape_vars);
    std::unique_ptr<llvm::TargetMachine> tm = internal::make_target_machine(t);
    auto context = std::make_unique<llvm::LLVMContext>();
    auto owned_module = std::make_unique<llvm::Module>(f.name, *context);
    llvm::Module& module = *owned_module;
    module.setTargetTriple(t.triple);
    module.setDataLayout(tm->createDataLayout());
    std::vector<bool> in_place;
    for (const ArgSpec& a : sig.args) in_place.push_back(a.in_place);
    using FloatMode = internal::CodeGenLLVM::FloatMode;
    FloatMode mode = t.fast_math      ? FloatMode::Fast
                     : t.strict_float ? FloatMode::Strict
                                      : FloatMode::Contract;
    internal::CodeGenLLVM(module, t.cpu, t.features, mode).add_function(f, shape_vars, in_place);
    std::string errors;
    llvm::raw_string_ostream es(errors);
    if (llvm::verifyModule(module, &es)) {
        TESSEL_CHECK(false) << "codegen produced invalid LLVM IR: " << errors << "\n"
                            << to_text(module);
    }
    internal::optimize_module(module, *tm);
    std::string ll = to_text(module);
    const char* debug = std::getenv("TESSEL_DEBUG");
    if (debug && std::atoi(debug) >= 3) std::cerr << ll;
    internal::register_llvm_ir_loader();
    // The optimised module goes to the JIT as it is (no re-parse); the assembly, a second code
    // generation, is only made when asked for.
    std::shared_ptr<const LoadedCode> code =
        internal::jit_compile(std::move(owned_module), std::move(context));
    std::map<std::string, SourceGenerator> lazy = {
        {"asm", [ll, t] { return internal::assembly_of_ir(ll, t); }}};
    return Module({sig}, "llvm-ir", std::vector<uint8_t>(ll.begin(), ll.end()), std::move(code),
                  {{"ll", ll}}, std::move(lazy));
}

}  // namespace tessel
