"""The committed tuning artefacts still load and apply: every job file under tuning_logs/jobs/
passes tessel-tune's check, and every log under tuning_logs/ and benchmarks/logs/ (plain, .gz,
.tar.gz, .tar.xz) reads without a skipped line, and its records replay on their tasks (each task's
fastest schedule and a spread of the others)."""
import gzip
import json
import pathlib
import tarfile

import pytest

import tessel as ts
from tessel import auto_schedule as autos

ROOT = pathlib.Path(__file__).resolve().parents[2]
LOG_FOLDERS = [ROOT / "tuning_logs", ROOT / "benchmarks" / "logs"]
REPLAYS_PER_TASK = 12


def _job_files():
    return sorted((ROOT / "tuning_logs" / "jobs").glob("*.json"))


def _logs():
    """(name, text) of every JSON-lines log, archives opened."""
    for folder in LOG_FOLDERS:
        for path in sorted(folder.rglob("*")):
            name = str(path.relative_to(ROOT))
            if path.suffix == ".jsonl":
                yield name, path.read_text()
            elif path.name.endswith(".jsonl.gz"):
                yield name, gzip.decompress(path.read_bytes()).decode()
            elif path.name.endswith((".tar.gz", ".tar.xz")):
                with tarfile.open(path) as tar:
                    for member in tar.getmembers():
                        if member.isfile() and member.name.endswith(".jsonl"):
                            text = tar.extractfile(member).read().decode()
                            yield f"{name}:{member.name}", text


def _params(params_json):
    # A dtype is written {"dtype": "float32"}; SearchTask takes its name.
    return tuple(p["dtype"] if isinstance(p, dict) and "dtype" in p else p
                 for p in json.loads(params_json))


def _replay_states(name, text):
    """The {"label", "schedule"} lines benchmarks/time_gemm_cuda_states.py times."""
    task = ts.SearchTask("op.matmul", [4096, 4096, 4096, 0, 0, "float32"], target="cuda -arch=sm_90")
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert lines, name
    for state in lines:
        task.apply_record(json.dumps(state["schedule"]))
    return len(lines)


@pytest.mark.parametrize("job", _job_files(), ids=lambda p: p.name)
def test_committed_jobs_pass_the_check(job):
    checked = json.loads(autos.check_job(job.read_text(), str(job)))
    assert checked["tasks"], job


def test_committed_logs_read_whole_and_replay(tmp_path):
    logs = list(_logs())
    assert len(logs) >= 20  # the shipped logs and the benchmarks' archives
    replayed = 0
    for name, text in logs:
        if name.endswith("_states.jsonl"):  # labelled states of the 4096^3 GEMM, not records
            replayed += _replay_states(name, text)
            continue
        path = tmp_path / "log.jsonl"
        path.write_text(text)
        records, skipped, reasons = ts.read_records(str(path))
        assert skipped == 0, f"{name}: {reasons}"
        assert records, name
        by_task = {}
        for r in records:
            if r.workload:  # a task of a registered workload (migrated v1 lines have none)
                key = (r.workload, r.params_json, r.target, tuple(r.constant))
                by_task.setdefault(key, []).append(r)
        for (workload, params, target, constant), rs in by_task.items():
            # Inputs marked constant (weights a schedule may pack once) are part of the task.
            task = ts.SearchTask(workload, _params(params), target=target, constant=list(constant))
            # Records apply by the DAG's hash (a dtype written as a plain string in older logs
            # gives another key, the same computation).
            assert task.dag_hash == rs[0].dag_hash, name
            ok = sorted((r for r in rs if r.ok), key=lambda r: r.mean_cost)
            step = max(1, len(ok) // REPLAYS_PER_TASK)
            for r in ok[::step][:REPLAYS_PER_TASK]:
                task.apply_record(r.schedule_json)
                replayed += 1
    assert replayed > 100
