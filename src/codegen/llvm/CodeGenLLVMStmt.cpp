// Lowered IR to LLVM IR: statements, loops, parallel closures, allocations and the entry point.
#include <algorithm>
#include <unordered_set>

#include <llvm/IR/MDBuilder.h>

#include "codegen/llvm/CodeGenLLVM.h"
#include "tessel/Error.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel::internal {

namespace {

// Allocations of at most this many constant bytes live on the stack.
constexpr int64_t kMaxStackBytes = 16 * 1024;
// tessel's own allocations are 64-byte aligned (runtime/NDArray.h promises the same).
constexpr uint64_t kAllocAlign = 64;

}  // namespace

llvm::Function* CodeGenLLVM::new_function(const std::string& name, llvm::FunctionType* type,
                                          bool external) {
    auto linkage = external ? llvm::Function::ExternalLinkage : llvm::Function::InternalLinkage;
    llvm::Function* fn = llvm::Function::Create(type, linkage, name, module_);
    fn->addFnAttr("target-cpu", cpu_);
    if (!features_.empty()) fn->addFnAttr("target-features", features_);
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    return fn;
}

llvm::BasicBlock* CodeGenLLVM::new_block(const std::string& name) {
    return llvm::BasicBlock::Create(context_, name, state_.function);
}

llvm::AllocaInst* CodeGenLLVM::entry_alloca(llvm::Type* type, uint64_t align) {
    llvm::BasicBlock& entry = state_.function->getEntryBlock();
    llvm::IRBuilder<> b(&entry, entry.begin());
    llvm::AllocaInst* a = b.CreateAlloca(type);
    a->setAlignment(llvm::Align(align));
    return a;
}

// Gives every buffer that provably shares memory with no other its own alias scope: the kernel's
// allocations, and the arguments not declared in-place.
void CodeGenLLVM::plan_buffers(const LoweredFunc& f, const std::vector<bool>& in_place) {
    buffers_.clear();
    std::vector<const Variable*> disjoint;
    for (size_t i = 0; i < f.args.size(); ++i) {
        if (!in_place[i]) disjoint.push_back(f.args[i]->data.get());
    }
    post_order_visit(f.body, [&](const IRNode* n) {
        if (n->node_type != IRNodeType::Allocate) return;
        const Variable* v = static_cast<const Allocate*>(n)->buffer_var.get();
        buffers_[v].own = true;
        disjoint.push_back(v);
    });
    llvm::MDBuilder md(context_);
    llvm::MDNode* domain = md.createAnonymousAliasScopeDomain(f.name);
    std::vector<llvm::Metadata*> scopes;
    for (const Variable* v : disjoint)
        scopes.push_back(md.createAnonymousAliasScope(domain, v->name));
    for (size_t i = 0; i < disjoint.size(); ++i) {
        BufferFacts& facts = buffers_[disjoint[i]];
        facts.scope = llvm::MDNode::get(context_, {scopes[i]});
        std::vector<llvm::Metadata*> others;
        for (size_t j = 0; j < disjoint.size(); ++j) {
            if (j != i) others.push_back(scopes[j]);
        }
        if (!others.empty()) facts.noalias = llvm::MDNode::get(context_, others);
    }
}

void CodeGenLLVM::add_function(const LoweredFunc& f, const std::vector<Var>& shape_vars,
                               const std::vector<bool>& in_place) {
    TESSEL_CHECK(in_place.size() == f.args.size()) << "codegen: in_place flags per argument";
    llvm::Type* ptr = llvm::PointerType::get(context_, 0);
    auto* type = llvm::FunctionType::get(builder_.getInt32Ty(), {ptr, ptr}, false);
    state_ = {new_function(f.name, type, true), nullptr, {}};
    vars_.clear();
    plan_buffers(f, in_place);
    builder_.SetInsertPoint(new_block("entry"));
    llvm::Value* args = state_.function->getArg(0);
    llvm::Value* shapes = state_.function->getArg(1);
    for (size_t i = 0; i < f.args.size(); ++i) {
        llvm::Value* slot = builder_.CreateConstGEP1_64(ptr, args, i);
        vars_[f.args[i]->data.get()] = builder_.CreateLoad(ptr, slot, f.args[i].name());
    }
    for (size_t i = 0; i < shape_vars.size(); ++i) {
        llvm::Value* slot = builder_.CreateConstGEP1_64(builder_.getInt64Ty(), shapes, i);
        llvm::Value* v = builder_.CreateLoad(builder_.getInt64Ty(), slot, shape_vars[i].name());
        vars_[shape_vars[i].get()] =
            builder_.CreateIntCast(v, llvm_type(shape_vars[i].type()), true);
    }
    codegen(f.body);
    builder_.CreateRet(builder_.getInt32(0));
}

void CodeGenLLVM::codegen(const Stmt& s) {
    if (!s.defined()) return;
    switch (s.node_type()) {
        case IRNodeType::LetStmt: {
            const LetStmt* op = s.as<LetStmt>();
            vars_[op->var.get()] = codegen(op->value);
            codegen(op->body);
            vars_.erase(op->var.get());
            break;
        }
        case IRNodeType::AttrStmt: codegen(s.as<AttrStmt>()->body); break;
        case IRNodeType::AssertStmt: emit_assert(s.as<AssertStmt>()); break;
        case IRNodeType::For: emit_for(s.as<For>()); break;
        case IRNodeType::Store: emit_store(s.as<Store>()); break;
        case IRNodeType::Allocate: emit_allocate(s.as<Allocate>()); break;
        case IRNodeType::Seq:
            for (const Stmt& stmt : s.as<Seq>()->stmts) codegen(stmt);
            break;
        case IRNodeType::IfThenElse: emit_if(s.as<IfThenElse>()); break;
        case IRNodeType::Evaluate: {
            const Call* call = s.as<Evaluate>()->value.as<Call>();
            if (call && call->op == Intrinsic::dot_product) {
                emit_dot_product(call);
                break;
            }
            codegen(s.as<Evaluate>()->value);
            break;
        }
        case IRNodeType::BufferStore:
            TESSEL_CHECK(false) << "codegen: BufferStore must be flattened before code generation";
            break;
        default:
            TESSEL_CHECK(false) << "codegen: " << node_type_name(s.node_type())
                                << " is not a statement";
    }
}

void CodeGenLLVM::emit_if(const IfThenElse* op) {
    llvm::BasicBlock* then_bb = new_block("if.then");
    llvm::BasicBlock* done = new_block("if.done");
    llvm::BasicBlock* else_bb = op->else_case.defined() ? new_block("if.else") : done;
    builder_.CreateCondBr(codegen(op->condition), then_bb, else_bb);
    builder_.SetInsertPoint(then_bb);
    codegen(op->then_case);
    builder_.CreateBr(done);
    if (op->else_case.defined()) {
        builder_.SetInsertPoint(else_bb);
        codegen(op->else_case);
        builder_.CreateBr(done);
    }
    builder_.SetInsertPoint(done);
}

// Frees the function's live workspace blocks, innermost first (on a failure path).
void CodeGenLLVM::free_workspaces() {
    llvm::FunctionCallee free_fn = module_.getOrInsertFunction(
        "tessel_workspace_free", builder_.getVoidTy(), builder_.getPtrTy());
    for (auto it = state_.workspaces.rbegin(); it != state_.workspaces.rend(); ++it)
        builder_.CreateCall(free_fn, {*it});
}

// Leaves the function with `status` unless `ok`, freeing its workspace blocks: the entry returns
// the status; a closure stores it in the error slot its caller checks after tessel_parallel_for,
// and returns.
void CodeGenLLVM::emit_failure_unless(llvm::Value* ok, llvm::Value* status) {
    llvm::BasicBlock* fail = new_block("fail");
    llvm::BasicBlock* cont = new_block("ok");
    builder_.CreateCondBr(ok, cont, fail, llvm::MDBuilder(context_).createLikelyBranchWeights());
    builder_.SetInsertPoint(fail);
    free_workspaces();
    if (state_.error_slot) {
        auto* st = builder_.CreateStore(status, state_.error_slot);
        st->setAtomic(llvm::AtomicOrdering::Monotonic);
        st->setAlignment(llvm::Align(4));
        builder_.CreateRetVoid();
    } else {
        builder_.CreateRet(status);
    }
    builder_.SetInsertPoint(cont);
}

void CodeGenLLVM::emit_assert(const AssertStmt* op) {
    llvm::Value* ok = codegen(op->condition);
    llvm::BasicBlock* fail = new_block("assert.fail");
    llvm::BasicBlock* cont = new_block("assert.ok");
    builder_.CreateCondBr(ok, cont, fail, llvm::MDBuilder(context_).createLikelyBranchWeights());
    builder_.SetInsertPoint(fail);
    llvm::FunctionCallee report = module_.getOrInsertFunction(
        "tessel_report_kernel_error",
        llvm::FunctionType::get(builder_.getVoidTy(), {builder_.getPtrTy()}, false));
    builder_.CreateCall(report, {builder_.CreateGlobalStringPtr(op->message, "assert_message")});
    emit_failure_unless(builder_.getFalse(), builder_.getInt32(1));
    builder_.CreateBr(cont);
    builder_.SetInsertPoint(cont);
}

void CodeGenLLVM::emit_for(const For* op) {
    switch (op->kind) {
        case ForKind::Parallel: emit_parallel_for(op); break;
        case ForKind::ThreadBound:
            TESSEL_THROW(CompileError)
                << "llvm: loop '" << op->loop_var.name() << "' is bound to " << op->thread_tag
                << ": thread-bound IR needs a GPU target; a CPU target "
                   "cannot run it";
        default:  // Vectorized and Unrolled loops left by the passes run serially
            emit_serial_for(op);
    }
}

void CodeGenLLVM::emit_serial_for(const For* op) {
    llvm::Value* lo = codegen(op->min);
    llvm::Value* hi = builder_.CreateAdd(lo, codegen(op->extent));
    llvm::BasicBlock* pre = builder_.GetInsertBlock();
    llvm::BasicBlock* header = new_block("for.header");
    llvm::BasicBlock* body = new_block("for.body");
    llvm::BasicBlock* done = new_block("for.end");
    builder_.CreateBr(header);
    builder_.SetInsertPoint(header);
    llvm::PHINode* i = builder_.CreatePHI(lo->getType(), 2, op->loop_var.name());
    i->addIncoming(lo, pre);
    builder_.CreateCondBr(builder_.CreateICmpSLT(i, hi), body, done);
    builder_.SetInsertPoint(body);
    vars_[op->loop_var.get()] = i;
    codegen(op->body);
    vars_.erase(op->loop_var.get());
    i->addIncoming(builder_.CreateAdd(i, llvm::ConstantInt::get(i->getType(), 1)),
                   builder_.GetInsertBlock());
    builder_.CreateBr(header);
    builder_.SetInsertPoint(done);
}

// The loop body becomes `void body(int64_t i, void* closure)`; the closure holds an error slot,
// the loop's min and every variable of the enclosing function the body uses.
void CodeGenLLVM::emit_parallel_for(const For* op) {
    std::vector<Var> captured;
    std::unordered_set<const IRNode*> seen;
    auto capture = [&](const Variable* v) {
        if (seen.insert(v).second && vars_.count(v)) captured.emplace_back(v);
    };
    post_order_visit(op->body, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::Variable) capture(static_cast<const Variable*>(n));
        if (n->node_type == IRNodeType::Load)
            capture(static_cast<const Load*>(n)->buffer_var.get());
        if (n->node_type == IRNodeType::Store)
            capture(static_cast<const Store*>(n)->buffer_var.get());
    });
    llvm::Value* lo = codegen(op->min);
    llvm::Value* extent = codegen(op->extent);
    std::vector<llvm::Type*> fields = {builder_.getInt32Ty(), lo->getType()};
    for (const Var& v : captured) fields.push_back(lookup(v)->getType());
    llvm::StructType* closure_type = llvm::StructType::get(context_, fields);
    llvm::AllocaInst* closure = entry_alloca(closure_type, 8);
    builder_.CreateStore(builder_.getInt32(0), builder_.CreateStructGEP(closure_type, closure, 0));
    builder_.CreateStore(lo, builder_.CreateStructGEP(closure_type, closure, 1));
    for (size_t k = 0; k < captured.size(); ++k) {
        builder_.CreateStore(lookup(captured[k]),
                             builder_.CreateStructGEP(closure_type, closure, 2 + k));
    }
    llvm::Function* body = emit_closure(op, captured, closure_type);
    llvm::FunctionCallee pfor = module_.getOrInsertFunction(
        "tessel_parallel_for",
        llvm::FunctionType::get(builder_.getInt32Ty(),
                                {builder_.getInt64Ty(), builder_.getPtrTy(), builder_.getPtrTy()},
                                false));
    llvm::Value* n = builder_.CreateSExt(extent, builder_.getInt64Ty());
    llvm::Value* status = builder_.CreateCall(pfor, {n, body, closure});
    emit_failure_unless(builder_.CreateICmpEQ(status, builder_.getInt32(0)), status);
    auto* error = builder_.CreateLoad(builder_.getInt32Ty(),
                                      builder_.CreateStructGEP(closure_type, closure, 0));
    error->setAtomic(llvm::AtomicOrdering::Monotonic);
    error->setAlignment(llvm::Align(4));
    emit_failure_unless(builder_.CreateICmpEQ(error, builder_.getInt32(0)), error);
}

llvm::Function* CodeGenLLVM::emit_closure(const For* op, const std::vector<Var>& captured,
                                          llvm::StructType* closure_type) {
    FunctionState saved_state = state_;
    auto saved_vars = std::move(vars_);
    llvm::IRBuilderBase::InsertPoint saved_ip = builder_.saveIP();
    auto* type = llvm::FunctionType::get(builder_.getVoidTy(),
                                         {builder_.getInt64Ty(), builder_.getPtrTy()}, false);
    std::string name =
        state_.function->getName().str() + "_parallel_" + std::to_string(closure_count_++);
    llvm::Function* fn = new_function(name, type, false);
    state_ = {fn, nullptr, {}};
    vars_.clear();
    builder_.SetInsertPoint(new_block("entry"));
    llvm::Value* closure = fn->getArg(1);
    state_.error_slot = builder_.CreateStructGEP(closure_type, closure, 0);
    llvm::Value* lo = builder_.CreateLoad(closure_type->getElementType(1),
                                          builder_.CreateStructGEP(closure_type, closure, 1));
    for (size_t k = 0; k < captured.size(); ++k) {
        vars_[captured[k].get()] =
            builder_.CreateLoad(closure_type->getElementType(2 + k),
                                builder_.CreateStructGEP(closure_type, closure, 2 + k));
    }
    llvm::Value* i = builder_.CreateIntCast(fn->getArg(0), lo->getType(), true);
    vars_[op->loop_var.get()] = builder_.CreateAdd(lo, i, op->loop_var.name());
    codegen(op->body);
    builder_.CreateRetVoid();
    state_ = saved_state;
    vars_ = std::move(saved_vars);
    builder_.restoreIP(saved_ip);
    return fn;
}

// Small constant allocations go on the stack (in the entry block, so loops do not grow it);
// others are 64-byte aligned workspace blocks (runtime/Workspace.h) freed after the body and on
// every failure path inside it.
void CodeGenLLVM::emit_allocate(const Allocate* op) {
    int64_t bytes = op->dtype.bytes();
    bool constant = true;
    for (const Expr& e : op->extents) {
        auto c = as_const_int(e);
        if (c)
            bytes *= *c;
        else
            constant = false;
    }
    if (constant && bytes <= kMaxStackBytes) {
        llvm::Type* array = llvm::ArrayType::get(builder_.getInt8Ty(), std::max<int64_t>(bytes, 1));
        vars_[op->buffer_var.get()] = entry_alloca(array, kAllocAlign);
        codegen(op->body);
        vars_.erase(op->buffer_var.get());
        return;
    }
    llvm::Value* size = builder_.getInt64(op->dtype.bytes());
    for (const Expr& e : op->extents)
        size = builder_.CreateMul(size, builder_.CreateSExt(codegen(e), builder_.getInt64Ty()));
    llvm::FunctionCallee alloc = module_.getOrInsertFunction(
        "tessel_workspace_alloc", builder_.getPtrTy(), builder_.getInt64Ty());
    llvm::FunctionCallee free_fn = module_.getOrInsertFunction(
        "tessel_workspace_free", builder_.getVoidTy(), builder_.getPtrTy());
    llvm::Value* data = builder_.CreateCall(alloc, {size});
    emit_failure_unless(builder_.CreateIsNotNull(data), builder_.getInt32(2));
    vars_[op->buffer_var.get()] = data;
    state_.workspaces.push_back(data);
    codegen(op->body);
    state_.workspaces.pop_back();
    vars_.erase(op->buffer_var.get());
    builder_.CreateCall(free_fn, {data});
}

}  // namespace tessel::internal
