// dot_product (ir/IR.h): the CPU's dot-product instructions where the target has them, vector
// arithmetic with the same results elsewhere.
//
//   int32 += uint8 x int8, groups of 4:   vpdpbusd (AVX512-VNNI: 16 lanes; AVX-VNNI or
//                                         AVX512-VNNI with AVX512-VL: 8 lanes)
//   float32 += bfloat16 x bfloat16, 2:    vdpbf16ps (AVX512-BF16: 16 lanes; with AVX512-VL: 8)
//
// The operands are contiguous: `lanes` accumulators at C, `group` elements at A (the same for
// every lane: the instruction's broadcast operand), and `lanes` rows of `group` elements at B
// (tensorize checks that B's rows are contiguous; lower/ScheduleOps.cpp).
#include <llvm/IR/IntrinsicsX86.h>

#include "codegen/llvm/CodeGenLLVM.h"
#include "tessel/Error.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/IROperator.h"

namespace tessel::internal {

namespace {

// The constant row stride of B's tile operand (B' - B), or 0 when it is not constant.
int64_t row_stride(const Call* op) {
    const Load* b0 = op->args[4].as<Load>();
    const Load* b1 = op->args[5].as<Load>();
    auto d = as_const_int(simplify(b1->index - b0->index));
    return d ? *d : 0;
}

}  // namespace

// A vector of `lanes` elements of `t` from the flattened Load `l`'s index on.
llvm::Value* CodeGenLLVM::load_run(const Load* l, Type t, int64_t lanes) {
    Expr run = Load::make(t.with_lanes(static_cast<int>(lanes)), l->buffer_var,
                          Ramp::make(l->index, make_one(l->index.type()), static_cast<int>(lanes)),
                          Expr());
    return codegen(run);
}

void CodeGenLLVM::emit_dot_product(const Call* op) {
    const int64_t lanes = as_const_int(op->args[0]).value();
    const int64_t group = as_const_int(op->args[1]).value();
    const Load* c = op->args[2].as<Load>();
    const Load* a = op->args[3].as<Load>();
    const Load* b = op->args[4].as<Load>();
    TESSEL_CHECK(c && a && b && op->args[5].as<Load>())
        << "codegen: dot_product's operands must be flattened Loads";
    if (row_stride(op) != group)
        TESSEL_THROW(CompileError)
            << "llvm: dot_product: the rows of '" << b->buffer_var.name()
            << "' are not contiguous (row stride " << row_stride(op) << ", group " << group << ")";
    const Type ct = c->type.element_of(), at = a->type.element_of(), bt = b->type.element_of();
    const bool integer = ct.is_int();
    const int n = static_cast<int>(lanes), g = static_cast<int>(group);
    llvm::Value* acc = load_run(c, ct, lanes);
    llvm::Value* av = load_run(a, at, group);
    llvm::Value* bv = load_run(b, bt, lanes * group);
    const bool vl = has_feature("avx512vl");
    llvm::Intrinsic::ID id = llvm::Intrinsic::not_intrinsic;
    if (integer && group == 4 && lanes == 16 && has_feature("avx512vnni"))
        id = llvm::Intrinsic::x86_avx512_vpdpbusd_512;
    if (integer && group == 4 && lanes == 8 &&
        (has_feature("avxvnni") || (has_feature("avx512vnni") && vl)))
        id = llvm::Intrinsic::x86_avx512_vpdpbusd_256;
    if (!integer && group == 2 && lanes == 16 && has_feature("avx512bf16"))
        id = llvm::Intrinsic::x86_avx512bf16_dpbf16ps_512;
    if (!integer && group == 2 && lanes == 8 && has_feature("avx512bf16") && vl)
        id = llvm::Intrinsic::x86_avx512bf16_dpbf16ps_256;
    llvm::Value* result = nullptr;
    if (id != llvm::Intrinsic::not_intrinsic) {
        // A's group is one 32-bit word, broadcast; B's rows are the lanes' words.
        llvm::Function* fn = llvm::Intrinsic::getDeclaration(&module_, id);
        llvm::FunctionType* ft = fn->getFunctionType();
        llvm::Value* word = builder_.CreateBitCast(av, builder_.getInt32Ty());
        llvm::Value* splat = builder_.CreateVectorSplat(n, word);
        llvm::Value* args[3] = {
            builder_.CreateBitCast(acc, ft->getParamType(0)),
            builder_.CreateBitCast(splat, ft->getParamType(1)),
            builder_.CreateBitCast(builder_.CreateBitCast(bv, llvm_type(Int(32, n))),
                                   ft->getParamType(2))};
        result = builder_.CreateBitCast(builder_.CreateCall(fn, args), acc->getType());
    } else {
        // Widened element by element: products of the group's q-th elements, added in order.
        std::vector<int> repeat;
        for (int j = 0; j < n; ++j)
            for (int q = 0; q < g; ++q) repeat.push_back(q);
        llvm::Value* arep = builder_.CreateShuffleVector(av, repeat);
        llvm::Value* prod = nullptr;
        if (integer) {
            llvm::Type* wide = llvm_type(Int(32, n * g));
            prod =
                builder_.CreateMul(builder_.CreateZExt(arep, wide), builder_.CreateSExt(bv, wide));
        } else {
            prod = builder_.CreateFMul(widen_half(arep, at.with_lanes(n * g)),
                                       widen_half(bv, bt.with_lanes(n * g)));
        }
        result = acc;
        for (int q = 0; q < g; ++q) {
            std::vector<int> pick;
            for (int j = 0; j < n; ++j) pick.push_back(j * g + q);
            llvm::Value* part = builder_.CreateShuffleVector(prod, pick);
            result = integer ? builder_.CreateAdd(result, part) : builder_.CreateFAdd(result, part);
        }
    }
    llvm::Value* ptr =
        builder_.CreateGEP(memory_type(ct), lookup(c->buffer_var), emit_index(c->index));
    llvm::Instruction* store = builder_.CreateAlignedStore(to_memory(result, ct.with_lanes(n)), ptr,
                                                           llvm::Align(ct.bytes()));
    annotate_access(store, c->buffer_var);
}

bool CodeGenLLVM::has_feature(const std::string& name) const {
    return enabled_features_.count(name) != 0;
}

}  // namespace tessel::internal
