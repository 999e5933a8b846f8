// --cluster: a job measured on a Ray cluster (docs/distributed.md) through ClusterMeasureRunner.
#include <CLI/CLI.hpp>

#include "Commands.h"
#include "tessel/Target.h"

namespace tessel::tune_tool {

void add_cluster_flags(CLI::App& cmd, ClusterArgs& args) {
    cmd.add_option("--cluster", args.address,
                   "measure on the Ray cluster at ADDRESS (the head's HOST:PORT, or auto) instead "
                   "of this machine (docs/distributed.md)")
        ->type_name("ADDRESS");
    cmd.add_option("--cluster-fallback", args.fallback,
                   "when the cluster is lost: local (measure here), wait (reconnect), fail")
        ->check(CLI::IsMember({"local", "wait", "fail"}))
        ->type_name("local|wait|fail");
}

std::shared_ptr<ClusterMeasureRunner> make_cluster_runner(const ClusterArgs& args, const Job& job) {
    if (args.address.empty()) return nullptr;
    ClusterOptions o;
    o.address = args.address;
    o.fallback = *cluster_fallback_from_name(args.fallback);
    o.warm_targets = {Target(job.target).str()};
    o.local_options = job.tuning.measure;
    return std::make_shared<ClusterMeasureRunner>(o);
}

}  // namespace tessel::tune_tool
