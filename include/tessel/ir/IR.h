// tessel's IR: expressions and statements, from tensor expressions down to flat loops.
//
// ## Semantics
//
// **Types.** Every expression has a Type (ir/Type.h): bool, int8..64, uint8..64, float16, bfloat16,
// float32, float64, each with 1 or more vector lanes. Operands of binary nodes have identical
// types; there are no implicit conversions inside the IR (the DSL inserts Casts or adapts
// literals).
//
// **Index dtype.** Loop variables, shapes and indices are int32 unless some extent or the product
// of a buffer's extents does not fit in int32; then that whole loop nest / buffer uses int64. The
// DSL picks this when a placeholder or compute is declared (te/), lowering keeps it.
//
// **Integers.** Add, Sub and Mul wrap modulo 2^bits (two's complement), exactly as the LLVM backend
// emits plain `add`/`sub`/`mul` without nsw/nuw flags; the simplifier may only apply rewrites that
// are valid under wrapping, except for index arithmetic, which the index dtype policy above keeps
// from overflowing (the LLVM backend marks the signed arithmetic of a Load's or Store's index
// `nsw`: an index that overflowed would address outside its buffer anyway). Div and Mod truncate
// toward zero (C semantics); FloorDiv and FloorMod round toward negative infinity (the remainder
// has the divisor's sign); index arithmetic created by schedules uses FloorDiv/FloorMod. Division
// or modulo by zero yields 0 for every integer node (backends guard the divisor unless it is proven
// non-zero); INT_MIN / -1 yields INT_MIN. Shifts are not IR nodes. Casts between integers truncate
// or extend (sign- or zero- by source type); float to integer truncates toward zero and saturates;
// NaN converts to 0.
//
// **Floats.** IEEE-754 in the declared width, round-to-nearest-even, no fast-math unless a target
// asks for it: no reassociation. A backend may contract `a * b + c` into one fused multiply-add
// (one rounding instead of two), as TVM and Halide do, unless the target is strict ("llvm
// -strict-float"); the interpreters round every operation, and the explicit `fma` intrinsic is
// always fused. float16 and
// bfloat16 arithmetic is specified as computed in float32 and rounded back after each operation.
// Div on floats is true division; Mod on floats is C's fmod; FloorDiv on floats is floor(a / b).
// Min/Max on floats return the non-NaN operand when exactly one is NaN (fmin/fmax).
//
// **Booleans.** Comparisons yield bool with the operands' lane count. And/Or take bool operands and
// evaluate both sides (they are pure); Select evaluates all three operands; the intrinsic
// `if_then_else(c, t, f)` evaluates only the taken branch (use it where the untaken branch could
// read out of bounds).
//
// **Evaluation order.** Expressions are pure and may be evaluated in any order, any number of
// times, except Call of impure intrinsics (barriers), which is only valid as the value of an
// Evaluate statement. Statements execute in program order; a For's iterations run in increasing
// order unless its kind says they may run concurrently (parallel, vectorized, thread-bound), in
// which case the program must not have races between iterations. Let binds a value once, before its
// body.
//
// **Vectors.** Ramp(base, stride, n) is the vector base + i*stride for i in [0, n); Broadcast(v, n)
// repeats v. A vector Load/Store with a Ramp index moves n elements; other vector indices gather or
// scatter. Arithmetic on vectors is lane-wise.
//
// **Memory.** Before storage flattening, tensors are accessed with BufferLoad/BufferStore through a
// Buffer (shape, strides, dtype, scope); afterwards with flat Load/Store on the buffer's data
// variable, indexed in elements. Every access must be in bounds; tessel's interpreters check it.
//
// ## Representation
//
// Nodes are immutable, reference-counted structs created by their checking `make()`; `Expr` and
// `Stmt` are handles to them. Variables have identity: two Vars with the same name are different
// variables (docs/design.md); printing makes names unique. The X-macro lists below generate the
// node enum and the visitor, mutator, printer and equality declarations.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessel/Error.h"
#include "tessel/ir/Type.h"

namespace tessel {

// clang-format off
/// Every expression node, in a fixed order (also the order of the node enum).
#define TESSEL_FOR_EACH_EXPR_NODE(X) \
    X(IntImm) X(UIntImm) X(FloatImm) X(Variable) X(Cast) \
    X(Add) X(Sub) X(Mul) X(Div) X(Mod) X(FloorDiv) X(FloorMod) X(Min) X(Max) \
    X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE) X(And) X(Or) X(Not) \
    X(Select) X(Ramp) X(Broadcast) X(Let) X(Call) X(TensorRead) X(Reduce) X(Load) X(BufferLoad)

/// Every statement node.
#define TESSEL_FOR_EACH_STMT_NODE(X) \
    X(LetStmt) X(AttrStmt) X(AssertStmt) X(For) X(Store) X(BufferStore) X(Allocate) X(Seq) \
    X(IfThenElse) X(Evaluate)
// clang-format on

#define TESSEL_DECLARE_NODE(T) struct T;
TESSEL_FOR_EACH_EXPR_NODE(TESSEL_DECLARE_NODE)
TESSEL_FOR_EACH_STMT_NODE(TESSEL_DECLARE_NODE)
#undef TESSEL_DECLARE_NODE

/// The type tag of every IR node.
enum class IRNodeType : uint8_t {
#define TESSEL_NODE_ENUM(T) T,
    TESSEL_FOR_EACH_EXPR_NODE(TESSEL_NODE_ENUM) TESSEL_FOR_EACH_STMT_NODE(TESSEL_NODE_ENUM)
#undef TESSEL_NODE_ENUM
};

/// The node's name, e.g. "FloorDiv".
const char* node_type_name(IRNodeType t);

// ---------------------------------------------------------------------------------------------
// Reference counting

/// Base of every reference-counted object of the IR (nodes, buffers, tensors, operations).
struct RefCounted {
    mutable std::atomic<int> ref_count{0};
    RefCounted() = default;
    RefCounted(const RefCounted&) = delete;
    RefCounted& operator=(const RefCounted&) = delete;
    virtual ~RefCounted() = default;
};

/// Deletes an object whose last reference went away. Deleting a node releases its children; to
/// keep destruction of very deep trees (long expression chains, DAGs of thousands of operations)
/// from overflowing the stack, nested deletions are queued and run iteratively.
void destroy_ref_counted(const RefCounted* object);

/// An intrusive shared pointer to an immutable RefCounted object.
template <typename T>
class Ptr {
public:
    Ptr() = default;
    Ptr(const T* p) : ptr_(p) { acquire(); }  // NOLINT: implicit from a fresh node
    Ptr(const Ptr& o) : ptr_(o.ptr_) { acquire(); }
    Ptr(Ptr&& o) noexcept : ptr_(o.ptr_) { o.ptr_ = nullptr; }
    template <typename U>
    requires std::is_convertible_v<const U*, const T*> Ptr(const Ptr<U>& o)
        : ptr_(o.get()) {  // NOLINT: upcast
        acquire();
    }
    ~Ptr() { release(); }
    Ptr& operator=(const Ptr& o) {
        Ptr tmp(o);
        std::swap(ptr_, tmp.ptr_);
        return *this;
    }
    Ptr& operator=(Ptr&& o) noexcept {
        std::swap(ptr_, o.ptr_);
        return *this;
    }

    const T* get() const { return ptr_; }
    const T* operator->() const { return ptr_; }
    const T& operator*() const { return *ptr_; }
    bool defined() const { return ptr_ != nullptr; }
    /// Identity: both handles point at the same object.
    bool same_as(const Ptr& o) const { return ptr_ == o.ptr_; }

private:
    void acquire() {
        if (ptr_) ptr_->ref_count.fetch_add(1, std::memory_order_relaxed);
    }
    void release() {
        if (ptr_ && ptr_->ref_count.fetch_sub(1, std::memory_order_acq_rel) == 1)
            destroy_ref_counted(ptr_);
        ptr_ = nullptr;
    }
    const T* ptr_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// Base nodes and handles

/// Base of all IR nodes.
struct IRNode : RefCounted {
    const IRNodeType node_type;
    explicit IRNode(IRNodeType t) : node_type(t) {}
};

/// Base of expression nodes: every expression has a type.
struct ExprNode : IRNode {
    Type type;
    ExprNode(IRNodeType t, Type ty) : IRNode(t), type(ty) {}
};

/// Base of statement nodes.
struct StmtNode : IRNode {
    explicit StmtNode(IRNodeType t) : IRNode(t) {}
};

/// A handle to an immutable expression node. Implicitly built from C++ literals:
/// int → int32, int64_t → int64, float → float32, double → float64.
class Expr : public Ptr<ExprNode> {
public:
    Expr() = default;
    Expr(const ExprNode* n) : Ptr<ExprNode>(n) {}  // NOLINT
    /// From a plain node pointer handle. A template taking exactly Ptr<ExprNode>, so that a
    /// `const Var&` converts to Expr through the copy constructor without ambiguity.
    template <typename P>
    requires std::is_same_v<P, Ptr<ExprNode>> Expr(P n) : Ptr<ExprNode>(std::move(n)) {}  // NOLINT
    Expr(int value);                                                                      // NOLINT
    Expr(int64_t value);                                                                  // NOLINT
    Expr(float value);                                                                    // NOLINT
    Expr(double value);                                                                   // NOLINT

    /// The expression's type. The handle must be defined.
    Type type() const { return get()->type; }
    IRNodeType node_type() const { return get()->node_type; }
    /// The node as a T, or nullptr if it is another kind of node (or undefined).
    template <typename T>
    const T* as() const {
        if (get() && get()->node_type == T::kNodeType) return static_cast<const T*>(get());
        return nullptr;
    }
};

/// A handle to an immutable statement node.
class Stmt : public Ptr<StmtNode> {
public:
    Stmt() = default;
    Stmt(const StmtNode* n) : Ptr<StmtNode>(n) {}  // NOLINT
    IRNodeType node_type() const { return get()->node_type; }
    template <typename T>
    const T* as() const {
        if (get() && get()->node_type == T::kNodeType) return static_cast<const T*>(get());
        return nullptr;
    }
};

/// Hash and equality of handles by identity (for unordered containers keyed by node).
struct PtrHash {
    template <typename T>
    size_t operator()(const Ptr<T>& p) const {
        return std::hash<const void*>()(p.get());
    }
};
struct PtrEqual {
    template <typename T>
    bool operator()(const Ptr<T>& a, const Ptr<T>& b) const {
        return a.same_as(b);
    }
};

template <typename T>
struct ExprNodeBase : ExprNode {
    explicit ExprNodeBase(Type t) : ExprNode(T::kNodeType, t) {}
};
template <typename T>
struct StmtNodeBase : StmtNode {
    StmtNodeBase() : StmtNode(T::kNodeType) {}
};

// ---------------------------------------------------------------------------------------------
// Variables

/// A variable. Identity is the node itself; `name` only labels it for printing.
struct Variable : ExprNodeBase<Variable> {
    static constexpr IRNodeType kNodeType = IRNodeType::Variable;
    std::string name;
    Variable(std::string n, Type t) : ExprNodeBase(t), name(std::move(n)) {}
};

/// A handle to a Variable; usable wherever an Expr is. Each constructor call makes a new variable.
class Var : public Expr {
public:
    /// An undefined handle.
    Var() = default;
    /// A new variable named `name` (a label: it need not be unique).
    explicit Var(const std::string& name, Type t = Int(32));
    /// Wraps an existing Variable node (keeps its identity).
    explicit Var(const Variable* v) : Expr(v) {}
    const Variable* get() const { return static_cast<const Variable*>(Expr::get()); }
    const Variable* operator->() const { return get(); }
    const std::string& name() const { return get()->name; }
};

/// Half-open range [min, min + extent).
struct Range {
    Expr min;
    Expr extent;
    Range() = default;
    Range(Expr min_, Expr extent_) : min(std::move(min_)), extent(std::move(extent_)) {}
};

/// What an iteration variable iterates over.
enum class IterVarKind : uint8_t {
    DataPar,  ///< a data-parallel axis of a compute
    Reduce,   ///< a reduction axis
};

struct IterVarNode : RefCounted {
    Var var;
    Range dom;
    IterVarKind kind;
};

/// An iteration axis: a variable with its domain and kind. Identity by object.
class IterVar : public Ptr<IterVarNode> {
public:
    IterVar() = default;
    IterVar(Var var, Range dom, IterVarKind kind);
    const Var& var() const { return get()->var; }
    const Range& dom() const { return get()->dom; }
    IterVarKind kind() const { return get()->kind; }
};

// ---------------------------------------------------------------------------------------------
// Reducers, buffers, tensors

struct CommReducerNode : RefCounted {
    std::string name;
    std::vector<Var> lhs;        ///< accumulated values
    std::vector<Var> rhs;        ///< incoming values
    std::vector<Expr> result;    ///< combine(lhs, rhs), one per value
    std::vector<Expr> identity;  ///< identity element, one per value
};

/// A commutative, associative reducer with an identity, over one or more values (argmax: two).
class CommReducer : public Ptr<CommReducerNode> {
public:
    CommReducer() = default;
    CommReducer(std::string name, std::vector<Var> lhs, std::vector<Var> rhs,
                std::vector<Expr> result, std::vector<Expr> identity);
    size_t num_values() const { return get()->result.size(); }
};

/// Where a buffer lives.
enum class StorageScope : uint8_t {
    Global,  ///< device (or host) main memory
    Shared,  ///< GPU shared memory, one copy per thread block
    Local,   ///< registers / stack, one copy per thread
    Warp,    ///< tensor-core fragments: one copy per warp, spread over its lanes (ir/Fragment.h)
};
const char* scope_name(StorageScope s);

/// A shared buffer's XOR swizzle (Schedule::storage_swizzle; docs/schedule.md): the element at
/// flat offset o (sum of index * stride) is stored at apply(o) = o ^ (((o / span) % phases) *
/// vector), i.e. the 16-byte chunk number of o is XORed with its row's phase. The swizzle stays
/// inside each aligned block of vector * phases elements, and keeps o modulo vector.
struct BufferSwizzle {
    int64_t vector = 0;  ///< elements per 16-byte chunk, a power of two (0: no swizzle)
    int64_t span = 0;    ///< elements per phase (rows per phase times the row length)
    int64_t phases = 0;  ///< a power of two; span is a multiple of vector * phases
    bool defined() const { return vector > 0; }
    int64_t apply(int64_t o) const { return o ^ (((o / span) % phases) * vector); }
    bool operator==(const BufferSwizzle&) const = default;
};

struct BufferNode : RefCounted {
    Var data;                   ///< handle variable naming the storage
    Type dtype;                 ///< element type
    std::vector<Expr> shape;    ///< extents, outermost first
    std::vector<Expr> strides;  ///< element strides; empty means compact row-major
    Expr elem_offset;           ///< offset of element 0, in elements
    std::string name;
    StorageScope scope = StorageScope::Global;
    int alignment = 0;      ///< bytes the data pointer is known to be aligned to (0: element size)
    BufferSwizzle swizzle;  ///< storage_swizzle's layout (StorageFlatten applies it); shared only
};

/// A multi-dimensional view of memory, read by BufferLoad and written by BufferStore.
class Buffer : public Ptr<BufferNode> {
public:
    Buffer() = default;
    /// A compact row-major buffer with a fresh data variable.
    Buffer(std::string name, Type dtype, std::vector<Expr> shape,
           StorageScope scope = StorageScope::Global);
    explicit Buffer(const BufferNode* n) : Ptr<BufferNode>(n) {}
    const std::string& name() const { return get()->name; }
    Type dtype() const { return get()->dtype; }
    const std::vector<Expr>& shape() const { return get()->shape; }
};

/// What kind of operation produces a tensor.
enum class OpKind : uint8_t {
    Placeholder,  ///< an input: data supplied by the caller
    Compute,      ///< computed from other tensors (te::ComputeOpNode)
};

/// The producer of one or more tensors. The DSL's operation types derive from it (te/Operation.h).
struct OperationNode : RefCounted {
    OpKind kind;
    std::string name;
    explicit OperationNode(OpKind k, std::string n) : kind(k), name(std::move(n)) {}
};
using Operation = Ptr<OperationNode>;

struct TensorNode : RefCounted {
    Operation op;             ///< the producing operation
    int value_index = 0;      ///< which of op's outputs this is
    std::vector<Expr> shape;  ///< extents, outermost first
    Type dtype;
    std::string name;
};

/// A tensor of the tensor-expression DSL: one output of an Operation. Identity by object.
/// Indexing (`A(i, j)`) is part of the DSL (te/Tensor.cpp) and checks the index count and range.
class Tensor : public Ptr<TensorNode> {
public:
    Tensor() = default;
    explicit Tensor(const TensorNode* n) : Ptr<TensorNode>(n) {}
    const std::string& name() const { return get()->name; }
    Type dtype() const { return get()->dtype; }
    const std::vector<Expr>& shape() const { return get()->shape; }
    size_t ndim() const { return get()->shape.size(); }
    const Operation& op() const { return get()->op; }
    int value_index() const { return get()->value_index; }

    /// Reads this tensor at `indices` (a TensorRead). Throws DSLError naming the tensor on a
    /// wrong index count, a non-integer index, or a constant index out of range of a constant
    /// extent. Integer indices of another type are cast to the tensor's index dtype.
    Expr operator()(const std::vector<Expr>& indices) const;
    /// `A(i, j)`: each index is an Expr (or a C++ integer) or an IterVar (its variable); `S()`
    /// reads a 0-d tensor.
    template <typename... Args>
    requires((std::is_base_of_v<Expr, std::remove_cvref_t<Args>> ||
              std::is_convertible_v<Args, Expr> ||
              std::is_same_v<std::remove_cvref_t<Args>, IterVar>)&&...) Expr
    operator()(Args&&... indices) const {
        return (*this)(std::vector<Expr>{index_expr(std::forward<Args>(indices))...});
    }

private:
    static Expr index_expr(const IterVar& iv) {
        return iv.defined() ? static_cast<const Expr&>(iv.var()) : Expr();
    }
    static Expr index_expr(const Expr& e) { return e; }
};

/// True if `a` and `b` are the same output (operation identity and value_index) of one operation.
/// op_output makes a fresh handle per call, so tensors are never compared with `same_as`. A
/// tensor without an operation (IR-level tests) is identified by its node.
bool same_tensor(const Tensor& a, const Tensor& b);
/// Hash and equality of tensors by (operation, value_index), for unordered containers.
struct TensorHash {
    size_t operator()(const Tensor& t) const;
};
struct TensorEqual {
    bool operator()(const Tensor& a, const Tensor& b) const { return same_tensor(a, b); }
};

// ---------------------------------------------------------------------------------------------
// Expression nodes

/// A signed integer constant of type int8..int64 (or a bool constant, type bool: 0 or 1).
struct IntImm : ExprNodeBase<IntImm> {
    static constexpr IRNodeType kNodeType = IRNodeType::IntImm;
    int64_t value;
    IntImm(Type t, int64_t v) : ExprNodeBase(t), value(v) {}
    /// Checks the value fits the type (scalar int or bool); throws InternalError otherwise.
    static Expr make(Type t, int64_t value);
};

/// An unsigned integer constant of type uint8..uint64.
struct UIntImm : ExprNodeBase<UIntImm> {
    static constexpr IRNodeType kNodeType = IRNodeType::UIntImm;
    uint64_t value;
    UIntImm(Type t, uint64_t v) : ExprNodeBase(t), value(v) {}
    static Expr make(Type t, uint64_t value);
};

/// A float constant; `value` is already rounded to the type's precision.
struct FloatImm : ExprNodeBase<FloatImm> {
    static constexpr IRNodeType kNodeType = IRNodeType::FloatImm;
    double value;
    FloatImm(Type t, double v) : ExprNodeBase(t), value(v) {}
    static Expr make(Type t, double value);
};

/// Type conversion (see the semantics above for the rules).
struct Cast : ExprNodeBase<Cast> {
    static constexpr IRNodeType kNodeType = IRNodeType::Cast;
    Expr value;
    Cast(Type t, Expr v) : ExprNodeBase(t), value(std::move(v)) {}
    /// Lanes of `t` and `value` must agree.
    static Expr make(Type t, Expr value);
};

/// Binary arithmetic, min/max: both operands have the node's type.
template <typename T>
struct BinaryOpNode : ExprNodeBase<T> {
    Expr a, b;
    BinaryOpNode(Type t, Expr a_, Expr b_)
        : ExprNodeBase<T>(t), a(std::move(a_)), b(std::move(b_)) {}
    /// Both operands defined and of the same type; throws InternalError otherwise.
    static Expr make(Expr a, Expr b);
};

/// Comparisons: operands of one type, result bool with their lane count.
template <typename T>
struct CmpOpNode : ExprNodeBase<T> {
    Expr a, b;
    CmpOpNode(Type t, Expr a_, Expr b_) : ExprNodeBase<T>(t), a(std::move(a_)), b(std::move(b_)) {}
    static Expr make(Expr a, Expr b);
};

#define TESSEL_BINARY_NODE(T, Base)                            \
    struct T : Base<T> {                                       \
        static constexpr IRNodeType kNodeType = IRNodeType::T; \
        using Base<T>::Base;                                   \
    };
TESSEL_BINARY_NODE(Add, BinaryOpNode)
TESSEL_BINARY_NODE(Sub, BinaryOpNode)
TESSEL_BINARY_NODE(Mul, BinaryOpNode)
TESSEL_BINARY_NODE(Div, BinaryOpNode)       ///< ints: truncating; floats: true division
TESSEL_BINARY_NODE(Mod, BinaryOpNode)       ///< ints: truncating remainder; floats: fmod
TESSEL_BINARY_NODE(FloorDiv, BinaryOpNode)  ///< rounds toward -infinity
TESSEL_BINARY_NODE(FloorMod, BinaryOpNode)  ///< remainder with the divisor's sign
TESSEL_BINARY_NODE(Min, BinaryOpNode)
TESSEL_BINARY_NODE(Max, BinaryOpNode)
TESSEL_BINARY_NODE(EQ, CmpOpNode)
TESSEL_BINARY_NODE(NE, CmpOpNode)
TESSEL_BINARY_NODE(LT, CmpOpNode)
TESSEL_BINARY_NODE(LE, CmpOpNode)
TESSEL_BINARY_NODE(GT, CmpOpNode)
TESSEL_BINARY_NODE(GE, CmpOpNode)
TESSEL_BINARY_NODE(And, BinaryOpNode)  ///< operands are bool
TESSEL_BINARY_NODE(Or, BinaryOpNode)   ///< operands are bool
#undef TESSEL_BINARY_NODE

/// Logical negation of a bool.
struct Not : ExprNodeBase<Not> {
    static constexpr IRNodeType kNodeType = IRNodeType::Not;
    Expr a;
    Not(Type t, Expr a_) : ExprNodeBase(t), a(std::move(a_)) {}
    static Expr make(Expr a);
};

/// condition ? true_value : false_value, evaluating all three. The condition is bool with either
/// one lane or the values' lane count.
struct Select : ExprNodeBase<Select> {
    static constexpr IRNodeType kNodeType = IRNodeType::Select;
    Expr condition, true_value, false_value;
    Select(Type t, Expr c, Expr tv, Expr fv)
        : ExprNodeBase(t),
          condition(std::move(c)),
          true_value(std::move(tv)),
          false_value(std::move(fv)) {}
    static Expr make(Expr condition, Expr true_value, Expr false_value);
};

/// The vector base + i * stride, i in [0, lanes). base and stride are scalars of one type.
struct Ramp : ExprNodeBase<Ramp> {
    static constexpr IRNodeType kNodeType = IRNodeType::Ramp;
    Expr base, stride;
    int lanes;
    Ramp(Type t, Expr b, Expr s, int l)
        : ExprNodeBase(t), base(std::move(b)), stride(std::move(s)), lanes(l) {}
    static Expr make(Expr base, Expr stride, int lanes);
};

/// A scalar repeated `lanes` times.
struct Broadcast : ExprNodeBase<Broadcast> {
    static constexpr IRNodeType kNodeType = IRNodeType::Broadcast;
    Expr value;
    int lanes;
    Broadcast(Type t, Expr v, int l) : ExprNodeBase(t), value(std::move(v)), lanes(l) {}
    static Expr make(Expr value, int lanes);
};

/// `let var = value in body`.
struct Let : ExprNodeBase<Let> {
    static constexpr IRNodeType kNodeType = IRNodeType::Let;
    Var var;
    Expr value, body;
    Let(Type t, Var v, Expr val, Expr b)
        : ExprNodeBase(t), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
    static Expr make(Var var, Expr value, Expr body);
};

// clang-format off
/// Intrinsic functions: math (pure, lane-wise, float arguments unless said otherwise) and the
/// intrinsics later passes introduce. X(name, arity, pure).
#define TESSEL_FOR_EACH_INTRINSIC(X) \
    X(exp, 1, true) X(exp2, 1, true) X(log, 1, true) X(log2, 1, true) X(sqrt, 1, true)  \
    X(rsqrt, 1, true) X(tanh, 1, true) X(sigmoid, 1, true) X(erf, 1, true)               \
    X(sin, 1, true) X(cos, 1, true) X(pow, 2, true)                                      \
    X(abs, 1, true)          /* ints and floats */                                       \
    X(floor, 1, true) X(ceil, 1, true) X(round, 1, true) X(trunc, 1, true)               \
    X(fma, 3, true)          /* a * b + c, rounded once */                               \
    X(isnan, 1, true)        /* float -> bool */                                         \
    X(if_then_else, 3, true) /* lazy: only the taken branch is evaluated */              \
    X(likely, 1, true)       /* a bool hint for loop partitioning; value unchanged */    \
    X(swizzle, 4, true)      /* a swizzled shared-memory index; see below */             \
    X(thread_barrier, 0, false) /* __syncthreads(): every thread of the block */          \
    X(cp_async, 6, false)       /* an asynchronous global -> shared copy; see below */    \
    X(cp_async_commit, 0, false) /* closes this thread's group of cp_async copies */       \
    X(cp_async_wait, 1, false)  /* waits until at most n groups are in flight */          \
    X(thread_allreduce, -1, false) /* a cross-thread reduction; see below */             \
    X(mma_sync, -1, false) X(ldmatrix, 6, false) /* tensor cores; see below */          \
    X(fragment_load, 5, false) X(fragment_store, -1, false) X(fragment_fill, 4, false)     \
    X(dot_product, 6, false) /* a CPU dot-product instruction; see below */             \
    X(wgmma, 9, false) X(wgmma_fence, 0, false) /* Hopper's warp-group mma; see below */ \
    X(wgmma_commit, 0, false) X(wgmma_wait, 1, false) X(fence_proxy_async, 0, false)     \
    X(round_tf32, 1, true)   /* float32 rounded to tf32: 10 mantissa bits; see below */   \
    X(mbarrier_init, 3, false) X(mbarrier_expect_tx, 3, false) /* Hopper; see below */     \
    X(mbarrier_wait, 3, false) X(tma_load, -1, false)                                    \
    X(mbarrier_arrive, 2, false) X(setmaxnreg, 2, false) /* warp specialization */      \
    X(tma_store, -1, false) X(tma_store_wait, 0, false)  /* TMA's stores; see below */   \
    X(tile_arrive, 4, false) /* the last block to finish a tile; see below */
// clang-format on
// New intrinsics go at the end: structural hashes (ir/Hash.cpp), and with them the DAG hashes that
// key the tuning logs, shipped ones included, read an intrinsic's number.

// round_tf32(x) (float32): x rounded to the tensor cores' tf32 (its 10 leading mantissa bits, to
// nearest, ties away from zero, as cvt.rna.tf32.f32; infinities and NaN unchanged), as a float32.
// A float32 product whose operands are rounded so (op::matmul's allow_tf32) is what
// mma_m16n8k8_tf32 computes: tensorize takes the roundings into the mma.
//
// thread_allreduce(n, m, values[n], identity[n], lhs[n], rhs[n], result[n], dest[n], threads[m])
// is a statement (an Evaluate) that every thread of a block executes together, like a barrier:
//  - n (int32 constant): the number of values reduced together (argmax: 2, value and index);
//  - values: this thread's contributions; identity: the combiner's identity elements;
//  - lhs, rhs (Variables) and result: the combiner, result[v] = combine(lhs, rhs)[v]; the call
//    binds lhs and rhs in result only (they are defined nowhere else);
//  - dest (handle Variables of allocated buffers): where each thread receives the reduced value v,
//    at element 0 of dest[v];
//  - threads (the m loop variables of threadIdx-bound loops enclosing the call): the participating
//    thread axes. Threads that agree on every other thread axis form one group; every thread of
//    a group receives identity combined with the values of the group's threads in increasing
//    order of their indices along `threads` (the first listed axis varying slowest). The combiner
//    is commutative and associative, so any order gives the same result up to float rounding.
// Its result (int32 0) is meaningless. A CPU backend refuses it; the SPMD loop interpreter runs it.
//
// Asynchronous copies (CUDA's cp.async, sm_80+), statements (Evaluate) of a thread-bound nest:
//  - cp_async(dst, dst_index, src, src_index, bytes, src_bytes): dst (a shared buffer) and src
//    (a global one) are handle Variables of buffers of one element type; the indices count
//    elements of that type. Starts copying `bytes` (4, 8 or 16, a constant) from src to dst:
//    the first `src_bytes` (an int32 expression, 0 <= src_bytes <= bytes, a multiple of the
//    element size) come from src, the rest are zeros (src_bytes 0: a zero fill that reads
//    nothing, for padded tiles). The elements of dst are *in flight* until the copy lands; the
//    source may be read any time before. A copy of 16 bytes needs both addresses aligned to 16,
//    of 8 to 8.
//  - cp_async_commit(): closes the calling thread's open group of copies (an empty group too).
//  - cp_async_wait(n) (n a non-negative constant): lands every committed group of the calling
//    thread but the newest n. Copies land in the thread that issued them; a barrier after the
//    wait makes them visible to the block. Reading or writing an element in flight is a race.
// swizzle(o, vector, span, phases): the flat index o (a non-negative integer, scalar or vector)
// of a swizzled buffer's element, stored at o ^ (((o / span) % phases) * vector) (BufferSwizzle;
// vector, span and phases positive integer constants, vector and phases powers of two, span a
// multiple of vector * phases). StorageFlatten emits it; it is an expression of o's type.
// Tensor-core intrinsics (statements, int32 0, GPU only) name tiles of buffers by *tile operands*:
// a pair of Loads (origin, next row; BufferLoads before storage flattening) whose buffer is the
// tile's buffer, whose first index is the flat index of the tile's first element and whose second
// is that of the element one row below (their difference is the row stride; columns are
// contiguous). A Load in a tile operand is not a read. Tiles of "warp"-scope buffers are fragments
// (ir/Fragment.h): all lanes of a warp name the same fragment, and the buffer's logical row length
// is the row stride. In a swizzled buffer both indices are swizzle calls with the same constants,
// each possibly plus whole phase cycles (span * phases) outside the call, as the simplifier moves
// them out (lower/StorageFlatten.h, unswizzled_index): the row stride is the difference of their
// unswizzled offsets, and element (r, c) of the tile is at swizzle(origin + r * stride + c) (each
// lane applies the swizzle to its own addresses).
//  - mma_sync(D, D', A, A', B, B', C, C'[, kind_b]): a warp-collective D = A * B + C
//    (mma.sync.aligned, row.col, float32 accumulation). A and B are float16 (m16n8k16), bfloat16
//    (m16n8k16) or float32 rounded to tf32 (m16n8k8) fragments of kinds A16/B16 or A8/B8; C and D
//    float32 C fragments (D may be C). kind_b (optional, an int32 FragmentKind constant) says
//    how B's warp buffer is indexed: B16T for a 16-bit B in a buffer indexed [n][k] (its tile
//    operand then runs along n), B16 or B8 (the default) for [k][n].
//  - ldmatrix(kind, trans, D, D', S, S'): a warp-collective load of a 16-bit A16, B16 or B16x2
//    fragment D from a shared-memory tile S (ldmatrix.sync.aligned.m8n8.x4 for A16 and B16x2,
//    .x2 for B16). A16: S is the fragment's rows x cols (trans = 0). B16, B16x2 (k x n): with
//    trans = 1 (.trans) S is k-major, the fragment's rows x cols; with trans = 0 S is n-major,
//    its cols x rows.
//  - fragment_load(kind, D, D', S, S'): each lane loads its elements of fragment D from tile S
//    (any scope, same element type), plain loads.
//  - fragment_store(kind, D, D', S, S'[, rows, cols]): each lane stores its elements of fragment
//    S into tile D (any scope; converted to D's element type). With rows and cols (int32
//    expressions, a tile at the edge of its tensor) only the elements (r, c) with r < rows and
//    c < cols are stored; D' may then name a row past the buffer's end.
//  - fragment_fill(kind, D, D', value): each lane sets its elements of fragment D to value.
// `kind` is an int32 constant, a FragmentKind (ir/Fragment.h).
//
// The CPU dot-product instructions (AVX512-VNNI / AVX-VNNI vpdpbusd, AVX512-BF16 vdpbf16ps), a
// statement (an Evaluate, int32 0) of any loop nest:
//  - dot_product(lanes, group, C, A, B, B'): for each j < lanes,
//      C[j] += sum over q < group of wide(A[q]) * wide(B[j * stride + q])
//    where C is `lanes` contiguous accumulators from the Load C (int32, or float32), A `group`
//    contiguous elements from the Load A, and B, B' a tile operand (above) of `lanes` rows of
//    `group` elements (its row stride B' - B; the instructions want it equal to `group`). The
//    element types: C int32 with A uint8 and B int8 (vpdpbusd: group 4; the sums wrap around as
//    int32), or C float32 with A and B bfloat16 (vdpbf16ps: group 2; each product is exact in
//    float32 and added to C in order q = 0, 1, rounding each time). `lanes` and `group` are
//    int32 constants. Code generators use the instruction where the target has it and
//    equivalent vector arithmetic elsewhere.
//
// Hopper's warp-group matrix multiply (wgmma.mma_async, sm_90a), statements of a GPU kernel:
//  - wgmma(D, D', A, A', B, B', Bp, n, b_mn): D += A * B with float32 accumulation, issued
//    asynchronously by the 4 warps of a warp group (warps 4g .. 4g + 3 of the block, each
//    threadIdx.x a lane) together. Each warp names its own share: D, D' a tile operand of a
//    float32 "warp" buffer, the warp's 16 x n slice of the group's 64 x n result as n / 8 C
//    fragments (ir/Fragment.h); A, A' the warp's 16 x 16 tile of a float16 or bfloat16 shared
//    buffer, k-major (rows of the swizzle's width, see below); B, B' the group's 16 x n tile
//    (k x n when b_mn = 1, each row one k, rows running along n in panels; n x k, k-major, when
//    b_mn = 0). Bp: B's element at column w (the panel width, w = B's row stride) when b_mn = 1
//    and n > w, else B again: panel p of B starts at B + p * (Bp - B). The warps of a group name
//    the consecutive 16-row slices of one 64 x 16 tile of A (warp 4g + r at row 16 r) and the
//    same B. The shared operands are swizzled with the hardware's pattern (storage_swizzle with
//    bits 3 on rows of 32, 64 or 128 bytes, the row width w the swizzle's) and 1024-byte aligned
//    buffers; the instruction reads them from the buffers' storage through matrix descriptors.
//    n (8 to 256, a multiple of 8) and b_mn (0 or 1) are int32 constants.
//  - wgmma_fence(): orders this thread's register writes (an accumulator's fill) and shared
//    stores before the wgmmas that follow (wgmma.fence).
//  - wgmma_commit(): closes the warp group's open group of wgmmas (wgmma.commit_group).
//  - wgmma_wait(n): waits until at most n committed groups are pending (wgmma.wait_group): their
//    accumulators are then written and their shared operands read. Until then reading or
//    writing a pending accumulator, or writing a shared element a pending wgmma reads, races.
//  - fence_proxy_async(): makes this thread's shared-memory writes by ordinary stores (and
//    cp.async) visible to the asynchronous proxy (wgmma, TMA) once a barrier follows
//    (fence.proxy.async.shared::cta).
//
// Hopper's transaction barriers and bulk tensor copies (sm_90), statements of a GPU kernel. `bar`
// is the handle Variable of a shared uint64 buffer, one mbarrier an element, `index` its element:
//  - mbarrier_init(bar, index, count): one thread sets the barrier up for `count` arrivals a
//    phase (phase 0 pending). A barrier of the block must follow before another thread uses it.
//  - mbarrier_expect_tx(bar, index, bytes): arrives once on the barrier and announces `bytes`
//    more bytes for its current phase (mbarrier.arrive.expect_tx). A phase completes when all
//    its arrivals are in and every announced byte has landed.
//  - mbarrier_wait(bar, index, parity): waits until the phase of parity `parity` (0 or 1) has
//    completed (mbarrier.try_wait.parity in a loop): the data copies counted on that phase then
//    are visible to the waiting thread.
//  - tma_load(dst, dst_index, src, bar, index, swizzle, rank, box[rank], coords[rank]): one
//    thread starts a bulk tensor copy (cp.async.bulk.tensor, TMA) of a box of the global tensor
//    `src` (a kernel argument; rank 1 to 5 dimensions, its shape and compact strides) into the
//    shared buffer `dst` from element dst_index on, whose bytes complete on barrier (bar, index).
//    box (int32 constants) and coords (int32 expressions) list the dimensions innermost first:
//    the box's element (e_0, .., e_{r-1}) is src's element at coords + e (zero where that is
//    outside the tensor) and lands at dense offset e_0 + box_0 * (e_1 + box_1 * (...)) from
//    dst_index, that offset swizzled as BufferSwizzle{16 / size, 128 / size, swizzle / 16} does
//    when `swizzle` (an int32 constant: 0, 32, 64 or 128 bytes, the rows' width) is not 0.
//    dst_index is a multiple of 128 bytes (of the swizzle's 8-row cycle when swizzled).
//  - mbarrier_arrive(bar, index): arrives once on the barrier (mbarrier.arrive, release
//    semantics): the calling thread's memory accesses before it happen before whatever a thread
//    that waits for the phase (mbarrier_wait) does after its wait. Warp-specialized pipelines
//    (Schedule::warp_specialize) release a consumed copy of their tiles with it.
//  - tma_store(src, src_index, dst, swizzle, rank, box[rank], coords[rank]): one thread starts
//    a bulk tensor copy (cp.async.bulk.tensor, bulk_group completion) of a box of the shared
//    buffer `src` from element src_index on, laid out as tma_load's destination, into the global
//    tensor `dst` (a kernel argument) at coords: the box's element e is stored at dst's element
//    coords + e, and not at all where that is outside the tensor. Every thread that wrote an
//    element of the box must have made its writes visible to the asynchronous proxy
//    (fence_proxy_async, then a barrier of the block) before.
//  - tma_store_wait(): closes the calling thread's group of tma_stores and waits until they have
//    read their shared boxes (cp.async.bulk.commit_group, cp.async.bulk.wait_group.read 0): the
//    boxes may be written again after it (their global writes complete by the kernel's end).
//
// tile_arrive(counter, tile, count, last) (a GPU kernel's statement that every thread of the
// block executes together, like a barrier; reverse_compute_at makes it, lower/ScheduleOps.cpp):
// the block's writes to global memory before it, every thread's, are made visible to the whole
// device; then the block arrives once on element `tile` (an int32 expression) of `counter`, the
// handle Variable of a global int32 buffer that is zero between calls (its Allocate's body an
// AttrStmt "zeroed_workspace" naming it). The block whose arrival is the `count`-th (an int32
// constant) sets the element back to zero, sees every write the arriving blocks made before
// their arrivals, and each of its threads receives 1 at element 0 of `last` (the handle Variable
// of a local int32 buffer); every other block's threads receive 0. So the last block to finish
// its part of a tile can combine the parts.
//
// setmaxnreg(count, increase) (sm_90a, a statement every thread of a warp group executes
// together): the warp group's registers a thread become `count` (an int32 constant, a multiple
// of 8 in 24..256), taken from (increase = 1) or given back to (increase = 0) the block's pool
// (setmaxnreg.inc / .dec). The kernel must declare its register count at entry (CUDA code
// generation gives it __launch_bounds__(threads, 1)). The interpreter runs it as a no-op.

enum class Intrinsic : uint8_t {
#define TESSEL_INTRINSIC_ENUM(name, arity, pure) name,
    TESSEL_FOR_EACH_INTRINSIC(TESSEL_INTRINSIC_ENUM)
#undef TESSEL_INTRINSIC_ENUM
};

/// Name ("exp"), argument count (-1: variadic, as thread_allreduce) and purity of an intrinsic.
const char* intrinsic_name(Intrinsic op);
int intrinsic_arity(Intrinsic op);
bool intrinsic_is_pure(Intrinsic op);
/// Looks an intrinsic up by name; returns false if there is none.
bool intrinsic_from_name(const std::string& name, Intrinsic* out);
/// Whether the intrinsic is a statement of its own (an Evaluate), never a value inside an
/// expression: the impure ones (barriers, asynchronous copies, cross-thread reductions, the
/// tensor-core operations). Code generators and the evaluators refuse it anywhere else.
bool is_statement_intrinsic(Intrinsic op);
/// mma_sync, ldmatrix, fragment_load, fragment_store, fragment_fill: statements of a GPU kernel.
bool is_tensor_core_intrinsic(Intrinsic op);
/// Whether every lane of a warp executes the intrinsic together (mma_sync, ldmatrix; wgmma,
/// which the 4 warps of a warp group execute together).
bool is_warp_collective(Intrinsic op);

/// A call to an intrinsic. Its type is the result type (e.g. bool for isnan, the branches' type
/// for if_then_else, int32 for thread_barrier).
struct Call : ExprNodeBase<Call> {
    static constexpr IRNodeType kNodeType = IRNodeType::Call;
    Intrinsic op;
    std::vector<Expr> args;
    Call(Type t, Intrinsic o, std::vector<Expr> a) : ExprNodeBase(t), op(o), args(std::move(a)) {}
    /// Checks arity and argument types and derives the result type.
    static Expr make(Intrinsic op, std::vector<Expr> args);
};

/// An element of a DSL tensor, before lowering turns it into a BufferLoad.
struct TensorRead : ExprNodeBase<TensorRead> {
    static constexpr IRNodeType kNodeType = IRNodeType::TensorRead;
    Tensor tensor;
    std::vector<Expr> indices;
    TensorRead(Type t, Tensor ten, std::vector<Expr> idx)
        : ExprNodeBase(t), tensor(std::move(ten)), indices(std::move(idx)) {}
    /// Checks the index count and that indices are scalar integers (InternalError otherwise;
    /// the DSL reports user errors before calling this).
    static Expr make(Tensor tensor, std::vector<Expr> indices);
};

/// A reduction: combine `source` over every point of `axis` where `condition` holds, starting
/// from the combiner's identity; the value is output `value_index` of the combiner.
struct Reduce : ExprNodeBase<Reduce> {
    static constexpr IRNodeType kNodeType = IRNodeType::Reduce;
    CommReducer combiner;
    std::vector<Expr> source;  ///< one per combiner value
    std::vector<IterVar> axis;
    Expr condition;  ///< bool; `true` when there is none
    int value_index;
    Reduce(Type t, CommReducer c, std::vector<Expr> s, std::vector<IterVar> ax, Expr cond, int vi)
        : ExprNodeBase(t),
          combiner(std::move(c)),
          source(std::move(s)),
          axis(std::move(ax)),
          condition(std::move(cond)),
          value_index(vi) {}
    static Expr make(CommReducer combiner, std::vector<Expr> source, std::vector<IterVar> axis,
                     Expr condition, int value_index);
};

/// A flat load from a buffer variable, indexed in elements. A vector index loads one element per
/// lane; `predicate` (optional, bool with the index's lanes) masks lanes off (they read as 0).
struct Load : ExprNodeBase<Load> {
    static constexpr IRNodeType kNodeType = IRNodeType::Load;
    Var buffer_var;
    Expr index;
    Expr predicate;
    Load(Type t, Var b, Expr i, Expr p)
        : ExprNodeBase(t), buffer_var(std::move(b)), index(std::move(i)), predicate(std::move(p)) {}
    /// `type`: element type with the index's lanes.
    static Expr make(Type type, Var buffer_var, Expr index, Expr predicate = Expr());
};

/// A multi-dimensional load through a Buffer (before storage flattening).
struct BufferLoad : ExprNodeBase<BufferLoad> {
    static constexpr IRNodeType kNodeType = IRNodeType::BufferLoad;
    Buffer buffer;
    std::vector<Expr> indices;
    BufferLoad(Type t, Buffer b, std::vector<Expr> i)
        : ExprNodeBase(t), buffer(std::move(b)), indices(std::move(i)) {}
    /// The type is the buffer's dtype with the lanes of the (last vector) index.
    static Expr make(Buffer buffer, std::vector<Expr> indices);
};

// ---------------------------------------------------------------------------------------------
// Statement nodes

/// `let var = value` over body.
struct LetStmt : StmtNodeBase<LetStmt> {
    static constexpr IRNodeType kNodeType = IRNodeType::LetStmt;
    Var var;
    Expr value;
    Stmt body;
    static Stmt make(Var var, Expr value, Stmt body);
};

/// An annotation over a statement: `key` names it (e.g. "pragma_unroll"), `value` carries data.
struct AttrStmt : StmtNodeBase<AttrStmt> {
    static constexpr IRNodeType kNodeType = IRNodeType::AttrStmt;
    std::string key;
    Expr value;
    Stmt body;
    static Stmt make(std::string key, Expr value, Stmt body);
};

/// Fails with RuntimeError(message) when condition is false (bounds-check mode inserts these).
struct AssertStmt : StmtNodeBase<AssertStmt> {
    static constexpr IRNodeType kNodeType = IRNodeType::AssertStmt;
    Expr condition;
    std::string message;
    static Stmt make(Expr condition, std::string message);
};

/// How a loop's iterations are executed.
enum class ForKind : uint8_t {
    Serial,       ///< one after another, in increasing order
    Parallel,     ///< on CPU threads; iterations must be independent
    Vectorized,   ///< as vector lanes (VectorizeLoops removes these loops)
    Unrolled,     ///< fully unrolled (UnrollLoops removes these loops)
    ThreadBound,  ///< mapped to a GPU thread or block index named by thread_tag
};
const char* for_kind_name(ForKind k);

/// `for loop_var in [min, min + extent): body`.
struct For : StmtNodeBase<For> {
    static constexpr IRNodeType kNodeType = IRNodeType::For;
    Var loop_var;
    Expr min, extent;
    ForKind kind = ForKind::Serial;
    std::string thread_tag;  ///< "blockIdx.x", "threadIdx.y", "vthread" ... for ThreadBound
    Stmt body;
    /// min and extent are scalar integers of the loop variable's type.
    static Stmt make(Var loop_var, Expr min, Expr extent, ForKind kind, Stmt body,
                     std::string thread_tag = "");
};

/// A flat store, indexed in elements; see Load for vector indices and predicate.
struct Store : StmtNodeBase<Store> {
    static constexpr IRNodeType kNodeType = IRNodeType::Store;
    Var buffer_var;
    Expr value, index, predicate;
    static Stmt make(Var buffer_var, Expr value, Expr index, Expr predicate = Expr());
};

/// A multi-dimensional store through a Buffer.
struct BufferStore : StmtNodeBase<BufferStore> {
    static constexpr IRNodeType kNodeType = IRNodeType::BufferStore;
    Buffer buffer;
    Expr value;
    std::vector<Expr> indices;
    static Stmt make(Buffer buffer, Expr value, std::vector<Expr> indices);
};

/// Allocates storage for buffer_var (the product of `extents` elements of dtype) in `scope`,
/// live over body.
struct Allocate : StmtNodeBase<Allocate> {
    static constexpr IRNodeType kNodeType = IRNodeType::Allocate;
    Var buffer_var;
    Type dtype;
    std::vector<Expr> extents;
    StorageScope scope = StorageScope::Global;
    Stmt body;
    static Stmt make(Var buffer_var, Type dtype, std::vector<Expr> extents, StorageScope scope,
                     Stmt body);
};

/// Statements executed in order.
struct Seq : StmtNodeBase<Seq> {
    static constexpr IRNodeType kNodeType = IRNodeType::Seq;
    std::vector<Stmt> stmts;
    /// Flattens nested Seqs; a single statement is returned as is.
    static Stmt make(std::vector<Stmt> stmts);
};

/// `if condition: then_case else: else_case` (else_case may be undefined).
struct IfThenElse : StmtNodeBase<IfThenElse> {
    static constexpr IRNodeType kNodeType = IRNodeType::IfThenElse;
    Expr condition;
    Stmt then_case, else_case;
    static Stmt make(Expr condition, Stmt then_case, Stmt else_case = Stmt());
};

/// Evaluates an expression for its effect (e.g. a barrier call).
struct Evaluate : StmtNodeBase<Evaluate> {
    static constexpr IRNodeType kNodeType = IRNodeType::Evaluate;
    Expr value;
    static Stmt make(Expr value);
};

// ---------------------------------------------------------------------------------------------
// Constants

/// A constant of type t (any scalar or vector type except handle; vectors are Broadcasts).
/// Integers wrap to t's width; floats are rounded to t's precision.
Expr make_const(Type t, int64_t value);
Expr make_const(Type t, double value);
/// `make_const(t, 3)`: an int literal (otherwise ambiguous between the two overloads above).
inline Expr make_const(Type t, int value) {
    return make_const(t, int64_t(value));
}
inline Expr make_zero(Type t) {
    return make_const(t, int64_t(0));
}
inline Expr make_one(Type t) {
    return make_const(t, int64_t(1));
}
Expr const_true(int lanes = 1);
Expr const_false(int lanes = 1);

/// The value of an integer or bool constant (IntImm, UIntImm fitting int64, or a Broadcast of
/// one), or nothing if `e` is not one.
std::optional<int64_t> as_const_int(const Expr& e);
/// True if `e` is the integer constant `value`.
bool is_const_int(const Expr& e, int64_t value);
/// The value of a float constant (or a Broadcast of one), or nothing.
std::optional<double> as_const_float(const Expr& e);
inline bool is_zero(const Expr& e) {
    return is_const_int(e, 0);
}
inline bool is_one(const Expr& e) {
    return is_const_int(e, 1);
}

/// Rounds a double to the precision of a float type (float16/bfloat16/float32/float64).
double round_to_float_type(double v, Type t);
/// Wraps an integer to the width and signedness of an integer or bool type.
int64_t wrap_to_int_type(int64_t v, Type t);

}  // namespace tessel
