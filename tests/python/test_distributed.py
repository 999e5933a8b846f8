"""tessel-tune measuring on a Ray cluster (docs/distributed.md), on one machine: a head and three
nodes of ray.cluster_utils.Cluster, shared by the tests of this module (one start-up), and the
simulated worker (measure.simulate_ms: each candidate costs a time derived from its steps), so a
cluster run must write exactly the records of a local run with the same seed, apart from the
timestamps — also when a node's raylet is killed mid-job, when a node joins, when two jobs share
the cluster, and when the daemon itself is killed and resumed.

scripts/test.sh installs Ray and sets TESSEL_TEST_REQUIRE_RAY=1: there, a missing Ray fails."""
import collections
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

import pytest

import tessel as ts
from tessel.distributed import node_resources, target_resource
from tessel.distributed._driver import check_hello

pytestmark = pytest.mark.xdist_group("ray_cluster")  # one cluster: these tests on one worker

# Token authentication on, as docs/distributed.md asks of every cluster; Ray reads it at import.
os.environ.setdefault("RAY_AUTH_MODE", "token")
if os.environ["RAY_AUTH_MODE"] == "token":
    os.environ.setdefault("RAY_AUTH_TOKEN", os.urandom(24).hex())

TARGET = "llvm -num-cores=2"
TRIALS = 32
SIMULATE_MS = 40


def _ray():
    try:
        import ray  # noqa: F401
    except ImportError:
        if os.environ.get("TESSEL_TEST_REQUIRE_RAY") == "1":
            raise
        pytest.skip("Ray is not installed (pip install ray); the cluster tests need it")
    return ray


def _tessel_tune():
    tool = pathlib.Path(ts.__file__).resolve().parents[2] / "tools" / "tessel-tune" / "tessel-tune"
    if not tool.exists():
        pytest.skip("tessel-tune is not built beside this tessel package")
    return str(tool)


def _env():
    return dict(os.environ, TESSEL_PYTHON=sys.executable,
                PYTHONPATH=os.pathsep.join(p for p in sys.path if p))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A head (no devices) and three nodes offering one device each of TARGET."""
    _ray()
    if "llvm" not in ts.targets():
        pytest.skip("CPU candidates need the LLVM backend")
    from ray.cluster_utils import Cluster

    os.environ["PYTHONPATH"] = _env()["PYTHONPATH"]  # the nodes' actors import this tessel
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    resources = {target_resource(TARGET): 1}
    for _ in range(3):
        c.add_node(num_cpus=1, resources=resources)
    c.wait_for_nodes()
    yield c
    c.shutdown()


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    path = tmp_path_factory.mktemp("job") / "mm.json"
    a, b = ts.placeholder((16, 16), name="a"), ts.placeholder((16, 16), name="b")
    ts.auto_schedule.extract_tasks(lambda x, y: ts.op.matmul(x, y), a, b, job=str(path),
                                   target=TARGET, trials=TRIALS, measurements_per_round=8,
                                   search={"population": 32, "generations": 1, "min_programs": 8},
                                   measure={"simulate_ms": SIMULATE_MS})
    return str(path)


def _records(log_dir, keep_run_seconds=True):
    """Every record of a job's logs, without its timestamp, in order."""
    out = []
    for f in sorted(pathlib.Path(log_dir).glob("*.jsonl")):
        for line in f.read_text().splitlines():
            r = json.loads(line)
            del r["result"]["timestamp"]
            if not keep_run_seconds:
                del r["result"]["run_seconds"]  # the simulated device time
            out.append(r)
    return out


def _records_without_run_seconds(records):
    return [dict(r, result={k: v for k, v in r["result"].items() if k != "run_seconds"})
            for r in records]


def _run(job, logs, *extra, check=True, env=None):
    p = subprocess.run([_tessel_tune(), "run", job, "--log-dir", str(logs), "-q", *extra],
                       capture_output=True, text=True, env=dict(_env(), **(env or {})),
                       timeout=300)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def _start(job, logs, *extra, env=None):
    return subprocess.Popen([_tessel_tune(), "run", job, "--log-dir", str(logs), "-q", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(_env(), **(env or {})))


def _wait_for_records(logs, n, proc, timeout=120):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        files = list(pathlib.Path(logs).glob("*.jsonl"))
        if files and sum(len(f.read_text().splitlines()) for f in files) >= n:
            return
        assert proc.poll() is None, proc.communicate()[1]
        time.sleep(0.05)
    raise AssertionError("no %d records in %s s" % (n, timeout))


def _measured_per_node(stderr):
    """The driver's closing line: candidates measured per node address."""
    lines = [l for l in stderr.splitlines() if "measured per node" in l]
    assert lines, stderr
    return json.loads(lines[-1].split("measured per node: ", 1)[1])


@pytest.fixture(scope="module")
def local_records(job, tmp_path_factory):
    logs = tmp_path_factory.mktemp("local")
    _run(job, logs)
    records = _records(logs)
    assert len(records) >= TRIALS
    return records


def test_three_nodes_write_the_records_of_a_local_run(cluster, job, local_records, tmp_path):
    p = _run(job, tmp_path, "--cluster", cluster.address)
    assert _records(tmp_path) == local_records
    per_node = _measured_per_node(p.stderr)
    assert len([n for n in per_node.values() if n > 0]) == 3, per_node
    assert sum(per_node.values()) == len(local_records)


def test_search_ahead_on_three_nodes_writes_a_local_search_ahead_runs_records(
        cluster, job, local_records, tmp_path):
    """search_ahead: round N+1 is searched while round N measures on the nodes, from the history
    without round N; the records depend on the option alone, so a local run (which measures,
    then searches) writes the same ones."""
    _run(job, tmp_path / "local", "--search-ahead", "true")
    expected = _records(tmp_path / "local")
    trials = [r for r in expected if r["provenance"]["origin"] not in ("remeasure", "check")]
    assert len(trials) == TRIALS
    assert expected != local_records  # round 1 searched without round 0: random, not chosen
    _run(job, tmp_path / "cluster", "--search-ahead", "true", "--cluster", cluster.address)
    assert _records(tmp_path / "cluster") == expected


def test_builds_run_where_the_job_says(cluster, job, tmp_path):
    """--simulate-builds: each candidate is built for real before its simulated time. "daemon":
    every candidate reaches its node built (the driver's trace says so); "nodes": none does;
    "auto": the daemon builds from the front while idle nodes build from the back. The records
    are a local run's in each, build times aside."""
    def records(logs):
        return [dict(r, result={k: v for k, v in r["result"].items() if k != "build_seconds"})
                for r in _records(logs)]

    _run(job, tmp_path / "local", "--simulate-builds", "true")
    expected = records(tmp_path / "local")
    ok = [r for r in _records(tmp_path / "local") if r["result"]["error_code"] == "none"]
    assert all(r["result"]["build_seconds"] > 0
               for r in ok if r["provenance"]["origin"] != "check")
    # The final check times each schedule several times in one request: built once, its
    # repeats' build took no time.
    checked = {}
    for r in ok:
        if r["provenance"]["origin"] == "check":
            checked.setdefault(json.dumps(r["schedule"]), []).append(r["result"]["build_seconds"])
    assert checked and all(sum(b > 0 for b in v) == 1 for v in checked.values())
    for mode in ("daemon", "nodes", "auto"):
        trace = tmp_path / (mode + ".trace")
        _run(job, tmp_path / mode, "--cluster", cluster.address, "--simulate-builds", "true",
             "--cluster-build", mode, env={"TESSEL_DISTRIBUTED_TRACE": str(trace)})
        assert records(tmp_path / mode) == expected, mode
        built = [json.loads(line)["built"] for line in trace.read_text().splitlines()]
        assert len(built) == len(expected), mode
        if mode == "daemon":
            assert all(built)
        if mode == "nodes":
            assert not any(built)


def test_a_node_killed_mid_job_costs_a_remeasurement_not_a_record(cluster, job, local_records,
                                                                  tmp_path):
    proc = _start(job, tmp_path, "--cluster", cluster.address)
    _wait_for_records(tmp_path, 8, proc)
    victim = cluster.list_all_nodes()[-1]
    os.kill(victim.all_processes["raylet"][0].process.pid, signal.SIGKILL)  # kill -9 its raylet
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert _records(tmp_path) == local_records  # nothing lost, nothing twice
    cluster.remove_node(victim, allow_graceful=False)
    cluster.add_node(num_cpus=1, resources={target_resource(TARGET): 1})  # back to three
    cluster.wait_for_nodes()


def test_a_node_added_mid_job_gets_work(cluster, job, local_records, tmp_path):
    # Slow candidates (1 s: about 14 s of job on three nodes), so that the job outlasts the new
    # node's start and its actor's import of tessel also on a loaded 2-core CI machine (at 250 ms
    # the job once ended before the new actor answered).
    proc = _start(job, tmp_path, "--cluster", cluster.address, "--simulate-ms", "1000")
    _wait_for_records(tmp_path, 1, proc)
    new = cluster.add_node(num_cpus=1, resources={target_resource(TARGET): 1})
    try:
        cluster.wait_for_nodes()
        _, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr
        assert _records(tmp_path, False) == _records_without_run_seconds(local_records)
        per_node = _measured_per_node(stderr)
        assert per_node.get(new.node_id, 0) > 0, per_node
    finally:  # back to three nodes for the tests after this one, whatever happened here
        cluster.remove_node(new, allow_graceful=False)


def test_two_jobs_share_the_cluster(cluster, job, local_records, tmp_path):
    """Each job gets its own results, and a device serves one job at a time: an actor holds
    its node's device resource (one unit a device) as long as its job runs, so the two drivers'
    traces (each candidate's node and the window its actor held the device for) never overlap
    on a node. The second job starts once the first holds every node (its actors answered before
    its first record): it waits, and measures on the nodes the first leaves. The first's slower
    candidates (250 ms) make it outlast the start of the second's actors."""
    traces = [tmp_path / "a.trace", tmp_path / "b.trace"]
    a = _start(job, tmp_path / "a", "--cluster", cluster.address, "--simulate-ms", "250",
               env={"TESSEL_DISTRIBUTED_TRACE": str(traces[0])})
    _wait_for_records(tmp_path / "a", 1, a)
    b = _start(job, tmp_path / "b", "--cluster", cluster.address, "--seed", "7",
               env={"TESSEL_DISTRIBUTED_TRACE": str(traces[1])})
    for p in (a, b):
        _, stderr = p.communicate(timeout=300)
        assert p.returncode == 0, stderr
    assert _records(tmp_path / "a", False) == _records_without_run_seconds(local_records)
    _run(job, tmp_path / "local7", "--seed", "7")
    seven = _records(tmp_path / "b")
    assert seven == _records(tmp_path / "local7") and seven != local_records
    windows = collections.defaultdict(list)  # node -> [(start, end, job)]
    for j, trace in enumerate(traces):
        lines = trace.read_text().splitlines()
        assert len(lines) == len(_records(tmp_path / "ab"[j])), trace
        for line in lines:
            t = json.loads(line)
            windows[t["node_id"]].append((t["window"][0], t["window"][1], j))
    shared = 0
    for node, ws in windows.items():
        ws.sort()
        for (s0, e0, j0), (s1, e1, j1) in zip(ws, ws[1:]):
            assert e0 <= s1, "node %s timed two candidates at once (jobs %d, %d)" % (node, j0, j1)
        shared += len({j for _, _, j in ws}) == 2
    assert shared > 0, "no node served both jobs: %s" % dict(windows)


def test_kill_9_of_the_daemon_leaves_no_actor_and_resumes(cluster, job, local_records, tmp_path):
    ray = _ray()
    proc = _start(job, tmp_path, "--cluster", cluster.address)
    _wait_for_records(tmp_path, 8, proc)
    proc.kill()
    proc.communicate()
    prefix = tmp_path.parent / (tmp_path.name + "_prefix")
    shutil.copytree(tmp_path, prefix)
    res = target_resource(TARGET)
    ray.init(address=cluster.address, logging_level="ERROR", log_to_driver=False)
    try:
        def free():  # every device free: no actor left holding one
            return ray.available_resources().get(res, 0) == ray.cluster_resources().get(res, -1)
        end = time.monotonic() + 60
        while not free() and time.monotonic() < end:
            time.sleep(0.2)
        assert free()
    finally:
        ray.shutdown()
    _run(job, tmp_path, "--cluster", cluster.address)
    _run(job, prefix)  # the same log resumed on this machine
    assert _records(tmp_path) == _records(prefix)
    origins = [r["provenance"]["origin"] for r in _records(tmp_path)]
    assert len([o for o in origins if o not in ("remeasure", "check")]) == TRIALS


def test_the_daemon_measures_there_and_status_shows_the_nodes(cluster, job, local_records,
                                                              tmp_path):
    spool = tmp_path / "spool"
    (spool / "queue").mkdir(parents=True)
    slow = json.loads(pathlib.Path(job).read_text())
    slow["measure"]["simulate_ms"] = 200  # so that status is read while the job runs
    (spool / "queue" / "mm.json").write_text(json.dumps(slow))
    proc = subprocess.Popen([_tessel_tune(), "daemon", "--spool", str(spool), "--once",
                             "--cluster", cluster.address], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env())
    seen = None
    end = time.monotonic() + 120
    while seen is None and time.monotonic() < end and proc.poll() is None:
        try:
            status = json.loads((spool / "status.json").read_text())
        except (OSError, ValueError):
            status = {}
        nodes = status.get("cluster", {}).get("nodes", [])
        if len([n for n in nodes if n["state"] == "alive" and n["measured"] > 0]) >= 3:
            seen = subprocess.run([_tessel_tune(), "status", str(spool)], capture_output=True,
                                  text=True, env=_env()).stdout
        time.sleep(0.05)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert seen is not None, stderr
    assert "cluster %s: connected, " % cluster.address in seen, seen
    assert seen.count(" alive ") >= 3, seen
    assert _records(spool / "logs" / "mm", False) == [
        dict(r, result={k: v for k, v in r["result"].items() if k != "run_seconds"})
        for r in local_records]


def test_a_head_lost_mid_job_falls_back_to_this_machine(job, local_records, tmp_path):
    """A cluster of its own (a head offering one device), shut down under a running job: the
    driver reports it lost, the daemon measures the rest of the job here."""
    _ray()
    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True,
                head_node_args={"num_cpus": 1, "resources": {target_resource(TARGET): 1}})
    try:
        env = dict(_env(), RAY_gcs_rpc_server_reconnect_timeout_s="3")  # the driver gives up soon
        proc = subprocess.Popen([_tessel_tune(), "run", job, "--log-dir", str(tmp_path), "-q",
                                 "--simulate-ms", "100", "--cluster", c.address],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        _wait_for_records(tmp_path, 8, proc)
    finally:
        c.shutdown()
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert "measuring on this machine from now on" in stderr, stderr
    assert _records(tmp_path, False) == [
        dict(r, result={k: v for k, v in r["result"].items() if k != "run_seconds"})
        for r in local_records]


def test_a_lost_cluster_falls_back_or_fails_as_configured(job, local_records, tmp_path):
    _ray()
    nowhere = "127.0.0.1:1"  # no Ray there
    env_timeout = ["--cluster", nowhere]
    p = _run(job, tmp_path / "local", *env_timeout, "--cluster-fallback", "local")
    assert "measuring on this machine" in p.stderr
    assert _records(tmp_path / "local") == local_records
    p = _run(job, tmp_path / "fail", *env_timeout, "--cluster-fallback", "fail", check=False)
    assert p.returncode == 1 and "is lost" in p.stderr, p.stderr


def test_the_jobs_cluster_field_and_the_flags_over_it(job, local_records, tmp_path):
    """The job file's cluster field sends the job there; --cluster-fallback overrides its
    fallback, --cluster its address."""
    _ray()
    spec = json.loads(pathlib.Path(job).read_text())
    spec["cluster"] = {"address": "127.0.0.1:1", "fallback": "fail"}  # no Ray there
    field_job = tmp_path / "field.json"
    field_job.write_text(json.dumps(spec))
    p = _run(str(field_job), tmp_path / "fail", check=False)
    assert p.returncode == 1 and "127.0.0.1:1" in p.stderr and "is lost" in p.stderr, p.stderr
    p = _run(str(field_job), tmp_path / "local", "--cluster-fallback", "local")
    assert "measuring on this machine" in p.stderr
    assert _records(tmp_path / "local") == local_records
    p = _run(str(field_job), tmp_path / "flag", "--cluster", "127.0.0.2:1", check=False)
    assert p.returncode == 1 and "127.0.0.2:1" in p.stderr, p.stderr
    spec["cluster"] = {"address": "nowhere", "fallback": "sometimes"}
    field_job.write_text(json.dumps(spec))
    p = _run(str(field_job), tmp_path / "bad", check=False)
    assert p.returncode == 65, p.stderr
    assert "cluster.fallback must be" in p.stderr and 'address "nowhere"' in p.stderr, p.stderr


def test_a_node_of_another_tessel_is_refused_with_a_clear_message():
    from tessel.distributed import PROTOCOL_VERSION
    ok = {"tessel_version": ts.__version__, "protocol": PROTOCOL_VERSION}
    assert check_hello(ok, ts.__version__) == ""
    why = check_hello(dict(ok, tessel_version="0.0.1"), ts.__version__)
    assert "runs tessel 0.0.1" in why and ts.__version__ in why
    assert "protocol" in check_hello(dict(ok, protocol=PROTOCOL_VERSION + 1), ts.__version__)


def test_target_resources_keep_targets_apart():
    assert target_resource("llvm -num-cores=2") != target_resource("llvm -num-cores=4")
    assert target_resource(ts.Target("llvm -num-cores=2")) == target_resource("llvm -num-cores=2")
    assert all(k.startswith("tessel_target:") for k in node_resources("llvm -num-cores=2"))


def test_a_run_is_answered_once_its_candidates_are_settled():
    """The driver's bookkeeping of one Run frame, without Ray: built candidates go first, "auto"
    takes the last one when none is built, "daemon" waits for a module, a dead node's candidate
    is measured again (not after the run failed), and a failed run is answered once nothing of
    it is in flight — also after a re-measurement (a lost count there would leave a failed run
    unanswered: a hang)."""
    from tessel.distributed._driver import Run

    request = {"candidates": [{"schedule": k} for k in range(4)]}
    run = Run(request, "res", "auto")
    run.built[2] = {"module": "..."}
    assert run.take() == 2 and run.take() == 3  # the built one, then the last
    run = Run(request, "res", "daemon")
    assert run.take() is None
    run.built[1] = {"module": "..."}
    assert run.take() == 1
    run = Run(request, "res", "nodes")
    assert run.take() == 0 and run.take() == 1
    run.requeue(1)  # its node died: measured again first
    assert list(run.todo) == [1, 2, 3] and run.inflight == 1
    assert run.take() == 1 and run.take() == 2
    run.done(0, "r0")
    run.fail("the task cannot be measured")  # candidate 1's measurement raised
    assert not run.todo and run.inflight == 1 and not run.answered()  # 2 is still measuring
    run.requeue(2)  # and its node dies: not measured again, the run is answered
    assert not run.todo and run.inflight == 0 and run.answered()
    run = Run(request, "res", "nodes")
    assert [run.take() for _ in range(4)] == [0, 1, 2, 3]
    for k in range(4):
        run.done(k, "r%d" % k)
    assert run.answered() and run.results == ["r0", "r1", "r2", "r3"]
