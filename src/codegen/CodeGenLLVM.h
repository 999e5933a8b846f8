// CodeGenLLVM: lowered IR (after storage flattening) to an LLVM IR function with the runtime's
// entry convention, `int32_t name(void* const* args, const int64_t* shape_vars)` (see
// runtime/KernelSignature.h). Semantics follow ir/IR.h exactly: wrapping integer arithmetic,
// guarded division (x / 0 == 0, INT_MIN / -1 == INT_MIN), floor division fix-ups, saturating
// float-to-int casts, float16/bfloat16 computed in float32 and rounded after each operation.
// Parallel loops become outlined closures run through `tessel_parallel_for`; a failed AssertStmt
// reports its message through `tessel_report_kernel_error` and returns status 1.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "tessel/lower/LoweredFunc.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

namespace tessel::internal {

/// Emits lowered functions into one LLVM module (see the file comment).
class CodeGenLLVM {
public:
    /// Functions get the "target-cpu" / "target-features" attributes `cpu` and `features`.
    CodeGenLLVM(llvm::Module& module, std::string cpu, std::string features);

    /// Emits `f` as an external function named f.name; `shape_vars` are the symbolic extent
    /// variables in the order of the entry point's shape_vars argument.
    void add_function(const LoweredFunc& f, const std::vector<Var>& shape_vars);

private:
    // Where a failure goes: the entry returns the status; a parallel closure stores it in its
    // error slot and returns.
    struct FunctionState {
        llvm::Function* function = nullptr;
        llvm::Value* error_slot = nullptr;
    };

    llvm::Value* codegen(const Expr& e);
    void codegen(const Stmt& s);

    llvm::Type* llvm_type(Type t);
    llvm::Type* memory_type(Type t);
    llvm::Value* to_memory(llvm::Value* v, Type t);
    llvm::Value* from_memory(llvm::Value* v, Type t);
    llvm::Value* lookup(const Var& v);
    llvm::Value* constant(Type t, int64_t value);

    llvm::Value* emit_cast(Type to, const Expr& value);
    llvm::Value* emit_binary(IRNodeType op, const Expr& a, const Expr& b, Type t);
    llvm::Value* emit_float_binary(IRNodeType op, llvm::Value* a, llvm::Value* b, Type t);
    llvm::Value* emit_int_binary(IRNodeType op, llvm::Value* a, llvm::Value* b, Type t);
    llvm::Value* emit_int_division(IRNodeType op, llvm::Value* a, llvm::Value* b, Type t);
    llvm::Value* emit_compare(IRNodeType op, const Expr& a, const Expr& b);
    llvm::Value* emit_ramp(const Ramp* op);
    llvm::Value* emit_call(const Call* op);
    llvm::Value* emit_float_math(const Call* op, std::vector<llvm::Value*> args, Type t);
    llvm::Value* emit_libm_call(const std::string& name, llvm::Value* x, Type t);
    llvm::Value* emit_lazy_select(const Call* op);
    llvm::Value* emit_load(const Load* op);
    llvm::Value* emit_mask(const Expr& predicate, int lanes);

    void emit_store(const Store* op);
    void emit_for(const For* op);
    void emit_serial_for(const For* op);
    void emit_parallel_for(const For* op);
    llvm::Function* emit_closure(const For* op, const std::vector<Var>& captured,
                                 llvm::StructType* closure_type);
    void emit_allocate(const Allocate* op);
    void emit_if(const IfThenElse* op);
    void emit_assert(const AssertStmt* op);
    void emit_failure_unless(llvm::Value* ok, llvm::Value* status);

    llvm::Function* new_function(const std::string& name, llvm::FunctionType* type, bool external);
    llvm::AllocaInst* entry_alloca(llvm::Type* type, uint64_t align);
    llvm::BasicBlock* new_block(const std::string& name);
    llvm::Value* widen_half(llvm::Value* v, Type t);
    llvm::Value* narrow_half(llvm::Value* v, Type t);

    llvm::Module& module_;
    llvm::LLVMContext& context_;
    llvm::IRBuilder<> builder_;
    std::string cpu_, features_;
    FunctionState state_;
    std::unordered_map<const Variable*, llvm::Value*> vars_;
    int closure_count_ = 0;
};

}  // namespace tessel::internal
