// Measurement on a Ray cluster (docs/distributed.md): a MeasureRunner that hands each request,
// as JSON, to a driver process (`python -m tessel.distributed serve`, started here, dying with
// this process) which spreads the candidates over long-lived actors on the cluster's nodes, one
// per device, each owning a warm tessel-measure worker. The results come back in the request's
// order; the log stays on this machine, the only truth.
//
//   ClusterOptions o;
//   o.address = "10.0.0.1:6379";
//   JobRunOptions run;
//   run.measure_runner = std::make_shared<ClusterMeasureRunner>(o);
//
// The channel to the driver is a Unix socket pair carrying the measurement protocol's frames
// (runtime/MeasureProtocol.h): Setup (the address, this tessel's version, the targets to warm)
// answered by the cluster's nodes; Run (a MeasureRequest) answered by its results, and while it
// runs, Built frames carrying the modules this machine built for it (ClusterBuild); Exit. A node
// that dies mid-measurement costs a re-measurement elsewhere (the driver's business); a lost
// driver or head is this runner's: it falls back as ClusterOptions::fallback says.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessel/auto_schedule/measure/MeasureRunner.h"

namespace tessel {

/// What a ClusterMeasureRunner does when the cluster is lost (the driver died, or reported that
/// the head no longer answers).
enum class ClusterFallback {
    Local,  ///< measure this request and every later one on this machine (LocalMeasureRunner)
    Wait,   ///< start the driver again every ClusterOptions::retry_seconds until it connects
    Fail,   ///< throw RuntimeError: the job stops, its logs intact
};

/// "local", "wait", "fail".
const char* cluster_fallback_name(ClusterFallback f);
/// The fallback named `name`; nullopt for an unknown name.
std::optional<ClusterFallback> cluster_fallback_from_name(const std::string& name);

/// Where a cluster job's candidates are built (docs/distributed.md, "Where the builds run").
enum class ClusterBuild {
    /// The daemon builds the request's candidates in order, ahead of the nodes, and sends each
    /// group of modules as it is done; a node with nothing built to time builds its next
    /// candidate itself (taken from the request's end), so neither side waits for the other.
    Auto,
    /// Only the daemon builds (its build_threads); the nodes only time.
    Daemon,
    /// Each node builds what it times: nothing built travels.
    Nodes,
};

/// "auto", "daemon", "nodes".
const char* cluster_build_name(ClusterBuild b);
/// The mode named `name`; nullopt for an unknown name.
std::optional<ClusterBuild> cluster_build_from_name(const std::string& name);

/// Where and how to measure on a cluster.
struct ClusterOptions {
    /// Ray's address: "HOST:PORT" of the head's GCS (6379 by default), or "auto".
    std::string address;
    ClusterFallback fallback = ClusterFallback::Local;
    ClusterBuild build = ClusterBuild::Auto;
    /// Seconds between attempts to reach a lost cluster again (ClusterFallback::Wait).
    double retry_seconds = 10;
    /// Seconds the driver may take to connect and report the nodes.
    double connect_timeout_seconds = 120;
    /// Measurements of a candidate whose node dies under it before it is recorded as a
    /// worker_error.
    int max_attempts = 3;
    /// The Python that runs the driver (with tessel and ray importable); empty:
    /// $TESSEL_PYTHON, else "python3".
    std::string python;
    /// Targets (canonical strings) whose actors the driver starts at once, before the first
    /// request, so that the first round does not pay for their start.
    std::vector<std::string> warm_targets;
    /// Options of the fallback's LocalMeasureRunner.
    MeasureOptions local_options;
};

/// Measures requests on a Ray cluster through a driver process (file comment).
class ClusterMeasureRunner : public MeasureRunner {
public:
    /// Starts the driver and connects to the cluster; on failure, falls back at once as
    /// options.fallback says (Fail: RuntimeError naming the cause).
    explicit ClusterMeasureRunner(ClusterOptions options);
    ~ClusterMeasureRunner() override;
    ClusterMeasureRunner(const ClusterMeasureRunner&) = delete;
    ClusterMeasureRunner& operator=(const ClusterMeasureRunner&) = delete;

    std::vector<MeasureResult> run(const MeasureRequest& request) override;
    /// candidates and total (the wall time of run(), the farm's side); the rest is the nodes'.
    MeasureStats stats() const override;
    /// True while the cluster measures; false after a fallback to local measurement.
    bool times_elsewhere() const override;

    /// The cluster as the driver last reported it, as a JSON object: "address", "state"
    /// ("connected", "local" after a fallback, "waiting"), "message", and "nodes" (one object
    /// per node: "node_id", "address", "state", "actors", "measured", "message"). Safe to call
    /// while run() runs on another thread.
    std::string status_json() const;

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace tessel
