// The loop-IR interpreter's machinery (the public API is include/tessel/lower/LoopInterpreter.h).
//
// LoopInterpreter.cpp executes statements; LoopInterpreterMemory.cpp holds storage, the
// bounds-checked element accesses and the parallel race detector; LoopInterpreterSPMD.cpp runs
// thread-bound loop nests as SPMD programs (one interpreter per simulated thread, all threads of
// a block advancing in phases between barriers) with the shared-memory race detector.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessel/HostArray.h"
#include "tessel/ir/ExprEval.h"
#include "tessel/ir/Fragment.h"
#include "tessel/ir/IR.h"
#include "tessel/lower/LoopInterpreter.h"

namespace tessel::internal {

/// The memory behind one buffer variable: a caller's array or an Allocate's own.
struct InterpStorage {
    HostArray* array = nullptr;        ///< Native; elements of the storage's dtype
    std::unique_ptr<HostArray> owned;  ///< set for allocations
    std::string name;                  ///< for messages: the buffer's or the variable's name
    uint64_t serial = 0;               ///< creation order (storage made inside a parallel loop is
                                       ///< private to its iteration)
    bool shared = false;               ///< shared memory of an SPMD block (race-checked)
    bool warp = false;                 ///< a lane's share of a "warp" buffer (registers)
};

/// Elements per storage in a race-detector key (storage serial in the bits above).
constexpr int kElementBits = 40;
/// The race detectors' key of element `flat` of the storage with serial `serial`.
inline uint64_t element_key(uint64_t serial, int64_t flat) {
    return (serial << kElementBits) | static_cast<uint64_t>(flat);
}

struct SpmdBlock;  // LoopInterpreterSPMD.cpp
struct SpmdThread;

/// The elements in flight (the destinations of cp_async copies not landed yet), by element key
/// (storage serial, flat index), with the thread that issued each (nullptr outside a block).
using InFlightMap = std::unordered_map<uint64_t, const SpmdThread*>;

/// One element of a cp_async copy in flight: where it lands and the value it brings (the source
/// is read when the copy is issued).
struct InFlightElement {
    InterpStorage* dst = nullptr;
    int64_t flat = 0;
    Type elem;
    Scalar value;
};

/// A warp-collective tensor-core intrinsic (mma_sync, ldmatrix) run once for a whole warp:
/// `in[lane]` is what each lane read when it arrived, the result what each lane writes
/// (LoopInterpreterTensorCore.cpp).
std::vector<std::vector<double>> warp_collective(const Call* op,
                                                 const std::vector<std::vector<double>>& in);

/// "thread (x, y, z)" for messages ("this thread" outside a block).
std::string thread_label(const SpmdThread* t);

/// The asynchronous proxy in a block (LoopInterpreterTensorCore.cpp, LoopInterpreterTma.cpp):
/// the shared elements that pending wgmmas read (key → the reading thread), those ordinary
/// stores (and landed cp.async copies) wrote since their writer's last fence_proxy_async (key →
/// the writer), and those tma_stores read.
struct WgmmaBlockState {
    bool active = false;  ///< the block's body issues wgmma or tma_store (the tracking is on)
    std::unordered_map<uint64_t, const SpmdThread*> pending_reads;
    std::unordered_map<uint64_t, const SpmdThread*> unfenced;
    /// Shared elements tma_stores read until their issuer's tma_store_wait (key → the issuer).
    std::unordered_map<uint64_t, const SpmdThread*> store_reads;
};

/// One mbarrier of a block (LoopInterpreterTma.cpp): its arrivals a phase, those still
/// pending in the current phase, the bytes announced and not landed, the phases completed.
struct MbarrierState {
    int64_t count = 0, pending = 0, tx = 0, phase = 0;
    int64_t init_epoch = 0;  ///< the block phase (barriers so far) of its init
    const SpmdThread* init_by = nullptr;
    std::vector<uint64_t> bringing;  ///< elements TMA copies bring in the current phase
    /// Arrivals of the current phase (thread index, that thread's arrivals so far, this one
    /// included), then of each completed phase: a thread that waits for a phase is ordered after
    /// the accesses each arriving thread made before its arrival.
    std::vector<std::pair<int, int64_t>> arrivals;
    std::vector<std::vector<std::pair<int, int64_t>>> completed_arrivals;
};

/// An element of shared memory a TMA copy brought or brings: the barrier and phase it completes
/// on, and its value until it lands.
struct TmaElement {
    uint64_t bar = 0;
    int64_t phase = 0;
    bool landed = false;
    InterpStorage* dst = nullptr;
    int64_t flat = 0;
    Type elem;
    Scalar value;
    const SpmdThread* issuer = nullptr;
};

/// A block's mbarriers and TMA copies, by element key.
struct TmaBlockState {
    std::unordered_map<uint64_t, MbarrierState> barriers;
    std::unordered_map<uint64_t, TmaElement> elements;
    int64_t epoch = 0;  ///< block-wide barriers passed
};

/// What a simulated GPU thread knows about itself (the interpreter of one thread of a block).
struct SpmdThread {
    SpmdBlock* block = nullptr;
    int index = 0;                                     ///< linear: x fastest
    int64_t tid[3] = {0, 0, 0};                        ///< threadIdx.x, .y, .z
    std::unordered_map<const Variable*, int> axis_of;  ///< threadIdx loop variable → 0, 1, 2
    std::unordered_map<const Allocate*, int64_t> allocations;  ///< shared Allocates executed
    InFlightMap* in_flight = nullptr;  ///< the block's elements in flight (cp_async)
    WgmmaBlockState* wgmma = nullptr;  ///< the block's wgmma state
    TmaBlockState* tma = nullptr;      ///< the block's mbarriers and TMA copies
    /// Per mbarrier: the phases this thread has seen complete (its mbarrier_waits).
    std::unordered_map<uint64_t, int64_t> observed;
    /// mbarrier arrivals this thread has made, and per other thread (by index) how many of its
    /// arrivals this thread is ordered after (through the phases it waited for).
    int64_t arrivals = 0;
    std::unordered_map<int, int64_t> acquired;
    std::unordered_map<const Call*, int64_t> collectives;  ///< warp-collective calls executed
};

/// What a buffer variable refers to right now (nullptr: not allocated or bound here).
struct BufferSlot {
    const Variable* var = nullptr;
    InterpStorage* storage = nullptr;
};

/// A Buffer's shape, strides (always filled: compact row-major when the buffer has none) and
/// element offset, evaluated once per run.
struct BufferLayout {
    const BufferNode* node = nullptr;
    std::vector<int64_t> shape, strides;
    int64_t elem_offset = 0;
};

/// An enclosing loop and its variable's current value, for error messages.
struct LoopFrame {
    const Variable* var = nullptr;
    int64_t value = 0;
};

/// A Parallel loop being checked for races: who touched which element of outside storage.
struct ParallelFrame {
    const For* loop = nullptr;
    uint64_t first_private_serial = 0;  ///< storage with this serial or later is iteration-private
    int64_t iteration = 0;
    std::unordered_map<uint64_t, int64_t> writer;  ///< (serial, element) key → writing iteration
    std::unordered_map<uint64_t, int64_t> reader;  ///< key → reading iteration (-1: several)
};

/// Executes statements of the loop IR (see the public header for the semantics).
class LoopInterpreter {
public:
    explicit LoopInterpreter(const LoopInterpreterOptions& options);
    virtual ~LoopInterpreter() = default;
    LoopInterpreter(const LoopInterpreter&) = delete;
    LoopInterpreter& operator=(const LoopInterpreter&) = delete;

    /// Binds buffer variable `var` to `array` (Native) for the whole run; `name` labels messages.
    void bind_buffer(const Var& var, HostArray* array, const std::string& name);
    /// Binds a free scalar variable.
    void bind_scalar(const Var& var, Value value) { eval_.bind(var, std::move(value)); }
    /// Evaluates a scalar integer expression under the current bindings.
    int64_t eval_int(const Expr& e, const char* what);
    /// The evaluator (to look bindings up).
    ExprEvaluator& evaluator() { return eval_; }
    /// Executes `s`.
    void run(const Stmt& s) { exec(s); }

protected:
    void exec(const Stmt& s);
    void exec_for(const For* op);
    /// Runs a loop's iterations in order; `par` (optional) is told the current iteration.
    void exec_serial(const For* op, int64_t min, int64_t extent, ParallelFrame* par);
    void exec_parallel(const For* op, int64_t min, int64_t extent);
    /// Thread-bound loops: outside a block, launches the kernel (blockIdx loops run their blocks
    /// one after another, each block SPMD); inside a block, the calling thread's own iteration.
    virtual void exec_thread_bound(const For* op, int64_t min, int64_t extent);
    /// A thread_barrier() Evaluate: waits for every thread of the block (a no-op outside one).
    virtual void exec_barrier();
    /// A thread_allreduce Evaluate (see ir/IR.h).
    void exec_allreduce(const Call* op);
    /// A tile_arrive Evaluate (see ir/IR.h): a barrier of the block, then one arrival for it.
    void exec_tile_arrive(const Call* op);
    /// Runs `body` as one block of threads (LoopInterpreterSPMD.cpp).
    void run_block(const Stmt& body);
    /// The storage of a shared Allocate in this thread's block, made by its first thread.
    InterpStorage* shared_storage(const Allocate* op, int64_t size);
    void track_shared(const InterpStorage& s, int64_t flat, bool write);
    void exec_let(const LetStmt* op);
    void exec_assert(const AssertStmt* op);
    void exec_if(const IfThenElse* op);
    void exec_evaluate(const Evaluate* op);
    /// A buffer whose body is an AttrStmt "zeroed_workspace" naming it starts zero.
    void exec_allocate(const Allocate* op);
    void exec_store(const Store* op);
    void exec_buffer_store(const BufferStore* op);
    void count_step();
    // Asynchronous copies (LoopInterpreterAsyncCopy.cpp).
    void exec_cp_async(const Call* op);
    void exec_cp_async_wait(int64_t n);
    /// The elements in flight where this thread runs: its block's, or its own outside a block.
    InFlightMap& in_flight() { return spmd_ ? *spmd_->in_flight : own_in_flight_; }
    /// Throws when element `flat` of `s` is in flight (a read or plain write of it races). In a
    /// block only shared storage can be (its serials are the block's own, apart from others').
    void check_in_flight(const InterpStorage& s, int64_t flat, bool write);

    // Hopper's mbarriers and TMA copies (LoopInterpreterTma.cpp; ir/IR.h).
    void exec_mbarrier(const Call* op);
    void exec_tma_load(const Call* op);
    void exec_tma_store(const Call* op);
    void exec_tma_store_wait();
    /// A tma_load's (`load`) or tma_store's shared operand (its first argument) and global one
    /// (its third), checked to be those.
    std::pair<InterpStorage*, InterpStorage*> tma_operands(const Call* op, bool load);
    /// The box of a tma_load or tma_store (`op`, its swizzle argument at `at`) between shared
    /// `smem` and global `gmem`: per element, its shared storage index (swizzled) and its index
    /// in `gmem`, row-major (-1 outside the tensor).
    std::vector<std::pair<int64_t, int64_t>> tma_box(const Call* op, size_t at,
                                                     const InterpStorage& smem,
                                                     const InterpStorage& gmem);
    /// The mbarrier (bar, index) named by a call's first two arguments, and its key.
    std::pair<MbarrierState*, uint64_t> mbarrier_of(const Call* op, bool init);
    /// Lands the barrier's copies and starts its next phase when the current one is complete.
    void complete_phase(MbarrierState& st, uint64_t key);
    /// One arrival of this thread on the barrier's current phase (mbarrier_arrive, or
    /// mbarrier_expect_tx's): its accesses so far are ordered before the phase's waiters.
    void arrive(const Call* op, MbarrierState& st, uint64_t key);
    /// Whether the phase of `parity` of the barrier has completed (mbarrier.try_wait.parity).
    static bool phase_done(const MbarrierState& st, int64_t parity) {
        return st.phase % 2 != parity;
    }
    /// Stops this thread until the barrier's phase of `parity` completes (LoopInterpreterSPMD).
    void wait_for_mbarrier(const Call* op, uint64_t key, int64_t parity);
    /// The TMA checks of an access to element `flat` of shared `s`.
    void check_tma_access(const InterpStorage& s, int64_t flat, bool write);
    /// Throws when a thread other than this one read the element since the last barrier (a
    /// copy into it would race with the read).
    void check_unread(const InterpStorage& s, int64_t flat, const char* what);

    // Tensor cores (LoopInterpreterTensorCore.cpp; ir/IR.h).
    struct Tile {
        InterpStorage* s = nullptr;
        Type elem;
        int64_t origin = 0, stride = 0;  ///< unswizzled (ir/IR.h)
        BufferSwizzle swizzle;           ///< a swizzled buffer's: each element's address
        /// The storage index of element (row, col).
        int64_t at(int64_t row, int64_t col) const {
            const int64_t o = origin + row * stride + col;
            return swizzle.defined() && o >= 0 ? swizzle.apply(o) : o;
        }
    };
    void exec_tensor_core(const Call* op);
    /// dot_product (ir/IR.h): the CPU's dot-product instructions, exactly.
    void exec_dot_product(const Call* op);
    Tile tile_operand(const Call* op, size_t a);
    /// A single flattened Load naming contiguous elements from its index (stride 0).
    Tile flat_operand(const Call* op, size_t a);
    int64_t fragment_base(const Call* op, const Tile& t, FragmentKind k);
    double tile_read(const Tile& t, int64_t row, int64_t col);
    double flat_read(const Tile& t, int64_t flat);
    void tile_write(const Tile& t, int64_t flat, double v);
    /// Stops this lane at warp-collective `op` until every lane of its warp is there (the same
    /// call, as often executed); returns this lane's share of warp_collective's result.
    std::vector<double> warp_rendezvous(const Call* op, std::vector<double> in);
    /// wgmma and its fence, commit and wait (ir/IR.h): the warp group's rendezvous, and the
    /// asynchronous proxy's rules checked (pending accumulators, shared operands, fences).
    void exec_wgmma(const Call* op);
    void exec_wgmma_wait(int64_t n);
    /// The wgmma checks of an access to element `flat` of `s` (when a wgmma is around).
    void check_wgmma_access(InterpStorage& s, int64_t flat, bool write);

    // Memory (LoopInterpreterMemory.cpp).
    Value load(const Load* op, const Value& index, const Value& mask);
    Value buffer_load(const BufferLoad* op, const std::vector<Value>& indices, const Value& mask);
    /// The slot of buffer variable v (created unbound on first sight).
    BufferSlot& slot_of(const Variable* v);
    /// The storage `v` refers to, checked to hold elements of `elem`; `verb` is "load from" or
    /// "store to".
    InterpStorage& storage_for(const Variable* v, Type elem, const char* verb);
    const BufferLayout& layout_of(const BufferNode* b);
    /// Element `flat` of `s` as a lane of type `elem`, after the bounds and race checks.
    Scalar read_element(InterpStorage& s, Type elem, int64_t flat);
    void write_element(InterpStorage& s, Type elem, int64_t flat, Scalar v);
    /// The flat element of a BufferLoad/BufferStore lane; throws if out of bounds.
    int64_t buffer_offset(const BufferNode* b, InterpStorage& s, const std::vector<Value>& idx,
                          int lane, const char* verb);
    void track_access(const InterpStorage& s, int64_t flat, bool write);
    [[noreturn]] void flat_out_of_bounds(const char* verb, const InterpStorage& s, int64_t index,
                                         int lane, int lanes);
    /// " (i=32, j=0)", or "" outside loops.
    std::string loop_context() const;

    LoopInterpreterOptions options_;
    ExprEvaluator eval_;
    int64_t steps_ = 0;
    uint64_t next_serial_ = 0;
    std::vector<std::unique_ptr<BufferSlot>> slots_;
    size_t last_slot_ = 0;
    std::vector<std::unique_ptr<InterpStorage>> bound_;  ///< storage of bound arrays
    std::vector<std::unique_ptr<BufferLayout>> layouts_;
    std::vector<LoopFrame> loops_;
    std::vector<std::unique_ptr<ParallelFrame>> parallel_;
    SpmdThread* spmd_ = nullptr;  ///< set in the interpreter of a simulated thread
    // cp_async: this thread's open group, its committed groups (oldest first), and the elements
    // in flight when it runs outside a block.
    std::vector<InFlightElement> open_copies_;
    std::vector<std::vector<InFlightElement>> committed_copies_;
    InFlightMap own_in_flight_;
    // wgmma: this thread's open group and committed groups (the accumulator elements pending in
    // each, and the shared elements each reads), the accumulator elements pending, whether a
    // wgmma_fence came after the last register write, and the shared elements this thread wrote
    // since its last fence_proxy_async.
    struct WgmmaGroup {
        std::vector<uint64_t> regs, smem;
    };
    WgmmaGroup wgmma_open_;
    std::vector<WgmmaGroup> wgmma_committed_;
    std::unordered_map<uint64_t, InterpStorage*> wgmma_pending_regs_;
    bool wgmma_fenced_ = false;
    std::vector<uint64_t> unfenced_mine_;
    std::vector<uint64_t> store_reads_mine_;  ///< shared elements this thread's tma_stores read
};

}  // namespace tessel::internal
