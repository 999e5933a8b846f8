// CodeGenLLVM: lowered IR (after storage flattening) to an LLVM IR function with the runtime's
// entry convention, `int32_t name(void* const* args, const int64_t* shape_vars)` (see
// runtime/KernelSignature.h). Semantics follow ir/IR.h exactly: wrapping integer arithmetic,
// guarded division (x / 0 == 0, INT_MIN / -1 == INT_MIN), floor division fix-ups, saturating
// float-to-int casts, float16/bfloat16 computed in float32 and rounded after each operation.
// Parallel loops become outlined closures run through `tessel_parallel_for`; a failed AssertStmt
// reports its message through `tessel_report_kernel_error` and returns status 1, after freeing
// every workspace block the function holds.
//
// Memory facts the code generator passes on to LLVM, each one proven:
// - Every access names its buffer, so accesses get alias scopes: a buffer the kernel allocates is
//   disjoint from every other buffer, and so is an argument not declared in-place (the runtime
//   rejects overlapping arguments before the call; runtime/Kernel.h). In-place arguments get none.
// - Arguments are aligned to their element size only; tessel's own allocations to 64 bytes, and a
//   dense vector access into one gets the alignment the modular analysis proves of its offset.
#pragma once

#include <set>
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
    /// How float operations may be optimised (ir/IR.h, "Floats").
    enum class FloatMode { Strict, Contract, Fast };
    /// Functions get the "target-cpu" / "target-features" attributes `cpu` and `features`;
    /// `mode` sets LLVM's fast-math flags on every float operation: none (Strict), `contract`
    /// (a * b + c may become an fma; the default), or all of them (Fast).
    CodeGenLLVM(llvm::Module& module, std::string cpu, std::string features, FloatMode mode);

    /// Emits `f` as an external function named f.name; `shape_vars` are the symbolic extent
    /// variables in the order of the entry point's shape_vars argument; `in_place[i]` says
    /// argument i may share memory with other arguments.
    void add_function(const LoweredFunc& f, const std::vector<Var>& shape_vars,
                      const std::vector<bool>& in_place);

private:
    // Where a failure goes: the entry returns the status; a parallel closure stores it in its
    // error slot and returns.
    struct FunctionState {
        llvm::Function* function = nullptr;
        llvm::Value* error_slot = nullptr;
        std::vector<llvm::Value*> workspaces;  ///< live heap blocks, freed on every exit
    };
    // What is known of the memory behind a buffer variable.
    struct BufferFacts {
        llvm::MDNode* scope = nullptr;    ///< its alias scope (a list of one), if disjoint
        llvm::MDNode* noalias = nullptr;  ///< the scopes of every other disjoint buffer
        bool own = false;                 ///< allocated by the kernel: 64-byte aligned
    };
    // A libmvec variant: ISA letter ('b', 'd', 'e'; 0 for none) and lanes per call.
    struct VectorLib {
        char isa = 0;
        int width = 0;
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
    llvm::Value* emit_vector_math(const std::string& name, const std::vector<llvm::Value*>& args);
    VectorLib vector_lib(int elem_bits) const;
    void plan_buffers(const LoweredFunc& f, const std::vector<bool>& in_place);
    void annotate_access(llvm::Instruction* access, const Var& buffer);
    llvm::Align access_alignment(const Var& buffer, const Expr& offset, Type t);
    void free_workspaces();
    llvm::Value* emit_lazy_select(const Call* op);
    llvm::Value* emit_load(const Load* op);
    llvm::Value* emit_mask(const Expr& predicate, int lanes);
    llvm::Value* emit_index(const Expr& index);

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
    llvm::Value* round_to_bfloat(llvm::Value* f32, int lanes);
    // dot_product (CodeGenLLVMDot.cpp).
    void emit_dot_product(const Call* op);
    llvm::Value* load_run(const Load* l, Type t, int64_t lanes);
    bool has_feature(const std::string& name) const;

    llvm::Module& module_;
    llvm::LLVMContext& context_;
    llvm::IRBuilder<> builder_;
    std::string cpu_, features_;
    std::set<std::string> enabled_features_;  ///< every feature the CPU has (target/CpuFeatures.h)
    FunctionState state_;
    std::unordered_map<const Variable*, llvm::Value*> vars_;
    std::unordered_map<const Variable*, BufferFacts> buffers_;
    int closure_count_ = 0;
    // Emitting a Load's or Store's index: signed adds, subtractions and multiplications carry
    // nsw there (ir/IR.h: index arithmetic does not overflow), so that LLVM widens the index's
    // induction variables to 64 bits instead of sign-extending every address.
    bool in_index_ = false;
};

}  // namespace tessel::internal
