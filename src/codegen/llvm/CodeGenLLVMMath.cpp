// Lowered IR to LLVM IR: float math intrinsics.
//
// Scalar math uses LLVM's intrinsics (which become libm calls) and libm's tanh / erf. Vector math
// must stay vector math (a vectorized exp must not become sixteen scalar expf calls): on x86-64
// Linux it calls glibc's libmvec directly, in chunks of the widest variant the target's features
// allow (`_ZGVeN16v_expf` with AVX-512, `_ZGVdN8v_expf` with AVX2, `_ZGVbN4v_expf` with SSE2),
// whatever the IR's lane count. Elsewhere vectors fall back to lane-wise libm calls.
#include <llvm/IR/Intrinsics.h>
#include <llvm/TargetParser/Triple.h>

#include "codegen/llvm/CodeGenLLVM.h"
#include "tessel/Error.h"

namespace tessel::internal {

namespace {

// libmvec's name of `name` (libm's double-precision name) for one chunk.
std::string libmvec_name(char isa, int lanes, const std::string& name, bool is_double, int arity) {
    return std::string("_ZGV") + isa + "N" + std::to_string(lanes) + (arity == 2 ? "vv" : "v") +
           "_" + name + (is_double ? "" : "f");
}

}  // namespace

// The libmvec ISA letter and chunk width for `elem_bits` on this target, or isa == 0 when the
// target has no libmvec (not x86-64 Linux).
CodeGenLLVM::VectorLib CodeGenLLVM::vector_lib(int elem_bits) const {
    llvm::Triple triple(module_.getTargetTriple());
    if (triple.getArch() != llvm::Triple::x86_64 || !triple.isOSLinux()) return {};
    int per_128 = 128 / elem_bits;
    if (has_feature("avx512f")) return {'e', 4 * per_128};
    if (has_feature("avx2")) return {'d', 2 * per_128};
    return {'b', per_128};
}

// `name` (libm's double name: "exp", "pow", ...) applied lane-wise to the vectors `args`, through
// libmvec in chunks; nullptr when the target has no libmvec.
llvm::Value* CodeGenLLVM::emit_vector_math(const std::string& name,
                                           const std::vector<llvm::Value*>& args) {
    auto* vt = llvm::cast<llvm::FixedVectorType>(args[0]->getType());
    llvm::Type* elem = vt->getElementType();
    bool is_double = elem->isDoubleTy();
    if (!is_double && !elem->isFloatTy()) return nullptr;
    VectorLib lib = vector_lib(is_double ? 64 : 32);
    if (!lib.isa) return nullptr;
    int lanes = static_cast<int>(vt->getNumElements());
    auto* chunk_type = llvm::FixedVectorType::get(elem, lib.width);
    std::vector<llvm::Type*> params(args.size(), chunk_type);
    llvm::FunctionCallee fn = module_.getOrInsertFunction(
        libmvec_name(lib.isa, lib.width, name, is_double, static_cast<int>(args.size())),
        llvm::FunctionType::get(chunk_type, params, false));
    llvm::Value* zeros = llvm::Constant::getNullValue(vt);
    llvm::Value* result = llvm::PoisonValue::get(vt);
    for (int first = 0; first < lanes; first += lib.width) {
        // Lanes past the end of the vector are zeros (their results are dropped).
        llvm::SmallVector<int, 16> pick;
        for (int j = 0; j < lib.width; ++j) pick.push_back(first + j < lanes ? first + j : lanes);
        std::vector<llvm::Value*> chunk_args;
        for (llvm::Value* a : args)
            chunk_args.push_back(builder_.CreateShuffleVector(a, zeros, pick));
        llvm::Value* r = builder_.CreateCall(fn, chunk_args);
        for (int j = 0; j < lib.width && first + j < lanes; ++j) {
            result = builder_.CreateInsertElement(result, builder_.CreateExtractElement(r, j),
                                                  first + j);
        }
    }
    return result;
}

llvm::Value* CodeGenLLVM::emit_float_math(const Call* op, std::vector<llvm::Value*> args, Type t) {
    namespace I = llvm::Intrinsic;
    llvm::Value* x = args[0];
    auto unary = [&](llvm::Intrinsic::ID id) { return builder_.CreateUnaryIntrinsic(id, x); };
    // Transcendental functions: libmvec for vectors, LLVM intrinsics or libm for scalars.
    auto math = [&](const char* name, llvm::Intrinsic::ID id) -> llvm::Value* {
        if (t.lanes > 1) {
            if (llvm::Value* v = emit_vector_math(name, args)) return v;
        }
        if (id == I::not_intrinsic) return emit_libm_call(name, x, t);
        if (args.size() == 2) return builder_.CreateBinaryIntrinsic(id, x, args[1]);
        return unary(id);
    };
    switch (op->op) {
        case Intrinsic::exp: return math("exp", I::exp);
        case Intrinsic::exp2: return math("exp2", I::exp2);
        case Intrinsic::log: return math("log", I::log);
        case Intrinsic::log2: return math("log2", I::log2);
        case Intrinsic::sin: return math("sin", I::sin);
        case Intrinsic::cos: return math("cos", I::cos);
        case Intrinsic::pow: return math("pow", I::pow);
        case Intrinsic::tanh: return math("tanh", I::not_intrinsic);
        case Intrinsic::erf: return math("erf", I::not_intrinsic);
        case Intrinsic::sigmoid: {
            llvm::Value* one = llvm::ConstantFP::get(x->getType(), 1.0);
            args = {builder_.CreateFNeg(x)};
            x = args[0];
            llvm::Value* e = math("exp", I::exp);
            return builder_.CreateFDiv(one, builder_.CreateFAdd(one, e));
        }
        case Intrinsic::sqrt: return unary(I::sqrt);
        case Intrinsic::abs: return unary(I::fabs);
        case Intrinsic::floor: return unary(I::floor);
        case Intrinsic::ceil: return unary(I::ceil);
        case Intrinsic::round: return unary(I::roundeven);  // nearbyint: half to even
        case Intrinsic::trunc: return unary(I::trunc);
        case Intrinsic::rsqrt:
            return builder_.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0), unary(I::sqrt));
        case Intrinsic::fma:
            return builder_.CreateIntrinsic(I::fma, {x->getType()}, {x, args[1], args[2]});
        case Intrinsic::round_tf32: {  // (bits + 0x1000) & ~0x1fff where the exponent is finite
            llvm::Type* bits_type = x->getType()->getWithNewType(builder_.getInt32Ty());
            auto c = [&](uint32_t v) { return llvm::ConstantInt::get(bits_type, v); };
            llvm::Value* u = builder_.CreateBitCast(x, bits_type);
            llvm::Value* finite =
                builder_.CreateICmpNE(builder_.CreateAnd(u, c(0x7f800000u)), c(0x7f800000u));
            llvm::Value* r = builder_.CreateAnd(builder_.CreateAdd(u, c(0x1000u)), c(0xffffe000u));
            return builder_.CreateBitCast(builder_.CreateSelect(finite, r, u), x->getType());
        }
        default: TESSEL_CHECK(false) << "codegen: intrinsic " << intrinsic_name(op->op);
    }
    return nullptr;
}

// libm's scalar function, per lane for vectors (`x` is already float32 for 16-bit types).
llvm::Value* CodeGenLLVM::emit_libm_call(const std::string& name, llvm::Value* x, Type t) {
    bool is_double = t.bits == 64;
    llvm::Type* scalar = is_double ? builder_.getDoubleTy() : builder_.getFloatTy();
    llvm::FunctionCallee fn = module_.getOrInsertFunction(
        is_double ? name : name + "f", llvm::FunctionType::get(scalar, {scalar}, false));
    if (t.lanes == 1) return builder_.CreateCall(fn, {x});
    llvm::Value* result = llvm::PoisonValue::get(x->getType());
    for (int i = 0; i < t.lanes; ++i) {
        llvm::Value* lane = builder_.CreateCall(fn, {builder_.CreateExtractElement(x, i)});
        result = builder_.CreateInsertElement(result, lane, i);
    }
    return result;
}

}  // namespace tessel::internal
