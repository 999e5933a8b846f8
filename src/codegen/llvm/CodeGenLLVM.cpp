// Lowered IR to LLVM IR: expressions and memory. Statements, loops and closures are in
// CodeGenLLVMStmt.cpp.
#include "codegen/llvm/CodeGenLLVM.h"

#include <algorithm>
#include <cstring>

#include <llvm/IR/Intrinsics.h>

#include "target/CpuFeatures.h"
#include "tessel/Error.h"
#include "tessel/arith/Modular.h"

namespace tessel::internal {

CodeGenLLVM::CodeGenLLVM(llvm::Module& module, std::string cpu, std::string features,
                         FloatMode mode)
    : module_(module),
      context_(module.getContext()),
      builder_(module.getContext()),
      cpu_(std::move(cpu)),
      features_(std::move(features)) {
    std::vector<std::string> listed;
    for (size_t at = 0; at < features_.size();) {
        size_t comma = std::min(features_.find(',', at), features_.size());
        if (comma > at) listed.push_back(features_.substr(at, comma - at));
        at = comma + 1;
    }
    enabled_features_ = internal::enabled_cpu_features(cpu_, listed);
    llvm::FastMathFlags flags;
    if (mode == FloatMode::Fast) flags = llvm::FastMathFlags::getFast();
    if (mode == FloatMode::Contract) flags.setAllowContract(true);
    builder_.setFastMathFlags(flags);
}

llvm::Type* CodeGenLLVM::llvm_type(Type t) {
    llvm::Type* elem = nullptr;
    switch (t.code) {
        case TypeCode::Int:
        case TypeCode::UInt: elem = llvm::Type::getIntNTy(context_, t.bits); break;
        case TypeCode::Bool: elem = llvm::Type::getInt1Ty(context_); break;
        case TypeCode::Float:
            elem = t.bits == 16   ? llvm::Type::getHalfTy(context_)
                   : t.bits == 32 ? llvm::Type::getFloatTy(context_)
                                  : llvm::Type::getDoubleTy(context_);
            break;
        // bfloat16 values are their bits (i16): every operation widens them to float32 and rounds
        // back in integers (widen_half, round_to_bfloat), and LLVM cannot legalise every bfloat
        // vector (a <17 x bfloat> load or fpext is "cannot soft promote" on x86).
        case TypeCode::BFloat: elem = llvm::Type::getInt16Ty(context_); break;
        case TypeCode::Handle: elem = llvm::PointerType::get(context_, 0); break;
    }
    if (t.lanes == 1) return elem;
    return llvm::FixedVectorType::get(elem, t.lanes);
}

// Bools take one byte in memory.
llvm::Type* CodeGenLLVM::memory_type(Type t) {
    return t.is_bool() ? llvm_type(UInt(8, t.lanes)) : llvm_type(t);
}

llvm::Value* CodeGenLLVM::to_memory(llvm::Value* v, Type t) {
    return t.is_bool() ? builder_.CreateZExt(v, memory_type(t)) : v;
}

llvm::Value* CodeGenLLVM::from_memory(llvm::Value* v, Type t) {
    if (!t.is_bool()) return v;
    return builder_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
}

llvm::Value* CodeGenLLVM::lookup(const Var& v) {
    auto it = vars_.find(v.get());
    TESSEL_CHECK(it != vars_.end()) << "codegen: unbound variable " << v.name();
    return it->second;
}

namespace {

// The bits of `v` rounded to bfloat16 (as the interpreter rounds it).
int64_t bfloat_bits(double v) {
    float f = static_cast<float>(round_to_float_type(v, BFloat(16)));
    uint32_t bits = 0;
    std::memcpy(&bits, &f, sizeof bits);
    return static_cast<int64_t>(bits >> 16);
}

}  // namespace

llvm::Value* CodeGenLLVM::constant(Type t, int64_t value) {
    return llvm::ConstantInt::get(llvm_type(t), static_cast<uint64_t>(value), t.is_int());
}

// float16 and bfloat16 compute in float32 and round back after each operation (ir/IR.h).
llvm::Value* CodeGenLLVM::widen_half(llvm::Value* v, Type t) {
    if (!t.is_float() || t.bits != 16) return v;
    if (t.is_bfloat()) {  // float32's high half (bfloat16 values are i16, see llvm_type)
        llvm::Value* wide = builder_.CreateZExt(v, llvm_type(Int(32, t.lanes)));
        wide = builder_.CreateShl(wide, constant(Int(32, t.lanes), 16));
        return builder_.CreateBitCast(wide, llvm_type(Float(32, t.lanes)));
    }
    return builder_.CreateFPExt(v, llvm_type(Float(32, t.lanes)));
}

llvm::Value* CodeGenLLVM::narrow_half(llvm::Value* v, Type t) {
    if (!t.is_float() || t.bits != 16) return v;
    if (t.is_bfloat()) return round_to_bfloat(v, t.lanes);
    return builder_.CreateFPTrunc(v, llvm_type(t));
}

// float32 → bfloat16 rounded to nearest even in integer arithmetic, NaNs kept quiet. LLVM's
// fptrunc to bfloat is a call to __truncsfbf2 (absent from the JIT's runtime) on CPUs without
// AVX512-BF16, and flushes subnormals on those with it (vcvtneps2bf16); this is exact everywhere
// and vectorises to a few integer instructions.
llvm::Value* CodeGenLLVM::round_to_bfloat(llvm::Value* f32, int lanes) {
    llvm::Type* i32 = llvm_type(Int(32, lanes));
    auto splat = [&](uint32_t c) { return constant(Int(32, lanes), c); };
    llvm::Value* bits = builder_.CreateBitCast(f32, i32);
    llvm::Value* lsb = builder_.CreateAnd(builder_.CreateLShr(bits, splat(16)), splat(1));
    llvm::Value* rounded = builder_.CreateAdd(bits, builder_.CreateAdd(splat(0x7fff), lsb));
    llvm::Value* nan = builder_.CreateFCmpUNO(f32, f32);
    llvm::Value* quiet = builder_.CreateOr(bits, splat(0x00400000));
    llvm::Value* high = builder_.CreateLShr(builder_.CreateSelect(nan, quiet, rounded), splat(16));
    return builder_.CreateTrunc(high, llvm_type(Int(16, lanes)));
}

llvm::Value* CodeGenLLVM::codegen(const Expr& e) {
    TESSEL_CHECK(e.defined()) << "codegen of an undefined expression";
    Type t = e.type();
    switch (e.node_type()) {
        case IRNodeType::IntImm: return constant(t, e.as<IntImm>()->value);
        case IRNodeType::UIntImm:
            return llvm::ConstantInt::get(llvm_type(t), e.as<UIntImm>()->value, false);
        case IRNodeType::FloatImm:
            if (t.is_bfloat()) return constant(Int(16), bfloat_bits(e.as<FloatImm>()->value));
            return llvm::ConstantFP::get(llvm_type(t), e.as<FloatImm>()->value);
        case IRNodeType::Variable: return lookup(Var(e.as<Variable>()));
        case IRNodeType::Cast: return emit_cast(t, e.as<Cast>()->value);
#define TESSEL_BINARY_CASE(T) \
    case IRNodeType::T: return emit_binary(IRNodeType::T, e.as<T>()->a, e.as<T>()->b, t);
            TESSEL_BINARY_CASE(Add)
            TESSEL_BINARY_CASE(Sub)
            TESSEL_BINARY_CASE(Mul)
            TESSEL_BINARY_CASE(Div)
            TESSEL_BINARY_CASE(Mod)
            TESSEL_BINARY_CASE(FloorDiv)
            TESSEL_BINARY_CASE(FloorMod)
            TESSEL_BINARY_CASE(Min)
            TESSEL_BINARY_CASE(Max)
#undef TESSEL_BINARY_CASE
#define TESSEL_COMPARE_CASE(T) \
    case IRNodeType::T: return emit_compare(IRNodeType::T, e.as<T>()->a, e.as<T>()->b);
            TESSEL_COMPARE_CASE(EQ)
            TESSEL_COMPARE_CASE(NE)
            TESSEL_COMPARE_CASE(LT)
            TESSEL_COMPARE_CASE(LE) TESSEL_COMPARE_CASE(GT) TESSEL_COMPARE_CASE(GE)
#undef TESSEL_COMPARE_CASE
                case IRNodeType::And
                : return builder_.CreateAnd(codegen(e.as<And>()->a), codegen(e.as<And>()->b));
        case IRNodeType::Or:
            return builder_.CreateOr(codegen(e.as<Or>()->a), codegen(e.as<Or>()->b));
        case IRNodeType::Not: return builder_.CreateNot(codegen(e.as<Not>()->a));
        case IRNodeType::Select: {
            const Select* op = e.as<Select>();
            llvm::Value* c = codegen(op->condition);
            return builder_.CreateSelect(c, codegen(op->true_value), codegen(op->false_value));
        }
        case IRNodeType::Ramp: return emit_ramp(e.as<Ramp>());
        case IRNodeType::Broadcast: {
            const Broadcast* op = e.as<Broadcast>();
            return builder_.CreateVectorSplat(op->lanes, codegen(op->value));
        }
        case IRNodeType::Let: {
            const Let* op = e.as<Let>();
            llvm::Value* value = codegen(op->value);
            auto saved = vars_.find(op->var.get()) != vars_.end() ? lookup(op->var) : nullptr;
            vars_[op->var.get()] = value;
            llvm::Value* body = codegen(op->body);
            if (saved)
                vars_[op->var.get()] = saved;
            else
                vars_.erase(op->var.get());
            return body;
        }
        case IRNodeType::Call: return emit_call(e.as<Call>());
        case IRNodeType::Load: return emit_load(e.as<Load>());
        case IRNodeType::TensorRead:
        case IRNodeType::Reduce:
        case IRNodeType::BufferLoad:
            TESSEL_CHECK(false) << "codegen: " << node_type_name(e.node_type())
                                << " must be lowered away before code generation";
            break;
        default:
            TESSEL_CHECK(false) << "codegen: " << node_type_name(e.node_type())
                                << " is not an expression";
    }
    return nullptr;
}

llvm::Value* CodeGenLLVM::emit_cast(Type to, const Expr& value) {
    Type from = value.type();
    llvm::Value* v = codegen(value);
    llvm::Type* dst = llvm_type(to);
    if (from == to) return v;
    if (from.is_bfloat()) {  // through float32, widened in integers (widen_half)
        v = widen_half(v, from);
        from = Float(32, from.lanes);
        if (from == to) return v;
    }
    if (to.is_bool()) {
        if (from.is_float())
            return builder_.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()));
        return builder_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
    }
    if (to.is_bfloat()) {
        // Through float32 (float64 and 32-bit integers round twice), then rounded in integers.
        llvm::Type* f32 = llvm_type(Float(32, to.lanes));
        if (from.is_float())
            v = from.bits == 16 ? widen_half(v, from) : builder_.CreateFPCast(v, f32);
        else
            v = from.is_int() ? builder_.CreateSIToFP(v, f32) : builder_.CreateUIToFP(v, f32);
        return round_to_bfloat(v, to.lanes);
    }
    if (to.is_float()) {
        if (from.is_float()) {
            return builder_.CreateFPCast(v, dst);
        }
        return from.is_int() ? builder_.CreateSIToFP(v, dst) : builder_.CreateUIToFP(v, dst);
    }
    if (from.is_float()) {
        // Truncates toward zero, saturates, NaN → 0: exactly fpto[su]i.sat.
        auto id = to.is_int() ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
        return builder_.CreateIntrinsic(id, {dst, v->getType()}, {v});
    }
    return builder_.CreateIntCast(v, dst, from.is_int());
}

llvm::Value* CodeGenLLVM::emit_binary(IRNodeType op, const Expr& a, const Expr& b, Type t) {
    llvm::Value* va = codegen(a);
    llvm::Value* vb = codegen(b);
    if (t.is_float()) {
        llvm::Value* r = emit_float_binary(op, widen_half(va, t), widen_half(vb, t), t);
        return narrow_half(r, t);
    }
    return emit_int_binary(op, va, vb, t);
}

llvm::Value* CodeGenLLVM::emit_float_binary(IRNodeType op, llvm::Value* a, llvm::Value* b, Type t) {
    (void)t;
    switch (op) {
        case IRNodeType::Add: return builder_.CreateFAdd(a, b);
        case IRNodeType::Sub: return builder_.CreateFSub(a, b);
        case IRNodeType::Mul: return builder_.CreateFMul(a, b);
        case IRNodeType::Div: return builder_.CreateFDiv(a, b);
        case IRNodeType::Mod: return builder_.CreateFRem(a, b);
        case IRNodeType::FloorDiv:
            return builder_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, builder_.CreateFDiv(a, b));
        case IRNodeType::FloorMod: {
            llvm::Value* q =
                builder_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, builder_.CreateFDiv(a, b));
            return builder_.CreateFSub(a, builder_.CreateFMul(b, q));
        }
        case IRNodeType::Min: return builder_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, a, b);
        case IRNodeType::Max: return builder_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, a, b);
        default: TESSEL_CHECK(false) << "codegen: float " << node_type_name(op);
    }
    return nullptr;
}

llvm::Value* CodeGenLLVM::emit_int_binary(IRNodeType op, llvm::Value* a, llvm::Value* b, Type t) {
    bool sgn = t.is_int();
    switch (op) {
        // Wrapping (ir/IR.h), except in a memory access's index (emit_index): nsw there.
        case IRNodeType::Add: return builder_.CreateAdd(a, b, "", false, in_index_ && sgn);
        case IRNodeType::Sub: return builder_.CreateSub(a, b, "", false, in_index_ && sgn);
        case IRNodeType::Mul: return builder_.CreateMul(a, b, "", false, in_index_ && sgn);
        case IRNodeType::Div:
        case IRNodeType::Mod:
        case IRNodeType::FloorDiv:
        case IRNodeType::FloorMod: return emit_int_division(op, a, b, t);
        case IRNodeType::Min:
            return builder_.CreateBinaryIntrinsic(
                sgn ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, a, b);
        case IRNodeType::Max:
            return builder_.CreateBinaryIntrinsic(
                sgn ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, a, b);
        default: TESSEL_CHECK(false) << "codegen: integer " << node_type_name(op);
    }
    return nullptr;
}

// x / 0 == x % 0 == 0; INT_MIN / -1 == INT_MIN (sdiv would be undefined for both, so the divisor
// is replaced by 1 and the result selected). Floor variants fix the truncated quotient up when
// the remainder is non-zero and has the other sign than the divisor.
llvm::Value* CodeGenLLVM::emit_int_division(IRNodeType op, llvm::Value* a, llvm::Value* b, Type t) {
    llvm::Type* ty = a->getType();
    llvm::Value* zero = llvm::Constant::getNullValue(ty);
    llvm::Value* one = llvm::ConstantInt::get(ty, 1);
    llvm::Value* b_zero = builder_.CreateICmpEQ(b, zero);
    bool is_div = op == IRNodeType::Div || op == IRNodeType::FloorDiv;
    if (!t.is_int()) {
        llvm::Value* safe = builder_.CreateSelect(b_zero, one, b);
        llvm::Value* r = is_div ? builder_.CreateUDiv(a, safe) : builder_.CreateURem(a, safe);
        return builder_.CreateSelect(b_zero, zero, r);
    }
    llvm::Value* b_neg1 = builder_.CreateICmpEQ(b, llvm::Constant::getAllOnesValue(ty));
    llvm::Value* safe = builder_.CreateSelect(builder_.CreateOr(b_zero, b_neg1), one, b);
    llvm::Value* q = builder_.CreateSDiv(a, safe);
    llvm::Value* r = builder_.CreateSRem(a, safe);
    llvm::Value* result = nullptr;
    if (op == IRNodeType::Div || op == IRNodeType::Mod) {
        result = op == IRNodeType::Div ? q : r;
    } else {
        llvm::Value* adjust = builder_.CreateAnd(
            builder_.CreateICmpNE(r, zero), builder_.CreateICmpSLT(builder_.CreateXor(r, b), zero));
        result = op == IRNodeType::FloorDiv
                     ? builder_.CreateSub(q, builder_.CreateZExt(adjust, ty))
                     : builder_.CreateAdd(r, builder_.CreateSelect(adjust, b, zero));
    }
    llvm::Value* by_neg1 = is_div ? builder_.CreateNeg(a) : zero;
    result = builder_.CreateSelect(b_neg1, by_neg1, result);
    return builder_.CreateSelect(b_zero, zero, result);
}

llvm::Value* CodeGenLLVM::emit_compare(IRNodeType op, const Expr& a, const Expr& b) {
    Type t = a.type();
    llvm::Value* va = codegen(a);
    llvm::Value* vb = codegen(b);
    using P = llvm::CmpInst::Predicate;
    int index = static_cast<int>(op) - static_cast<int>(IRNodeType::EQ);  // EQ NE LT LE GT GE
    if (t.is_float()) {
        static const P fp[] = {P::FCMP_OEQ, P::FCMP_UNE, P::FCMP_OLT,
                               P::FCMP_OLE, P::FCMP_OGT, P::FCMP_OGE};
        return builder_.CreateFCmp(fp[index], widen_half(va, t), widen_half(vb, t));
    }
    static const P sp[] = {P::ICMP_EQ,  P::ICMP_NE,  P::ICMP_SLT,
                           P::ICMP_SLE, P::ICMP_SGT, P::ICMP_SGE};
    static const P up[] = {P::ICMP_EQ,  P::ICMP_NE,  P::ICMP_ULT,
                           P::ICMP_ULE, P::ICMP_UGT, P::ICMP_UGE};
    return builder_.CreateICmp(t.is_int() ? sp[index] : up[index], va, vb);
}

llvm::Value* CodeGenLLVM::emit_ramp(const Ramp* op) {
    Type elem = op->base.type();
    llvm::Value* base = builder_.CreateVectorSplat(op->lanes, codegen(op->base));
    llvm::Value* stride = builder_.CreateVectorSplat(op->lanes, codegen(op->stride));
    std::vector<llvm::Constant*> iota;
    for (int i = 0; i < op->lanes; ++i)
        iota.push_back(llvm::ConstantInt::get(llvm_type(elem), static_cast<uint64_t>(i)));
    llvm::Value* offsets = builder_.CreateMul(stride, llvm::ConstantVector::get(iota));
    return builder_.CreateAdd(base, offsets);
}

llvm::Value* CodeGenLLVM::emit_call(const Call* op) {
    Type t = op->type;
    switch (op->op) {
        case Intrinsic::likely: return codegen(op->args[0]);
        case Intrinsic::if_then_else: return emit_lazy_select(op);
        case Intrinsic::isnan: {
            llvm::Value* x = widen_half(codegen(op->args[0]), op->args[0].type());
            return builder_.CreateFCmpUNO(x, x);
        }
        case Intrinsic::abs:
            if (!op->args[0].type().is_float()) {
                llvm::Value* x = codegen(op->args[0]);
                if (!t.is_int()) return x;
                return builder_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, builder_.getFalse());
            }
            break;
        case Intrinsic::swizzle: {  // o ^ (((o / span) % phases) * vector), o >= 0 (ir/IR.h)
            llvm::Value* o = codegen(op->args[0]);
            auto c = [&](int k) {
                llvm::Value* v = llvm::ConstantInt::get(
                    llvm_type(t.element_of()), static_cast<uint64_t>(*as_const_int(op->args[k])));
                return t.is_vector() ? builder_.CreateVectorSplat(t.lanes, v) : v;
            };
            llvm::Value* phase = builder_.CreateURem(builder_.CreateUDiv(o, c(2)), c(3));
            return builder_.CreateXor(o, builder_.CreateMul(phase, c(1)));
        }
        default:
            if (is_statement_intrinsic(op->op))
                TESSEL_THROW(CompileError)
                    << "llvm: " << intrinsic_name(op->op)
                    << " has no meaning on a CPU target: it needs a GPU target "
                       "(a GPU schedule was compiled for llvm)";
            break;
    }
    std::vector<llvm::Value*> args;
    for (const Expr& a : op->args) args.push_back(widen_half(codegen(a), t));
    return narrow_half(emit_float_math(op, args, t), t);
}

// if_then_else evaluates only the taken branch: a branch for a scalar condition; a vector
// condition selects between both (vectorization has already predicated the loads in them).
llvm::Value* CodeGenLLVM::emit_lazy_select(const Call* op) {
    llvm::Value* c = codegen(op->args[0]);
    if (op->args[0].type().is_vector())
        return builder_.CreateSelect(c, codegen(op->args[1]), codegen(op->args[2]));
    llvm::BasicBlock* then_bb = new_block("ite.then");
    llvm::BasicBlock* else_bb = new_block("ite.else");
    llvm::BasicBlock* done = new_block("ite.done");
    builder_.CreateCondBr(c, then_bb, else_bb);
    builder_.SetInsertPoint(then_bb);
    llvm::Value* tv = codegen(op->args[1]);
    llvm::BasicBlock* then_end = builder_.GetInsertBlock();
    builder_.CreateBr(done);
    builder_.SetInsertPoint(else_bb);
    llvm::Value* fv = codegen(op->args[2]);
    llvm::BasicBlock* else_end = builder_.GetInsertBlock();
    builder_.CreateBr(done);
    builder_.SetInsertPoint(done);
    llvm::PHINode* phi = builder_.CreatePHI(tv->getType(), 2);
    phi->addIncoming(tv, then_end);
    phi->addIncoming(fv, else_end);
    return phi;
}

llvm::Value* CodeGenLLVM::emit_mask(const Expr& predicate, int lanes) {
    if (predicate.defined()) return codegen(predicate);
    return llvm::Constant::getAllOnesValue(llvm_type(Bool(lanes)));
}

// Accesses get the buffer's alias scopes (see the file comment of CodeGenLLVM.h).
void CodeGenLLVM::annotate_access(llvm::Instruction* access, const Var& buffer) {
    auto it = buffers_.find(buffer.get());
    if (it == buffers_.end() || !it->second.scope) return;
    access->setMetadata(llvm::LLVMContext::MD_alias_scope, it->second.scope);
    if (it->second.noalias) access->setMetadata(llvm::LLVMContext::MD_noalias, it->second.noalias);
}

// The alignment of an access at element `offset` of `buffer`: the element size for arguments;
// for the kernel's own 64-byte aligned buffers, the largest power of two (up to 64) that divides
// every possible byte offset.
llvm::Align CodeGenLLVM::access_alignment(const Var& buffer, const Expr& offset, Type t) {
    uint64_t elem = static_cast<uint64_t>(t.element_of().bytes());
    auto it = buffers_.find(buffer.get());
    if (it == buffers_.end() || !it->second.own) return llvm::Align(elem);
    ModularSet m = modular_set_of(offset);
    uint64_t align = 64;
    for (int64_t part : {m.coeff, m.base}) {
        if (part == 0) continue;
        uint64_t bytes = static_cast<uint64_t>(part < 0 ? -part : part) * elem;
        align = std::min<uint64_t>(align, bytes & (~bytes + 1));  // lowest set bit
    }
    return llvm::Align(std::max<uint64_t>(align, elem));
}

// A memory access's index (or a dense vector's first lane), its signed arithmetic nsw.
llvm::Value* CodeGenLLVM::emit_index(const Expr& index) {
    bool outer = in_index_;
    in_index_ = true;
    llvm::Value* v = codegen(index);
    in_index_ = outer;
    return v;
}

// Dense Ramp accesses become vector loads (masked when predicated); other vector indices gather.
llvm::Value* CodeGenLLVM::emit_load(const Load* op) {
    Type t = op->type;
    llvm::Type* elem = memory_type(t.element_of());
    llvm::Type* vec = memory_type(t);
    llvm::Value* base = lookup(op->buffer_var);
    llvm::Align align(t.element_of().bytes());
    const Ramp* ramp = op->index.as<Ramp>();
    llvm::Instruction* v = nullptr;
    if (t.lanes == 1) {
        TESSEL_CHECK(!op->predicate.defined() || is_one(op->predicate))
            << "codegen: predicated scalar load";
        v = builder_.CreateAlignedLoad(elem, builder_.CreateGEP(elem, base, emit_index(op->index)),
                                       access_alignment(op->buffer_var, op->index, t));
    } else if (ramp && is_one(ramp->stride)) {
        llvm::Value* ptr = builder_.CreateGEP(elem, base, emit_index(ramp->base));
        align = access_alignment(op->buffer_var, ramp->base, t);
        if (op->predicate.defined()) {
            v = builder_.CreateMaskedLoad(vec, ptr, align, emit_mask(op->predicate, t.lanes),
                                          llvm::Constant::getNullValue(vec));
        } else {
            v = builder_.CreateAlignedLoad(vec, ptr, align);
        }
    } else {
        llvm::Value* ptrs = builder_.CreateGEP(elem, base, emit_index(op->index));
        v = builder_.CreateMaskedGather(vec, ptrs, align, emit_mask(op->predicate, t.lanes),
                                        llvm::Constant::getNullValue(vec));
    }
    annotate_access(v, op->buffer_var);
    return from_memory(v, t);
}

void CodeGenLLVM::emit_store(const Store* op) {
    Type t = op->value.type();
    llvm::Type* elem = memory_type(t.element_of());
    llvm::Value* base = lookup(op->buffer_var);
    llvm::Align align(t.element_of().bytes());
    llvm::Value* value = to_memory(codegen(op->value), t);
    const Ramp* ramp = op->index.as<Ramp>();
    llvm::Instruction* st = nullptr;
    if (t.lanes == 1) {
        TESSEL_CHECK(!op->predicate.defined() || is_one(op->predicate))
            << "codegen: predicated scalar store";
        st = builder_.CreateAlignedStore(value,
                                         builder_.CreateGEP(elem, base, emit_index(op->index)),
                                         access_alignment(op->buffer_var, op->index, t));
    } else if (ramp && is_one(ramp->stride)) {
        llvm::Value* ptr = builder_.CreateGEP(elem, base, emit_index(ramp->base));
        align = access_alignment(op->buffer_var, ramp->base, t);
        if (op->predicate.defined()) {
            st = builder_.CreateMaskedStore(value, ptr, align, emit_mask(op->predicate, t.lanes));
        } else {
            st = builder_.CreateAlignedStore(value, ptr, align);
        }
    } else {
        // A scatter writes lanes in increasing order, as the IR's lane-wise semantics ask.
        llvm::Value* ptrs = builder_.CreateGEP(elem, base, emit_index(op->index));
        st = builder_.CreateMaskedScatter(value, ptrs, align, emit_mask(op->predicate, t.lanes));
    }
    annotate_access(st, op->buffer_var);
}

}  // namespace tessel::internal
