// The loop-IR interpreter's mbarriers and TMA copies (their semantics are in ir/IR.h).
//
// A block's mbarriers live beside its shared memory, keyed by the element of the uint64 buffer
// that holds each: arrivals a phase, arrivals still pending, bytes announced and not landed, and
// the phases completed. A tma_load reads its box at once (zeros outside the tensor) and puts the
// destination elements *in flight* on the barrier's current phase, counting the box's bytes in;
// when a phase has all its arrivals and bytes it completes and its copies land (written through
// the asynchronous proxy: no thread's write for the race detector). A thread may read an element
// a copy brought only once it has itself waited for that phase (mbarrier_wait); reading it
// earlier, writing it while it is in flight, copying into it while another thread read it since
// the last barrier (the refill of a tile still in use), or into a tile a wgmma still reads, is a
// RuntimeError naming the buffer, the element and the threads. A wait that can never complete
// (its phase lacks arrivals or bytes when every other thread has stopped) is reported by the
// block (LoopInterpreterSPMD.cpp).
//
// A tma_store reads its box at once, as a read of the issuing thread (the race detector orders
// it after the writers' stores only through a barrier), and writes the elements inside the
// tensor. A box element some thread stored without a fence_proxy_async since, or a write to an
// element a tma_store read before its issuer's tma_store_wait, is a RuntimeError.
#include "LoopInterpreterImpl.h"

namespace tessel::internal {

namespace {

void land(TmaElement& e) {
    if (e.elem.is_float()) {
        e.dst->array->set(e.flat, e.value.f);
    } else {
        e.dst->array->set_int(e.flat, e.value.i);
    }
    e.landed = true;
}

}  // namespace

std::pair<MbarrierState*, uint64_t> LoopInterpreter::mbarrier_of(const Call* op, bool init) {
    const char* name = intrinsic_name(op->op);
    if (!spmd_)
        TESSEL_THROW(RuntimeError)
            << name << " outside a GPU block (mbarriers are in shared memory)" << loop_context();
    const Variable* var =
        (op->op == Intrinsic::tma_load ? op->args[3] : op->args[0]).as<Variable>();
    InterpStorage* s = slot_of(var).storage;
    if (!s || !s->shared)
        TESSEL_THROW(RuntimeError)
            << name << " on " << var->name << ", which is not allocated shared memory here"
            << loop_context();
    const int64_t index =
        eval_int(op->op == Intrinsic::tma_load ? op->args[4] : op->args[1], "mbarrier index");
    if (index < 0 || index >= s->array->size()) flat_out_of_bounds(name, *s, index, 0, 1);
    const uint64_t key = element_key(s->serial, index);
    TmaBlockState& tma = *spmd_->tma;
    auto it = tma.barriers.find(key);
    if (init) return {&tma.barriers[key], key};
    if (it == tma.barriers.end())
        TESSEL_THROW(RuntimeError)
            << name << " on mbarrier " << var->name << "[" << index << "] by "
            << thread_label(spmd_) << ", which no mbarrier_init set up" << loop_context();
    MbarrierState& st = it->second;
    if (st.init_by != spmd_ && st.init_epoch == tma.epoch)
        TESSEL_THROW(RuntimeError)
            << name << " on mbarrier " << var->name << "[" << index << "] by "
            << thread_label(spmd_) << ", which " << thread_label(st.init_by)
            << " set up since the last barrier (a thread_barrier must "
               "make mbarrier_init visible to the block)"
            << loop_context();
    return {&st, key};
}

void LoopInterpreter::complete_phase(MbarrierState& st, uint64_t key) {
    if (st.pending > 0 || st.tx > 0) return;
    if (st.tx < 0)
        TESSEL_THROW(RuntimeError)
            << "mbarrier phase " << st.phase << " received " << -st.tx
            << " bytes more than mbarrier_expect_tx announced" << loop_context();
    TmaBlockState& tma = *spmd_->tma;
    for (uint64_t e : st.bringing) {
        auto it = tma.elements.find(e);
        if (it != tma.elements.end() && it->second.bar == key && !it->second.landed)
            land(it->second);
    }
    st.bringing.clear();
    st.completed_arrivals.push_back(std::move(st.arrivals));
    st.arrivals.clear();
    ++st.phase;
    st.pending = st.count;
}

void LoopInterpreter::arrive(const Call* op, MbarrierState& st, uint64_t key) {
    if (st.pending == 0)
        TESSEL_THROW(RuntimeError)
            << intrinsic_name(op->op) << " by " << thread_label(spmd_)
            << ": the phase already has its " << st.count << " arrivals" << loop_context();
    --st.pending;
    st.arrivals.push_back({spmd_->index, ++spmd_->arrivals});
    complete_phase(st, key);
}

void LoopInterpreter::exec_mbarrier(const Call* op) {
    if (op->op == Intrinsic::mbarrier_init) {
        const int64_t count = eval_int(op->args[2], "mbarrier arrival count");
        if (count < 1)
            TESSEL_THROW(RuntimeError) << "mbarrier_init with " << count
                                       << " arrivals a phase (at least 1)" << loop_context();
        auto [st, key] = mbarrier_of(op, true);
        *st = MbarrierState{count, count, 0, 0, spmd_->tma->epoch, spmd_, {}, {}, {}};
        return;
    }
    auto [st, key] = mbarrier_of(op, false);
    if (op->op == Intrinsic::mbarrier_expect_tx) {
        const int64_t bytes = eval_int(op->args[2], "mbarrier_expect_tx bytes");
        if (bytes < 0)
            TESSEL_THROW(RuntimeError)
                << "mbarrier_expect_tx of " << bytes << " bytes" << loop_context();
        st->tx += bytes;
        return arrive(op, *st, key);
    }
    if (op->op == Intrinsic::mbarrier_arrive) return arrive(op, *st, key);
    const int64_t parity = eval_int(op->args[2], "mbarrier_wait parity");
    if (parity != 0 && parity != 1)
        TESSEL_THROW(RuntimeError)
            << "mbarrier_wait for parity " << parity << " (0 or 1)" << loop_context();
    if (!phase_done(*st, parity)) wait_for_mbarrier(op, key, parity);
    const MbarrierState& done = spmd_->tma->barriers.at(key);
    int64_t& seen = spmd_->observed[key];
    for (int64_t p = seen; p < done.phase; ++p)
        for (const auto& [thread, count] : done.completed_arrivals[static_cast<size_t>(p)]) {
            int64_t& known = spmd_->acquired[thread];
            known = std::max(known, count);
        }
    seen = std::max(seen, done.phase);
}

std::vector<std::pair<int64_t, int64_t>> LoopInterpreter::tma_box(const Call* op, size_t at,
                                                                  const InterpStorage& smem,
                                                                  const InterpStorage& gmem) {
    const char* name = intrinsic_name(op->op);
    const int rank = static_cast<int>(as_const_int(op->args[at + 1]).value());
    const std::vector<int64_t>& shape = gmem.array->shape();
    if (static_cast<int>(shape.size()) != rank)
        TESSEL_THROW(RuntimeError)
            << name << " of rank " << rank << " with " << gmem.name << ", which has "
            << shape.size() << " dimensions" << loop_context();
    const int64_t swizzle = as_const_int(op->args[at]).value();
    const int64_t size = smem.array->dtype().bytes();
    const BufferSwizzle z =
        swizzle ? BufferSwizzle{16 / size, 128 / size, swizzle / 16} : BufferSwizzle{};
    std::vector<int64_t> box(rank), coord(rank);
    int64_t count = 1;
    for (int t = 0; t < rank; ++t) {
        box[t] = as_const_int(op->args[at + 2 + t]).value();
        coord[t] = eval_int(op->args[at + 2 + rank + t], "TMA box coordinate");
        count *= box[t];
    }
    const int64_t first = eval_int(op->args[1], "TMA shared index");
    if ((first * size) % (swizzle ? 8 * swizzle : 128) != 0)
        TESSEL_THROW(RuntimeError)
            << name << " with " << smem.name << " element " << first << ": not aligned to "
            << (swizzle ? 8 * swizzle : 128) << " bytes" << loop_context();
    if (first < 0 || first + count > smem.array->size())
        flat_out_of_bounds(name, smem, first < 0 ? first : first + count - 1, 0, 1);
    std::vector<std::pair<int64_t, int64_t>> out;
    out.reserve(static_cast<size_t>(count));
    for (int64_t e = 0; e < count; ++e) {
        // The box's element e, innermost dimension first; the tensor's row-major index.
        int64_t rest = e, flat = 0;
        bool inside = true;
        std::vector<int64_t> pos(rank);
        for (int t = 0; t < rank; ++t) {
            pos[t] = coord[t] + rest % box[t];
            rest /= box[t];
            inside = inside && pos[t] >= 0 && pos[t] < shape[rank - 1 - t];
        }
        for (int t = rank - 1; t >= 0; --t) flat = flat * shape[rank - 1 - t] + pos[t];
        out.emplace_back(z.defined() ? z.apply(first + e) : first + e, inside ? flat : -1);
    }
    return out;
}

std::pair<InterpStorage*, InterpStorage*> LoopInterpreter::tma_operands(const Call* op, bool load) {
    const char* name = load ? "tma_load" : "tma_store";
    const Variable* smem_var = op->args[0].as<Variable>();
    InterpStorage* smem = slot_of(smem_var).storage;
    if (!smem || !smem->shared)
        TESSEL_THROW(RuntimeError)
            << name << (load ? " into " : " from ") << smem_var->name
            << ", which is not allocated shared memory here" << loop_context();
    InterpStorage& gmem = storage_for(op->args[2].as<Variable>(), smem->array->dtype(),
                                      load ? "tma_load from" : "tma_store into");
    if (gmem.shared)
        TESSEL_THROW(RuntimeError)
            << name << (load ? " from " : " into ") << gmem.name << ", which is shared memory (TMA "
            << (load ? "reads" : "stores into") << " global tensors)" << loop_context();
    return {smem, &gmem};
}

void LoopInterpreter::exec_tma_load(const Call* op) {
    auto [st, key] = mbarrier_of(op, false);
    auto [dst, srcp] = tma_operands(op, true);
    InterpStorage& src = *srcp;
    const Type elem = dst->array->dtype();
    const std::vector<std::pair<int64_t, int64_t>> box = tma_box(op, 5, *dst, src);
    TmaBlockState& tma = *spmd_->tma;
    for (const auto& [flat, from] : box) {
        const uint64_t dkey = element_key(dst->serial, flat);
        if (auto it = tma.elements.find(dkey); it != tma.elements.end() && !it->second.landed)
            TESSEL_THROW(RuntimeError)
                << "tma_load into shared memory " << dst->name << " element " << flat
                << ", which a TMA copy by " << thread_label(it->second.issuer)
                << " is still bringing (an mbarrier_wait is missing before the refill)"
                << loop_context();
        if (!in_flight().empty()) check_in_flight(*dst, flat, true);
        if (spmd_->wgmma->active)
            if (auto it = spmd_->wgmma->pending_reads.find(dkey);
                it != spmd_->wgmma->pending_reads.end())
                TESSEL_THROW(RuntimeError)
                    << "tma_load into shared memory " << dst->name << " element " << flat << " by "
                    << thread_label(spmd_) << ", which a wgmma of " << thread_label(it->second)
                    << " still reads (a wgmma_wait is missing before the refill)" << loop_context();
        check_unread(*dst, flat, "tma_load into");
        TmaElement t{key, st->phase, false, dst, flat, elem, Scalar{}, spmd_};
        if (from >= 0) {
            t.value = read_element(src, elem, from);
        } else if (elem.is_float()) {
            t.value.f = 0;
        } else {
            t.value.i = 0;
        }
        tma.elements[dkey] = t;
        st->bringing.push_back(dkey);
    }
    st->tx -= static_cast<int64_t>(box.size()) * elem.bytes();
    complete_phase(*st, key);
}

void LoopInterpreter::exec_tma_store(const Call* op) {
    if (!spmd_)
        TESSEL_THROW(RuntimeError)
            << "tma_store outside a GPU block (it copies shared memory)" << loop_context();
    auto [src, dstp] = tma_operands(op, false);
    InterpStorage& dst = *dstp;
    const Type elem = src->array->dtype();
    WgmmaBlockState& proxy = *spmd_->wgmma;
    for (const auto& [flat, to] : tma_box(op, 3, *src, dst)) {
        const uint64_t key = element_key(src->serial, flat);
        // The asynchronous proxy reads the box: what the block's threads stored there must have
        // been fenced for it, and ordered before this thread by a barrier (read_element's race
        // check).
        if (auto it = proxy.unfenced.find(key); it != proxy.unfenced.end())
            TESSEL_THROW(RuntimeError)
                << "tma_store by " << thread_label(spmd_) << " reads shared memory " << src->name
                << " element " << flat << ", which " << thread_label(it->second)
                << " wrote with an ordinary store and did not make visible to the asynchronous "
                   "proxy (fence_proxy_async before the barrier)"
                << loop_context();
        const Scalar v = read_element(*src, elem, flat);
        proxy.store_reads[key] = spmd_;
        store_reads_mine_.push_back(key);
        if (to >= 0) write_element(dst, elem, to, v);
    }
}

void LoopInterpreter::exec_tma_store_wait() {
    if (!spmd_) return;
    auto& reads = spmd_->wgmma->store_reads;
    for (uint64_t key : store_reads_mine_)
        if (auto it = reads.find(key); it != reads.end() && it->second == spmd_) reads.erase(it);
    store_reads_mine_.clear();
}

void LoopInterpreter::check_tma_access(const InterpStorage& s, int64_t flat, bool write) {
    auto& elements = spmd_->tma->elements;
    auto it = elements.find(element_key(s.serial, flat));
    if (it == elements.end()) return;
    const TmaElement& e = it->second;
    const bool seen = spmd_->observed.count(e.bar) && spmd_->observed.at(e.bar) > e.phase;
    if (e.landed && (write || seen)) {
        if (write) elements.erase(it);  // an ordinary store replaces the copy's element
        return;
    }
    TESSEL_THROW(RuntimeError)
        << (write ? "write to " : "read of ") << "shared memory " << s.name << " element " << flat
        << " by " << thread_label(spmd_) << ", which a TMA copy by " << thread_label(e.issuer)
        << (e.landed ? " brought on an mbarrier phase this thread has not waited for"
                     : " has not landed yet")
        << " (an mbarrier_wait is missing)" << loop_context();
}

}  // namespace tessel::internal
