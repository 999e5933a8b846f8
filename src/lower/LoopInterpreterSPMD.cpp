// The loop-IR interpreter's SPMD mode: thread-bound loop nests run as GPU kernels would.
//
// A kernel starts at the first thread-bound loop met outside a block. blockIdx loops run their
// iterations one after another; the body of the innermost blockIdx loop (or a threadIdx loop met
// outside any blockIdx loop) is one *block*. Its thread extents are the extents of the threadIdx
// loops inside it; every thread runs the whole block body with its own interpreter (its own loop
// variables, lets and local/global allocations), and a threadIdx loop runs only the calling
// thread's iteration (none when the thread's index is past the loop's extent). Shared allocations
// are made once per block and seen by every thread.
//
// Threads advance in phases: every thread runs, in order of its linear index, until it reaches a
// barrier (thread_barrier or thread_allreduce) or finishes; when all have stopped, they must all
// be at the same barrier (else RuntimeError: a divergent barrier), the all-reduce is combined, and
// the next phase starts. Blocks without barriers run their threads one after another on the
// calling thread; blocks with barriers give each simulated thread an OS thread, of which exactly
// one runs at a time, so execution is deterministic.
//
// Warps: threads are grouped by 32 in order of their linear index (threadIdx.x fastest). A
// warp-collective intrinsic (mma_sync, ldmatrix) stops its thread too; when every thread has
// stopped, each warp with a thread at one must have all 32 threads at the same call, executed
// as often (else RuntimeError naming the intrinsic and a thread that is elsewhere), and the
// collective runs once for the warp (warp_collective). Those threads go on; threads at barriers
// wait until no thread is at a collective. Collectives start no new phase.
//
// The race detector: within a phase, two different threads touching the same element of shared
// memory, at least one of them writing, is a RuntimeError naming the buffer, the element, both
// threads and the block. An all-reduce within warps (allreduce_within_warps, lower/PassUtil.h:
// shuffles on CUDA, no __syncthreads()) stops the threads to combine their values but starts no
// new phase: it orders no memory, so accesses before and after it race as they would on a GPU.
#include <algorithm>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "LoopInterpreterImpl.h"
#include "PassUtil.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel::internal {

namespace {

/// Threads of one block at most (CUDA's limit).
constexpr int64_t kMaxBlockThreads = 1024;

bool is_block_tag(const std::string& tag) {
    return tag.rfind("blockIdx.", 0) == 0;
}
int thread_axis(const std::string& tag) {
    if (tag == "threadIdx.x") return 0;
    if (tag == "threadIdx.y") return 1;
    if (tag == "threadIdx.z") return 2;
    return -1;
}

/// Thrown into the simulated threads to unwind them when the block is abandoned.
struct AbortBlock {};

/// Where a stopped thread is.
enum class ThreadState : uint8_t { Ready, Running, AtBarrier, AtWarp, AtMbarrier, Done, Failed };

/// Who touched one element of shared memory in the current phase. In a block whose threads
/// arrive on mbarriers (a warp-specialized pipeline) every reader is kept, with the arrivals it
/// had made when it read, and so is the writer's: an access another thread ordered itself
/// after (it waited for a phase the accessing thread arrived on later) is no race.
struct Access {
    int writer = -1, reader = -1;
    bool many_readers = false;
    int64_t writer_arrivals = 0;
    std::vector<std::pair<int, int64_t>> readers;
};

}  // namespace

/// State of one block being executed.
struct SpmdBlock {
    int64_t dims[3] = {1, 1, 1};
    int64_t static_dims[3] = {1, 1, 1};  ///< the constant thread extents (-1: not constant)
    int nthreads = 1;
    std::string where;  ///< " (bx=0, ...)" for messages
    // Scheduling (OS-thread mode): `running` is the thread allowed to run, -1 the coordinator.
    std::mutex mu;
    std::condition_variable coordinator;        ///< signalled when the running thread stops
    std::vector<std::condition_variable> wake;  ///< per thread: signalled when it may run
    int running = -1;
    bool abort = false;
    std::vector<ThreadState> state;
    std::vector<const Call*> at;                ///< the barrier each stopped thread is at
    std::vector<std::vector<Value>> values;     ///< all-reduce contributions
    std::vector<std::vector<int>> reduce_axes;  ///< all-reduce: participating axes, in order
    std::vector<std::vector<Value>> results;    ///< all-reduce results
    std::vector<int64_t> occurrence;            ///< warp collective: the thread's count of it
    std::vector<std::vector<double>> warp_in, warp_out;  ///< warp collective operands, results
    std::vector<std::exception_ptr> errors;
    std::vector<SpmdThread> threads;
    // Shared memory.
    std::map<std::pair<const Allocate*, int64_t>, std::unique_ptr<InterpStorage>> shared;
    uint64_t next_serial = 1;
    std::unordered_map<uint64_t, Access> accesses;
    bool arrivals = false;  ///< the body has mbarrier_arrive (Access keeps every reader)
    InFlightMap in_flight;  ///< cp_async destinations not landed yet
    WgmmaBlockState wgmma;
    TmaBlockState tma;
    std::vector<std::pair<uint64_t, int64_t>> mbarrier_wait;  ///< per thread: barrier, parity
    // tile_arrive: each thread's tile; whether the block has arrived in this phase, and how.
    std::vector<int64_t> arrive_tile;
    bool arrived = false;
    bool arrived_last = false;

    std::string thread_name(int t) const {
        const SpmdThread& th = threads[t];
        std::ostringstream os;
        os << "(" << th.tid[0] << ", " << th.tid[1] << ", " << th.tid[2] << ")";
        return os.str();
    }
};

namespace {

/// The threadIdx loops (and whether a barrier or all-reduce occurs) in a block body.
struct BlockShape {
    std::vector<const For*> thread_loops;
    bool syncs = false;
    bool nested_blocks = false;
    bool wgmma = false;
    bool arrivals = false;
};

BlockShape block_shape(const Stmt& body) {
    BlockShape shape;
    post_order_visit(body, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::For) {
            const For* f = static_cast<const For*>(n);
            if (f->kind != ForKind::ThreadBound) return;
            if (thread_axis(f->thread_tag) >= 0) shape.thread_loops.push_back(f);
            if (is_block_tag(f->thread_tag)) shape.nested_blocks = true;
        } else if (n->node_type == IRNodeType::Call) {
            Intrinsic op = static_cast<const Call*>(n)->op;
            shape.wgmma = shape.wgmma || op == Intrinsic::wgmma || op == Intrinsic::tma_store;
            shape.arrivals = shape.arrivals || op == Intrinsic::mbarrier_arrive;
            shape.syncs = shape.syncs || op == Intrinsic::thread_barrier ||
                          op == Intrinsic::thread_allreduce || op == Intrinsic::tile_arrive ||
                          op == Intrinsic::mbarrier_wait || is_warp_collective(op);
        }
    });
    return shape;
}

// ExprEvaluator bindings of the all-reduce's lhs/rhs and their combination.
std::vector<Value> combine(const Call* op, const std::vector<Value>& acc,
                           const std::vector<Value>& in) {
    const int64_t n = as_const_int(op->args[0]).value();
    ExprEvaluator ev(FloatMode::Exact);
    for (int64_t v = 0; v < n; ++v) {
        ev.bind(Var(op->args[2 + 2 * n + v].as<Variable>()), acc[v]);
        ev.bind(Var(op->args[2 + 3 * n + v].as<Variable>()), in[v]);
    }
    std::vector<Value> out;
    for (int64_t v = 0; v < n; ++v) out.push_back(ev.eval(op->args[2 + 4 * n + v]));
    return out;
}

// Combines the contributions of every group of threads at the all-reduce (see ir/IR.h).
void finish_allreduce(SpmdBlock& b) {
    const Call* op = b.at[0];
    const int64_t n = as_const_int(op->args[0]).value();
    std::map<std::vector<int64_t>, std::vector<int>> groups;  // other axes → threads, in order
    for (int t = 0; t < b.nthreads; ++t) {
        const SpmdThread& th = b.threads[t];
        std::vector<int64_t> key{th.tid[0], th.tid[1], th.tid[2]};
        for (int a : b.reduce_axes[t]) key[a] = 0;
        for (int a : b.reduce_axes[t]) key.push_back(th.tid[a]);  // order inside the group
        std::vector<int64_t> group(key.begin(), key.begin() + 3);
        groups[group].push_back(t);
    }
    for (auto& [key, members] : groups) {
        std::sort(members.begin(), members.end(), [&](int x, int y) {
            for (int a : b.reduce_axes[x])
                if (b.threads[x].tid[a] != b.threads[y].tid[a])
                    return b.threads[x].tid[a] < b.threads[y].tid[a];
            return x < y;
        });
        std::vector<Value> acc;
        for (int64_t v = 0; v < n; ++v) acc.push_back(b.values[members[0]][n + v]);  // identity
        for (int t : members) {
            std::vector<Value> in(b.values[t].begin(), b.values[t].begin() + n);
            acc = combine(op, acc, in);
        }
        for (int t : members) b.results[t] = acc;
    }
}

// Where thread t is, for a warp-collective's message.
std::string thread_place(const SpmdBlock& b, int t) {
    if (b.state[t] == ThreadState::Done) return "finished without reaching it";
    if (b.state[t] == ThreadState::AtBarrier)
        return std::string("waits at ") + intrinsic_name(b.at[t]->op) + " instead";
    return std::string("is at another ") + intrinsic_name(b.at[t]->op) +
           " call (or another execution of it)";
}

// Runs every warp whose threads wait at a warp collective; they become Ready.
void finish_warps(SpmdBlock& b) {
    for (int w = 0; w * kWarpSize < b.nthreads; ++w) {
        int first = w * kWarpSize, end = std::min(b.nthreads, first + kWarpSize);
        int at = -1;
        for (int t = first; t < end && at < 0; ++t)
            if (b.state[t] == ThreadState::AtWarp) at = t;
        if (at < 0) continue;
        const char* name = intrinsic_name(b.at[at]->op);
        if (end - first < kWarpSize)
            TESSEL_THROW(RuntimeError)
                << name << " is warp-collective: it needs all 32 threads of a warp, but warp " << w
                << " of the block has " << end - first << " threads (the block has " << b.nthreads
                << ")" << b.where;
        if (b.at[at]->op == Intrinsic::wgmma) {  // the warp group: warps 4g .. 4g + 3
            first = (w / 4) * 4 * kWarpSize;
            end = first + 4 * kWarpSize;
            if (end > b.nthreads)
                TESSEL_THROW(RuntimeError)
                    << "wgmma is warp-group-collective: it needs the 4 warps " << (w / 4) * 4
                    << " to " << (w / 4) * 4 + 3 << " of the block, but the block has "
                    << b.nthreads << " threads" << b.where;
            w = (w / 4) * 4 + 3;  // the group's other warps are done here
        }
        for (int t = first; t < end; ++t) {
            if (b.state[t] == ThreadState::AtWarp && b.at[t] == b.at[at] &&
                b.occurrence[t] == b.occurrence[at])
                continue;
            TESSEL_THROW(RuntimeError)
                << "divergent warp: thread " << b.thread_name(at) << " (lane " << at - first
                << " of warp " << w << ") waits at warp-collective " << name << " but thread "
                << b.thread_name(t) << " (lane " << t - first << ") " << thread_place(b, t)
                << " (every lane of the "
                << (b.at[at]->op == Intrinsic::wgmma ? "warp group" : "warp") << " must execute "
                << name << " together)" << b.where;
        }
        std::vector<std::vector<double>> in(b.warp_in.begin() + first, b.warp_in.begin() + end);
        std::vector<std::vector<double>> out = warp_collective(b.at[at], in);
        for (int t = first; t < end; ++t) {
            b.warp_out[t] = std::move(out[t - first]);
            b.state[t] = ThreadState::Ready;
        }
    }
}

// Stops thread t at `op` in `state` until the coordinator runs it again.
void stop_at(SpmdBlock& b, int t, const Call* op, ThreadState state) {
    std::unique_lock lock(b.mu);
    b.at[t] = op;
    b.state[t] = state;
    b.running = -1;
    b.coordinator.notify_one();
    b.wake[t].wait(lock, [&] { return b.running == t || b.abort; });
    if (b.abort) throw AbortBlock{};
}

// Threads at mbarrier_wait whose phase has completed go on (true when one does); a wait that
// can no longer complete (every other thread stopped elsewhere or done) is an error.
bool wake_mbarrier_waits(SpmdBlock& b) {
    bool woke = false;
    int stuck = -1;
    for (int t = 0; t < b.nthreads; ++t) {
        if (b.state[t] != ThreadState::AtMbarrier) continue;
        const auto& [key, parity] = b.mbarrier_wait[t];
        const MbarrierState& st = b.tma.barriers.at(key);
        if (st.phase % 2 != parity) {
            b.state[t] = ThreadState::Ready;
            woke = true;
        } else if (stuck < 0) {
            stuck = t;
        }
    }
    if (woke || stuck < 0) return woke;
    const MbarrierState& st = b.tma.barriers.at(b.mbarrier_wait[stuck].first);
    TESSEL_THROW(RuntimeError) << "mbarrier_wait never completes: thread " << b.thread_name(stuck)
                               << " waits for phase " << st.phase << " (parity "
                               << b.mbarrier_wait[stuck].second << ") of an mbarrier that lacks "
                               << st.pending << " of its " << st.count << " arrivals and " << st.tx
                               << " announced bytes, and no other thread can bring them" << b.where;
}

}  // namespace

void LoopInterpreter::exec_thread_bound(const For* op, int64_t min, int64_t extent) {
    if (spmd_) {
        int axis = thread_axis(op->thread_tag);
        if (axis < 0) {
            if (is_block_tag(op->thread_tag))
                TESSEL_THROW(RuntimeError)
                    << "loop " << op->loop_var.name() << " is bound to " << op->thread_tag
                    << " inside a block (blockIdx loops must enclose the threadIdx loops)"
                    << loop_context();
            return exec_serial(op, min, extent, nullptr);  // a vthread left by the passes
        }
        const int64_t k = spmd_->tid[axis];
        if (k >= extent) return;
        spmd_->axis_of[op->loop_var.get()] = axis;
        loops_.push_back({op->loop_var.get(), min + k});
        Value v =
            Value::make_int(op->loop_var.type(), wrap_to_int_type(min + k, op->loop_var.type()));
        const Value* old = eval_.lookup(op->loop_var.get());
        std::optional<Value> saved;
        if (old) saved = *old;
        eval_.bind(op->loop_var, v);
        exec(op->body);
        if (saved) {
            eval_.bind(op->loop_var, *saved);
        } else {
            eval_.unbind(op->loop_var);
        }
        loops_.pop_back();
        return;
    }
    if (thread_axis(op->thread_tag) >= 0) return run_block(Stmt(op));
    if (!is_block_tag(op->thread_tag)) return exec_serial(op, min, extent, nullptr);  // vthread
    // blockIdx: blocks one after another; the innermost blockIdx loop's body is the block.
    if (extent <= 0) return;
    BlockShape shape = block_shape(op->body);
    const Type t = op->loop_var.type();
    loops_.push_back({op->loop_var.get(), min});
    std::optional<Value> saved;
    if (const Value* old = eval_.lookup(op->loop_var.get())) saved = *old;
    for (int64_t k = 0; k < extent; ++k) {
        loops_.back().value = wrap_to_int_type(min + k, t);
        eval_.bind(op->loop_var, Value::make_int(t, loops_.back().value));
        if (shape.nested_blocks) {
            exec(op->body);
        } else {
            run_block(op->body);
        }
    }
    if (saved) {
        eval_.bind(op->loop_var, *saved);
    } else {
        eval_.unbind(op->loop_var);
    }
    loops_.pop_back();
}

void LoopInterpreter::run_block(const Stmt& body) {
    BlockShape shape = block_shape(body);
    SpmdBlock b;
    b.where = loop_context();
    b.wgmma.active = shape.wgmma;
    b.arrivals = shape.arrivals;
    for (const For* f : shape.thread_loops) {
        int64_t e;
        try {
            e = eval_int(f->extent, "thread extent");
        } catch (const RuntimeError& err) {
            TESSEL_THROW(RuntimeError)
                << "the extent of thread loop " << f->loop_var.name() << " (" << f->thread_tag
                << ") is not known at launch: " << err.what();
        }
        int a = thread_axis(f->thread_tag);
        b.dims[a] = std::max(b.dims[a], e);
        // As insert_barriers and the CUDA backend see the block (constant extents only).
        auto c = as_const_int(f->extent);
        b.static_dims[a] = std::max(b.static_dims[a], c ? *c : -1);
    }
    const int64_t n = b.dims[0] * b.dims[1] * b.dims[2];
    if (n > kMaxBlockThreads)
        TESSEL_THROW(RuntimeError)
            << "a block of " << b.dims[0] << " x " << b.dims[1] << " x " << b.dims[2]
            << " threads exceeds " << kMaxBlockThreads << " threads" << b.where;
    b.nthreads = static_cast<int>(std::max<int64_t>(n, 1));
    b.threads.resize(b.nthreads);
    b.state.assign(b.nthreads, ThreadState::Ready);
    b.at.assign(b.nthreads, nullptr);
    b.values.resize(b.nthreads);
    b.reduce_axes.resize(b.nthreads);
    b.results.resize(b.nthreads);
    b.occurrence.assign(b.nthreads, 0);
    b.warp_in.resize(b.nthreads);
    b.warp_out.resize(b.nthreads);
    b.mbarrier_wait.resize(b.nthreads);
    b.errors.resize(b.nthreads);
    b.wake = std::vector<std::condition_variable>(b.nthreads);
    // One interpreter per thread, in this interpreter's environment.
    std::vector<std::unique_ptr<LoopInterpreter>> interps;
    for (int t = 0; t < b.nthreads; ++t) {
        SpmdThread& th = b.threads[t];
        th.block = &b;
        th.in_flight = &b.in_flight;
        th.wgmma = &b.wgmma;
        th.tma = &b.tma;
        th.index = t;
        th.tid[0] = t % b.dims[0];
        th.tid[1] = (t / b.dims[0]) % b.dims[1];
        th.tid[2] = t / (b.dims[0] * b.dims[1]);
        auto in = std::make_unique<LoopInterpreter>(options_);
        for (const auto& [var, value] : eval_.bindings()) in->eval_.bind(Var(var), value);
        for (const auto& slot : slots_)
            if (slot->storage) in->slot_of(slot->var).storage = slot->storage;
        in->loops_ = loops_;
        in->steps_ = steps_;
        in->spmd_ = &th;
        interps.push_back(std::move(in));
    }
    int64_t steps = steps_;
    if (!shape.syncs) {
        for (auto& in : interps) {
            in->run(body);
            steps += in->steps_ - steps_;
        }
        steps_ = steps;
        return;
    }
    // OS-thread mode: exactly one simulated thread runs at a time, in phases.
    std::vector<std::thread> os_threads;
    for (int t = 0; t < b.nthreads; ++t) {
        os_threads.emplace_back([&b, &body, t, in = interps[t].get()] {
            {
                std::unique_lock lock(b.mu);
                b.wake[t].wait(lock, [&] { return b.running == t || b.abort; });
            }
            ThreadState end = ThreadState::Done;
            if (!b.abort) {
                try {
                    in->run(body);
                } catch (const AbortBlock&) {
                } catch (...) {
                    b.errors[t] = std::current_exception();
                    end = ThreadState::Failed;
                }
            }
            std::lock_guard lock(b.mu);
            b.state[t] = end;
            b.running = -1;
            b.coordinator.notify_one();
        });
    }
    auto abandon = [&] {
        {
            std::lock_guard lock(b.mu);
            b.abort = true;
            for (auto& w : b.wake) w.notify_one();
        }
        for (auto& th : os_threads) th.join();
    };
    for (;;) {
        for (int t = 0; t < b.nthreads; ++t) {
            if (b.state[t] != ThreadState::Ready) continue;
            std::unique_lock lock(b.mu);
            b.state[t] = ThreadState::Running;
            b.running = t;
            b.wake[t].notify_one();
            b.coordinator.wait(lock, [&] { return b.running == -1; });
            if (b.state[t] == ThreadState::Failed) {
                lock.unlock();
                abandon();
                std::rethrow_exception(b.errors[t]);
            }
        }
        bool warps = false;
        for (int t = 0; t < b.nthreads; ++t) warps = warps || b.state[t] == ThreadState::AtWarp;
        if (warps) {  // collectives first: threads at barriers keep waiting
            try {
                finish_warps(b);
            } catch (...) {
                abandon();
                throw;
            }
            continue;
        }
        try {
            if (wake_mbarrier_waits(b)) continue;  // no new phase: mbarriers order no memory
        } catch (...) {
            abandon();
            throw;
        }
        int done = 0, first_waiting = -1, first_done = -1;
        for (int t = 0; t < b.nthreads; ++t) {
            if (b.state[t] == ThreadState::Done) {
                ++done;
                if (first_done < 0) first_done = t;
            } else if (first_waiting < 0) {
                first_waiting = t;
            }
        }
        if (done == b.nthreads) break;
        std::string problem;
        if (done > 0) {
            problem = "thread " + b.thread_name(first_waiting) + " waits at " +
                      intrinsic_name(b.at[first_waiting]->op) + " but thread " +
                      b.thread_name(first_done) + " finished without reaching it";
        }
        for (int t = 0; t < b.nthreads && problem.empty(); ++t) {
            if (b.at[t] != b.at[first_waiting])
                problem = "thread " + b.thread_name(first_waiting) + " and thread " +
                          b.thread_name(t) + " wait at different barriers";
        }
        if (!problem.empty()) {
            abandon();
            TESSEL_THROW(RuntimeError) << "divergent barrier in a block: " << problem
                                       << " (a barrier must be reached by every thread of the "
                                          "block)"
                                       << b.where;
        }
        bool barrier = true;
        if (b.at[first_waiting]->op == Intrinsic::thread_allreduce) {
            try {
                finish_allreduce(b);
            } catch (...) {
                abandon();
                throw;
            }
            barrier = !allreduce_within_warps(b.static_dims, b.reduce_axes[first_waiting]);
        }
        if (barrier) {  // a new phase
            b.accesses.clear();
            ++b.tma.epoch;
            b.arrived = false;
        }
        for (int t = 0; t < b.nthreads; ++t)
            if (b.state[t] == ThreadState::AtBarrier) b.state[t] = ThreadState::Ready;
    }
    for (auto& th : os_threads) th.join();
    for (auto& in : interps) steps += in->steps_ - steps_;
    steps_ = steps;
}

void LoopInterpreter::exec_barrier() {
    if (!spmd_) return;  // outside a block a barrier has nothing to wait for
    exec_allreduce(nullptr);
}

// Stops this thread at a barrier (op == nullptr: thread_barrier) or an all-reduce until every
// thread of the block has arrived; an all-reduce then stores the group's result into dest.
void LoopInterpreter::exec_allreduce(const Call* op) {
    static const Call* const kBarrier = [] {
        static Expr e = Call::make(Intrinsic::thread_barrier, {});
        return e.as<Call>();
    }();
    if (!spmd_) {
        if (!op) return;
        TESSEL_THROW(RuntimeError)
            << "thread_allreduce outside a thread-bound loop nest" << loop_context();
    }
    SpmdBlock& b = *spmd_->block;
    const int t = spmd_->index;
    int64_t n = 0;
    if (op) {
        n = as_const_int(op->args[0]).value();
        const int64_t m = as_const_int(op->args[1]).value();
        std::vector<Value> vals;
        for (int64_t k = 0; k < 2 * n; ++k) vals.push_back(eval_.eval(op->args[2 + k]));
        std::vector<int> axes;
        for (int64_t k = 0; k < m; ++k) {
            const Variable* v = op->args[2 + 6 * n + k].as<Variable>();
            auto it = spmd_->axis_of.find(v);
            if (it == spmd_->axis_of.end() || !eval_.lookup(v))
                TESSEL_THROW(RuntimeError)
                    << "thread_allreduce over " << v->name
                    << ", which is not the variable of an enclosing threadIdx loop"
                    << loop_context();
            axes.push_back(it->second);
        }
        b.values[t] = std::move(vals);
        b.reduce_axes[t] = std::move(axes);
    }
    stop_at(b, t, op ? op : kBarrier, ThreadState::AtBarrier);
    if (!op) return;
    for (int64_t v = 0; v < n; ++v) {
        const Variable* dest = op->args[2 + 5 * n + v].as<Variable>();
        const Value& r = b.results[t][v];
        InterpStorage& s = storage_for(dest, r.type.element_of(), "store to");
        write_element(s, r.type.element_of(), 0, r.lanes[0]);
    }
}

// The block stops at the arrival as at a barrier (every thread's writes are in); the first of
// its threads to go on arrives for the block (blocks run one after another here, so the last
// part of a tile to arrive is the last block in order), the others take its outcome.
void LoopInterpreter::exec_tile_arrive(const Call* op) {
    const int64_t tile = eval_int(op->args[1], "tile_arrive's tile");
    auto arrive = [&]() {
        const int64_t count = as_const_int(op->args[2]).value();
        InterpStorage& c = storage_for(op->args[0].as<Variable>(), Int(32), "tile_arrive on");
        if (tile < 0 || tile >= c.array->size())
            TESSEL_THROW(RuntimeError)
                << "tile_arrive on " << c.name << ": tile " << tile << " outside its "
                << c.array->size() << " counters" << loop_context();
        const int64_t n = read_element(c, Int(32), tile).i + 1;
        if (n > count)
            TESSEL_THROW(RuntimeError)
                << "tile_arrive on " << c.name << ": arrival " << n << " at tile " << tile
                << ", which counts " << count << " (more blocks write its parts than it waits for)"
                << loop_context();
        write_element(c, Int(32), tile, Scalar{n == count ? 0 : n});
        return n == count;
    };
    bool last = false;
    if (!spmd_) {
        last = arrive();
    } else {
        SpmdBlock& b = *spmd_->block;
        const int t = spmd_->index;
        if (b.arrive_tile.size() != static_cast<size_t>(b.nthreads))
            b.arrive_tile.assign(static_cast<size_t>(b.nthreads), 0);
        b.arrive_tile[static_cast<size_t>(t)] = tile;
        stop_at(b, t, op, ThreadState::AtBarrier);
        if (!b.arrived) {
            for (int u = 0; u < b.nthreads; ++u)
                if (b.arrive_tile[static_cast<size_t>(u)] != tile)
                    TESSEL_THROW(RuntimeError)
                        << "tile_arrive: thread " << b.thread_name(t) << " arrives for tile "
                        << tile << " but thread " << b.thread_name(u) << " for tile "
                        << b.arrive_tile[static_cast<size_t>(u)]
                        << " (the block arrives together, for one tile)" << b.where;
            b.arrived_last = arrive();
            b.arrived = true;
        }
        last = b.arrived_last;
    }
    InterpStorage& dest = storage_for(op->args[3].as<Variable>(), Int(32), "store to");
    write_element(dest, Int(32), 0, Scalar{last ? 1 : 0});
}

void LoopInterpreter::wait_for_mbarrier(const Call* op, uint64_t key, int64_t parity) {
    SpmdBlock& b = *spmd_->block;
    const int t = spmd_->index;
    b.mbarrier_wait[t] = {key, parity};
    stop_at(b, t, op, ThreadState::AtMbarrier);
}

namespace {

/// Whether thread `me` is ordered after what thread `other` did before its arrival number
/// `at` + 1 (the accesses it made with `at` arrivals behind it).
bool ordered_after(const SpmdThread& me, int other, int64_t at) {
    auto it = me.acquired.find(other);
    return it != me.acquired.end() && it->second > at;
}

/// A thread other than `me` whose access to the element `me` is not ordered after (-1: none):
/// the writer, and with `readers` a reader too (for a write).
int unordered_access(const Access& a, const SpmdThread& me, bool readers) {
    if (a.writer >= 0 && a.writer != me.index && !ordered_after(me, a.writer, a.writer_arrivals))
        return a.writer;
    if (readers)
        for (const auto& [r, at] : a.readers)
            if (r != me.index && !ordered_after(me, r, at)) return r;
    return -1;
}

}  // namespace

void LoopInterpreter::check_unread(const InterpStorage& s, int64_t flat, const char* what) {
    SpmdBlock& b = *spmd_->block;
    auto it = b.accesses.find((s.serial << 40) | static_cast<uint64_t>(flat));
    if (it == b.accesses.end()) return;
    const Access& a = it->second;
    const int t = spmd_->index;
    const int other = b.arrivals                       ? unordered_access(a, *spmd_, true)
                      : a.writer >= 0 && a.writer != t ? a.writer
                      : a.reader >= 0 && a.reader != t ? a.reader
                      : a.many_readers                 ? -2
                                                       : -1;
    if (other == -1) return;
    TESSEL_THROW(RuntimeError) << what << " shared memory " << s.name << " element " << flat
                               << " by thread " << b.thread_name(t) << ", which thread "
                               << (other >= 0 ? b.thread_name(other) : std::string("(another)"))
                               << " accessed since the last barrier (the copy may land at once; "
                                  "insert a thread_barrier before it"
                               << (b.arrivals ? ", or wait for an mbarrier phase it arrived on "
                                                "after the access"
                                              : "")
                               << ")" << loop_context() << b.where;
}

std::vector<double> LoopInterpreter::warp_rendezvous(const Call* op, std::vector<double> in) {
    SpmdBlock& b = *spmd_->block;
    const int t = spmd_->index;
    b.warp_in[t] = std::move(in);
    b.occurrence[t] = spmd_->collectives[op]++;
    stop_at(b, t, op, ThreadState::AtWarp);
    return std::move(b.warp_out[t]);
}

InterpStorage* LoopInterpreter::shared_storage(const Allocate* op, int64_t size) {
    SpmdBlock& b = *spmd_->block;
    const int64_t occurrence = spmd_->allocations[op]++;
    auto& slot = b.shared[{op, occurrence}];
    if (!slot) {
        slot = std::make_unique<InterpStorage>();
        slot->owned = std::make_unique<HostArray>(op->dtype.element_of(), std::vector{size});
        slot->array = slot->owned.get();
        slot->name = op->buffer_var.name();
        slot->serial = b.next_serial++;
        slot->shared = true;
    }
    if (slot->array->size() != size)
        TESSEL_THROW(RuntimeError)
            << "allocate " << op->buffer_var.name() << ": shared memory of " << slot->array->size()
            << " elements in one thread of the block but " << size << " in another"
            << loop_context();
    // A loop's next allocation is the same shared memory on the GPU: a tma_store still reading
    // the last one would read what the next iteration writes.
    if (occurrence > 0 && !spmd_->wgmma->store_reads.empty()) {
        auto last = b.shared.find({op, occurrence - 1});
        for (const auto& [key, issuer] : spmd_->wgmma->store_reads)
            if (last != b.shared.end() && key >> kElementBits == last->second->serial)
                TESSEL_THROW(RuntimeError)
                    << "allocate " << op->buffer_var.name() << " again by " << thread_label(spmd_)
                    << " (the same shared memory on the GPU), which a tma_store of "
                    << thread_label(issuer)
                    << " still reads (a tma_store_wait is missing before the overwrite)"
                    << loop_context();
    }
    return slot.get();
}

void LoopInterpreter::track_shared(const InterpStorage& s, int64_t flat, bool write) {
    if (!spmd_) return;
    SpmdBlock& b = *spmd_->block;
    const int t = spmd_->index;
    Access& a = b.accesses[(s.serial << 40) | static_cast<uint64_t>(flat)];
    int other = -1;
    const char* what = "";
    if (b.arrivals) {
        other = unordered_access(a, *spmd_, write);
        what = other == a.writer ? "wrote" : "read";
    } else if (a.writer >= 0 && a.writer != t) {
        other = a.writer;
        what = "wrote";
    } else if (write && a.reader >= 0 && (a.reader != t || a.many_readers)) {
        other = a.reader != t ? a.reader : -2;
        what = "read";
    }
    if (other != -1) {
        std::ostringstream os;
        os << "race on shared memory " << s.name << ": thread " << b.thread_name(t) << " "
           << (write ? "writes" : "reads") << " element " << flat << ", which thread "
           << (other >= 0 ? b.thread_name(other) : std::string("(another)")) << " " << what
           << " since the last barrier; insert a thread_barrier between them" << loop_context()
           << b.where;
        TESSEL_THROW(RuntimeError) << os.str();
    }
    if (write) {
        a.writer = t;
        a.writer_arrivals = spmd_->arrivals;
        a.readers.clear();
    } else if (b.arrivals) {
        auto r = std::find_if(a.readers.begin(), a.readers.end(),
                              [&](const auto& x) { return x.first == t; });
        if (r == a.readers.end()) {
            a.readers.push_back({t, spmd_->arrivals});
        } else {
            r->second = spmd_->arrivals;
        }
    } else if (a.reader < 0) {
        a.reader = t;
    } else if (a.reader != t) {
        a.many_readers = true;
    }
}

}  // namespace tessel::internal
