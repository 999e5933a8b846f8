// --cluster: a job measured on a Ray cluster (docs/distributed.md) through ClusterMeasureRunner.
#include <CLI/CLI.hpp>

#include "Commands.h"
#include "tessel/Target.h"

namespace tessel::tune_tool {

void add_cluster_flags(CLI::App& cmd, ClusterArgs& args) {
    cmd.add_option("--cluster", args.address,
                   "measure on the Ray cluster at ADDRESS (the head's HOST:PORT, or auto) instead "
                   "of this machine (docs/distributed.md; over the job's cluster.address)")
        ->type_name("ADDRESS");
    cmd.add_option("--cluster-fallback", args.fallback,
                   "when the cluster is lost: local (measure here, the default), wait (reconnect), "
                   "fail (over the job's cluster.fallback)")
        ->check(CLI::IsMember({"local", "wait", "fail"}))
        ->type_name("local|wait|fail");
    cmd.add_option("--cluster-build", args.build,
                   "where candidates are built: auto (this machine builds ahead while the nodes "
                   "time; an idle node builds its own, the default), daemon (only here), nodes "
                   "(each node builds what it times) (over the job's cluster.build)")
        ->check(CLI::IsMember({"auto", "daemon", "nodes"}))
        ->type_name("auto|daemon|nodes");
}

std::shared_ptr<ClusterMeasureRunner> make_cluster_runner(const ClusterArgs& args, const Job& job) {
    ClusterOptions o;
    o.address = args.address.empty() ? job.cluster.address : args.address;
    if (o.address.empty()) return nullptr;
    o.fallback =
        *cluster_fallback_from_name(args.fallback.empty() ? job.cluster.fallback : args.fallback);
    o.build = *cluster_build_from_name(args.build.empty() ? job.cluster.build : args.build);
    o.warm_targets = {Target(job.target).str()};
    o.local_options = job.tuning.measure;
    return std::make_shared<ClusterMeasureRunner>(o);
}

}  // namespace tessel::tune_tool
