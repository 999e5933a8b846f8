// The loop-IR interpreter's memory: buffer bindings, bounds-checked element accesses, and the
// race detector of parallel loops.
#include <sstream>

#include "LoopInterpreterImpl.h"

namespace tessel::internal {

namespace {

/// Masked-off lanes read as 0 of the element type.
Scalar zero_lane(Type elem) {
    Scalar z;
    if (elem.is_float()) {
        z.f = 0.0;
    } else {
        z.i = 0;
    }
    return z;
}

}  // namespace

void LoopInterpreter::bind_buffer(const Var& var, HostArray* array, const std::string& name) {
    TESSEL_CHECK(var.defined() && var.type().is_handle())
        << "loop interpreter: binding a non-handle variable to array " << name;
    auto storage = std::make_unique<InterpStorage>();
    storage->array = array;
    storage->name = name;
    storage->serial = next_serial_++;
    slot_of(var.get()).storage = storage.get();
    bound_.push_back(std::move(storage));
}

BufferSlot& LoopInterpreter::slot_of(const Variable* v) {
    // A few buffers per kernel: a linear scan starting at the last hit beats hashing.
    if (last_slot_ < slots_.size() && slots_[last_slot_]->var == v) return *slots_[last_slot_];
    for (size_t k = 0; k < slots_.size(); ++k) {
        if (slots_[k]->var == v) {
            last_slot_ = k;
            return *slots_[k];
        }
    }
    slots_.push_back(std::make_unique<BufferSlot>());
    slots_.back()->var = v;
    last_slot_ = slots_.size() - 1;
    return *slots_.back();
}

InterpStorage& LoopInterpreter::storage_for(const Variable* v, Type elem, const char* verb) {
    InterpStorage* s = slot_of(v).storage;
    if (!s)
        TESSEL_THROW(RuntimeError)
            << verb << " " << v->name << ": buffer is neither allocated nor bound here"
            << loop_context();
    if (s->array->dtype() != elem)
        TESSEL_THROW(RuntimeError) << verb << " " << s->name << ": accessed as " << elem
                                   << " but holds " << s->array->dtype() << loop_context();
    return *s;
}

const BufferLayout& LoopInterpreter::layout_of(const BufferNode* b) {
    for (const auto& l : layouts_)
        if (l->node == b) return *l;
    auto l = std::make_unique<BufferLayout>();
    l->node = b;
    for (const Expr& e : b->shape) l->shape.push_back(eval_int(e, "buffer extent"));
    if (b->strides.empty()) {
        l->strides.assign(l->shape.size(), 1);
        for (size_t d = l->shape.size(); d-- > 1;) l->strides[d - 1] = l->strides[d] * l->shape[d];
    } else {
        if (b->strides.size() != b->shape.size())
            TESSEL_THROW(RuntimeError) << "buffer " << b->name << " has " << b->strides.size()
                                       << " strides for " << b->shape.size() << " dimensions";
        for (const Expr& e : b->strides) l->strides.push_back(eval_int(e, "buffer stride"));
    }
    if (b->elem_offset.defined()) l->elem_offset = eval_int(b->elem_offset, "buffer offset");
    layouts_.push_back(std::move(l));
    return *layouts_.back();
}

Value LoopInterpreter::load(const Load* op, const Value& index, const Value& mask) {
    const Type elem = op->type.element_of();
    InterpStorage& s = storage_for(op->buffer_var.get(), elem, "load from");
    const int lanes = index.lane_count();
    const int64_t size = s.array->size();
    Value r{op->type, LaneVector(lanes, zero_lane(elem))};
    for (int l = 0; l < lanes; ++l) {
        if (mask.lanes[l].i == 0) continue;
        const int64_t i = index.lanes[l].i;
        if (i < 0 || i >= size) flat_out_of_bounds("load from", s, i, l, lanes);
        r.lanes[l] = read_element(s, elem, i);
    }
    return r;
}

Value LoopInterpreter::buffer_load(const BufferLoad* op, const std::vector<Value>& indices,
                                   const Value& mask) {
    const BufferNode* b = op->buffer.get();
    const Type elem = b->dtype.element_of();
    InterpStorage& s = storage_for(b->data.get(), elem, "load from");
    const int lanes = op->type.lanes;
    Value r{op->type, LaneVector(lanes, zero_lane(elem))};
    for (int l = 0; l < lanes; ++l) {
        if (mask.lanes[l].i == 0) continue;
        r.lanes[l] = read_element(s, elem, buffer_offset(b, s, indices, l, "load from"));
    }
    return r;
}

int64_t LoopInterpreter::buffer_offset(const BufferNode* b, InterpStorage& s,
                                       const std::vector<Value>& idx, int lane, const char* verb) {
    const BufferLayout& layout = layout_of(b);
    int64_t flat = layout.elem_offset;
    int bad_dim = -1;
    for (size_t d = 0; d < idx.size(); ++d) {
        const int64_t i = idx[d].lanes[idx[d].lane_count() == 1 ? 0 : lane].i;
        if (bad_dim < 0 && (i < 0 || i >= layout.shape[d])) bad_dim = static_cast<int>(d);
        flat += i * layout.strides[d];
    }
    if (bad_dim < 0 && flat >= 0 && flat < s.array->size())
        return b->swizzle.defined() ? b->swizzle.apply(flat) : flat;  // stays in the buffer
    std::vector<int64_t> index;
    for (const Value& v : idx) index.push_back(v.lanes[v.lane_count() == 1 ? 0 : lane].i);
    std::ostringstream os;
    os << verb << " " << b->name << " out of bounds: ";
    if (idx.empty() || idx.back().lane_count() > 1 || idx.front().lane_count() > 1)
        os << "lane " << lane << " ";
    os << "index " << format_index(index);
    if (bad_dim >= 0) {
        os << " (dimension " << bad_dim << ": " << index[bad_dim] << " not in [0, "
           << layout.shape[bad_dim] << ")), shape " << format_index(layout.shape);
    } else {
        os << " is element " << flat << " of " << s.name << ", size " << s.array->size();
    }
    TESSEL_THROW(RuntimeError) << os.str() << loop_context();
}

Scalar LoopInterpreter::read_element(InterpStorage& s, Type elem, int64_t flat) {
    if (!parallel_.empty()) track_access(s, flat, false);
    if (s.shared) track_shared(s, flat, false);
    if (!in_flight().empty() && (s.shared || !spmd_)) check_in_flight(s, flat, false);
    if (spmd_ && spmd_->wgmma->active) check_wgmma_access(s, flat, false);
    if (spmd_ && s.shared && !spmd_->tma->elements.empty()) check_tma_access(s, flat, false);
    Scalar v;
    if (elem.is_float()) {
        v.f = s.array->get(flat);
    } else {
        v.i = s.array->get_int(flat);
    }
    return v;
}

void LoopInterpreter::write_element(InterpStorage& s, Type elem, int64_t flat, Scalar v) {
    if (!parallel_.empty()) track_access(s, flat, true);
    if (s.shared) track_shared(s, flat, true);
    if (!in_flight().empty() && (s.shared || !spmd_)) check_in_flight(s, flat, true);
    if (spmd_ && spmd_->wgmma->active) check_wgmma_access(s, flat, true);
    if (spmd_ && s.shared && !spmd_->tma->elements.empty()) check_tma_access(s, flat, true);
    if (elem.is_float()) {
        s.array->set(flat, v.f);
    } else {
        s.array->set_int(flat, v.i);
    }
}

void LoopInterpreter::track_access(const InterpStorage& s, int64_t flat, bool write) {
    const uint64_t key = (s.serial << kElementBits) | static_cast<uint64_t>(flat);
    for (const auto& par : parallel_) {
        if (s.serial >= par->first_private_serial) continue;  // private to the iteration
        auto it = par->writer.find(key);
        if (it == par->writer.end()) {
            if (!write) {
                // Remember who read it: a later write by another iteration is a race too.
                auto [r, fresh] = par->reader.emplace(key, par->iteration);
                if (!fresh && r->second != par->iteration) r->second = -1;
                continue;
            }
            auto r = par->reader.find(key);
            if (r != par->reader.end() && r->second != par->iteration) {
                std::ostringstream who;
                if (r->second >= 0)
                    who << "iteration " << r->second;
                else
                    who << "another iteration";
                TESSEL_THROW(RuntimeError)
                    << "race in parallel loop " << par->loop->loop_var.name() << ": iteration "
                    << par->iteration << " writes element " << flat << " of " << s.name
                    << ", which " << who.str() << " read" << loop_context();
            }
            par->writer.emplace(key, par->iteration);
            continue;
        }
        if (it->second == par->iteration) continue;
        TESSEL_THROW(RuntimeError)
            << "race in parallel loop " << par->loop->loop_var.name() << ": iteration "
            << par->iteration << " " << (write ? "writes" : "reads") << " element " << flat
            << " of " << s.name << ", which iteration " << it->second << " wrote" << loop_context();
    }
}

void LoopInterpreter::flat_out_of_bounds(const char* verb, const InterpStorage& s, int64_t index,
                                         int lane, int lanes) {
    std::ostringstream os;
    os << verb << " " << s.name << " out of bounds: ";
    if (lanes > 1) os << "lane " << lane << " of " << lanes << ", ";
    os << "index " << index << ", size " << s.array->size();
    TESSEL_THROW(RuntimeError) << os.str() << loop_context();
}

std::string LoopInterpreter::loop_context() const {
    if (loops_.empty()) return "";
    std::ostringstream os;
    os << " (";
    for (size_t k = 0; k < loops_.size(); ++k)
        os << (k ? ", " : "") << loops_[k].var->name << "=" << loops_[k].value;
    os << ")";
    return os.str();
}

}  // namespace tessel::internal
