// The loop-IR interpreter's asynchronous copies: cp_async, cp_async_commit, cp_async_wait (their
// semantics are in ir/IR.h).
//
// A thread's cp_async reads its source at once (the hardware may read it any time before the copy
// lands; a correct program does not change it meanwhile) and puts the destination elements *in
// flight*: they are recorded, with the values they will receive, in the thread's open group and
// in the block's map of elements in flight. cp_async_commit closes the open group;
// cp_async_wait(n) lands the thread's committed groups but the newest n, oldest first: each
// element is written by the waiting thread (so the shared-memory race detector sees the write in
// the phase of the wait; a barrier after it orders it before other threads' reads). Barriers land
// nothing. Reading or plainly writing an element in flight, by any thread, is a RuntimeError
// naming the buffer: the missing cp_async_wait is caught even where a barrier is present. A
// cp_async into an element that a wgmma not yet waited for reads is one too (the copy may land
// at once).
#include <sstream>

#include "LoopInterpreterImpl.h"

namespace tessel::internal {

std::string thread_label(const SpmdThread* t) {
    if (!t) return "this thread";
    std::ostringstream os;
    os << "thread (" << t->tid[0] << ", " << t->tid[1] << ", " << t->tid[2] << ")";
    return os.str();
}

void LoopInterpreter::exec_cp_async(const Call* op) {
    const Variable* dst_var = op->args[0].as<Variable>();
    const Variable* src_var = op->args[2].as<Variable>();
    InterpStorage* dst = slot_of(dst_var).storage;
    if (!dst)
        TESSEL_THROW(RuntimeError)
            << "cp_async into " << dst_var->name << ": buffer is neither allocated nor bound here"
            << loop_context();
    const Type elem = dst->array->dtype();
    InterpStorage& src = storage_for(src_var, elem, "cp_async from");
    if (spmd_ && !dst->shared)
        TESSEL_THROW(RuntimeError) << "cp_async into " << dst->name
                                   << ", which is not shared memory (cp.async copies global "
                                      "memory into shared memory)"
                                   << loop_context();
    if (src.shared)
        TESSEL_THROW(RuntimeError)
            << "cp_async from " << src.name
            << ", which is shared memory (cp.async reads global memory)" << loop_context();
    const int64_t dst_index = eval_int(op->args[1], "cp_async destination index");
    const int64_t src_index = eval_int(op->args[3], "cp_async source index");
    const int64_t bytes = eval_int(op->args[4], "cp_async bytes");
    const int64_t src_bytes = eval_int(op->args[5], "cp_async source bytes");
    const int64_t size = elem.bytes();
    if (src_bytes < 0 || src_bytes > bytes || src_bytes % size != 0 || bytes % size != 0)
        TESSEL_THROW(RuntimeError) << "cp_async of " << bytes << " bytes of " << elem << " from "
                                   << src.name << " with " << src_bytes << " source bytes (0 to "
                                   << bytes << ", whole elements expected)" << loop_context();
    const int64_t count = bytes / size, from_src = src_bytes / size;
    if (dst_index < 0 || dst_index + count > dst->array->size())
        flat_out_of_bounds("cp_async into", *dst, dst_index < 0 ? dst_index : dst_index + count - 1,
                           0, 1);
    if (from_src > 0 && (src_index < 0 || src_index + from_src > src.array->size()))
        flat_out_of_bounds("cp_async from", src,
                           src_index < 0 ? src_index : src_index + from_src - 1, 0, 1);
    if ((dst_index * size) % bytes != 0 || (from_src > 0 && (src_index * size) % bytes != 0))
        TESSEL_THROW(RuntimeError)
            << "cp_async of " << bytes << " bytes from " << src.name << " element " << src_index
            << " into " << dst->name << " element " << dst_index << ": both addresses must be "
            << "aligned to " << bytes << " bytes" << loop_context();
    InFlightMap& flying = in_flight();
    for (int64_t k = 0; k < count; ++k) {
        InFlightElement e{dst, dst_index + k, elem, Scalar{}};
        if (k < from_src) {
            e.value = read_element(src, elem, src_index + k);
        } else if (elem.is_float()) {
            e.value.f = 0;
        } else {
            e.value.i = 0;
        }
        const uint64_t key = element_key(dst->serial, dst_index + k);
        if (flying.count(key))
            TESSEL_THROW(RuntimeError)
                << "cp_async into shared memory " << dst->name << " element " << dst_index + k
                << ", which a copy by " << thread_label(flying.at(key))
                << " is still bringing (two copies in flight into one element; a "
                   "cp_async_wait is missing)"
                << loop_context();
        // The copy may land any time from now: into an element a wgmma still reads, it races
        // with the tensor cores even if the wgmma's wait comes before the cp_async_wait.
        if (spmd_ && spmd_->wgmma->active) {
            const auto& reads = spmd_->wgmma->pending_reads;
            if (auto it = reads.find(key); it != reads.end())
                TESSEL_THROW(RuntimeError)
                    << "cp_async into shared memory " << dst->name << " element " << dst_index + k
                    << " by " << thread_label(spmd_) << ", which a wgmma of "
                    << thread_label(it->second)
                    << " still reads (a wgmma_wait is missing before the overwrite)"
                    << loop_context();
        }
        flying.emplace(key, spmd_);
        open_copies_.push_back(e);
    }
}

void LoopInterpreter::exec_cp_async_wait(int64_t n) {
    InFlightMap& flying = in_flight();
    while (static_cast<int64_t>(committed_copies_.size()) > n) {
        for (const InFlightElement& e : committed_copies_.front()) {
            flying.erase(element_key(e.dst->serial, e.flat));
            write_element(*e.dst, e.elem, e.flat, e.value);
        }
        committed_copies_.erase(committed_copies_.begin());
    }
}

void LoopInterpreter::check_in_flight(const InterpStorage& s, int64_t flat, bool write) {
    auto it = in_flight().find(element_key(s.serial, flat));
    if (it == in_flight().end()) return;
    std::string who = spmd_ ? thread_label(spmd_) : std::string("this thread");
    TESSEL_THROW(RuntimeError) << (write ? "write to " : "read of ") << "shared memory " << s.name
                               << " element " << flat << " by " << who << ", which a cp_async by "
                               << thread_label(it->second) << " has not landed yet ("
                               << (write ? "written" : "read")
                               << " before cp.async landed; a cp_async_wait is missing)"
                               << loop_context();
}

}  // namespace tessel::internal
