// InjectTmaStores: see the header.
#include "tessel/lower/InjectTmaStores.h"

#include "PassUtil.h"
#include "TmaCopies.h"
#include "tessel/ir/IRMutator.h"

namespace tessel {

namespace {

class TmaStores : public IRMutator {
public:
    using IRMutator::visit;

protected:
    Stmt visit(const AttrStmt* op) override {
        if (op->key != "tma_store_copy") return IRMutator::visit(op);
        const auto* data = op->value.as<Variable>();
        return Seq::make(
            {internal::call_stmt(Intrinsic::fence_proxy_async),
             internal::call_stmt(Intrinsic::thread_barrier),
             internal::on_first_thread(internal::tma_stores(op->body, data ? data->name : "?")),
             internal::call_stmt(Intrinsic::thread_barrier)});
    }
};

}  // namespace

Stmt inject_tma_stores(const Stmt& s) {
    return TmaStores().mutate(s);
}

}  // namespace tessel
