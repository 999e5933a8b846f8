"""Jobs for tessel-tune from Python (docs/daemon.md): extract_tasks records the registered
operators a function calls with their counts, and writes a job that tessel-tune accepts; a bad job
is refused with every problem."""
import json

import pytest

import tessel as ts


def _network(x, w1, w2, fc):
    y = ts.op.relu(ts.op.conv2d_nchw(x, w1, stride=1, padding=1))
    y = ts.op.relu(ts.op.conv2d_nchw(y, w1, stride=1, padding=1))  # the same layer again
    y = ts.op.conv2d_nchw(y, w2, stride=2, padding=(1, 1))
    y = ts.op.global_pool2d(y, "avg")
    y = ts.op.reshape(y, (1, 16))  # no workload recorded: a layout op
    return ts.op.dense(y, fc, activation="gelu")


def _inputs():
    return (ts.placeholder((1, 8, 14, 14), name="x"), ts.placeholder((8, 8, 3, 3), name="w1"),
            ts.placeholder((16, 8, 3, 3), name="w2"), ts.placeholder((10, 16), name="fc"))


def test_extract_tasks_counts_the_calls_and_writes_a_job(tmp_path):
    path = tmp_path / "net.json"
    tasks = ts.auto_schedule.extract_tasks(_network, *_inputs(), job=str(path),
                                           target="llvm -num-cores=2", trials_per_task=32,
                                           measurements_per_round=8)
    workloads = [(t["workload"], t["weight"]) for t in tasks]
    assert workloads == [("op.conv2d_nchw", 2), ("op.unary", 2), ("op.conv2d_nchw", 1),
                         ("op.global_pool2d", 1), ("op.dense", 1)]
    assert tasks[0]["params"] == [1, 8, 14, 14, 8, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 1,
                                  "float32"]
    assert tasks[2]["params"][6] == [2, 2]
    assert tasks[4]["params"] == [1, 10, 16, 0, "gelu", "float32"]
    job = json.loads(path.read_text())
    assert job["trials_per_task"] == 32 and job["measurements_per_round"] == 8
    checked = json.loads(ts.auto_schedule.check_job(path.read_text()))
    assert checked["trials"] == 32 * 5
    assert [t["weight"] for t in checked["tasks"]] == [2, 2, 1, 1, 1]
    # every recorded task builds: its workload makes the computation the call made
    for t in tasks:
        ts.make_workload(t["workload"], t["params"])
    # the wrappers are gone afterwards
    assert ts.op.conv2d_nchw.__name__ == "conv2d_nchw"
    assert "recorded" not in repr(ts.op.conv2d_nchw)


def test_a_bad_job_is_refused_with_every_problem(tmp_path):
    with pytest.raises(RuntimeError) as e:
        ts.auto_schedule.write_job(tmp_path / "bad.json",
                                   [{"workload": "op.nope", "params": [], "weight": 1},
                                    {"workload": "matmul", "params": [4], "weight": 1}],
                                   target="llvm -num-cores=zero", trials=-1)
    message = str(e.value)
    assert "4 problems" in message
    for needle in ("target", "trials", "op.nope", "tasks[1]"):
        assert needle in message
    assert not (tmp_path / "bad.json").exists()
    with pytest.raises(ValueError):
        ts.auto_schedule.extract_tasks(lambda: None, job=str(tmp_path / "empty.json"))


def _tessel_tune():
    import pathlib
    tool = pathlib.Path(ts.__file__).resolve().parents[2] / "tools" / "tessel-tune" / "tessel-tune"
    if not tool.exists():
        pytest.skip("tessel-tune is not built beside this tessel package")
    return str(tool)


def test_a_job_from_python_runs_and_tessel_tune_plots_it(tmp_path):
    """The job extract_tasks writes runs in tessel-tune; `plot` draws its logs through this
    Python (TESSEL_PYTHON), or says that matplotlib is missing."""
    import os
    import subprocess
    import sys
    if "llvm" not in ts.targets():
        pytest.skip("CPU candidates need the LLVM backend")
    tool = _tessel_tune()
    a, b = ts.placeholder((16, 16), name="a"), ts.placeholder((16, 16), name="b")
    ts.auto_schedule.extract_tasks(lambda x, y: ts.op.matmul(x, y), a, b, job=str(tmp_path / "mm.json"),
                                   target="llvm -num-cores=2", trials=8, measurements_per_round=8,
                                   search={"population": 32, "generations": 1, "min_programs": 8},
                                   measure={"min_repeat_ms": 1})
    env = dict(os.environ, TESSEL_PYTHON=sys.executable,
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    logs = tmp_path / "logs"
    run = subprocess.run([tool, "run", str(tmp_path / "mm.json"), "--log-dir", str(logs)],
                         capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "8/8 trials" in run.stderr
    plot = subprocess.run([tool, "plot", str(logs), "-o", str(tmp_path / "curve.png")],
                          capture_output=True, text=True, env=env, timeout=600)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert plot.returncode == 1
        assert "matplotlib" in plot.stderr
        return
    assert plot.returncode == 0, plot.stderr
    assert (tmp_path / "curve.png").read_bytes()[:4] == b"\x89PNG"


def test_every_recorded_operator_builds_its_workload():
    x = ts.placeholder((1, 4, 9, 9), name="x")
    calls = [
        lambda: ts.op.depthwise_conv2d_nchw(x, ts.placeholder((8, 1, 3, 3)), stride=2, padding=1),
        lambda: ts.op.conv2d_transpose_nchw(x, ts.placeholder((4, 6, 3, 3)), stride=2,
                                            output_padding=1),
        lambda: ts.op.conv2d_nhwc(ts.placeholder((1, 9, 9, 4)), ts.placeholder((3, 3, 4, 5))),
        lambda: ts.op.pool2d(x, "max", 3, stride=2, padding=1),
        lambda: ts.op.adaptive_avg_pool2d(x, (2, 3)),
        lambda: ts.op.batch_norm(x, *[ts.placeholder((4,)) for _ in range(4)]),
        lambda: ts.op.rms_norm(ts.placeholder((6, 8)), ts.placeholder((8,))),
        lambda: ts.op.layer_norm(ts.placeholder((6, 8)), ts.placeholder((8,)), ts.placeholder((8,))),
        lambda: ts.op.softmax(ts.placeholder((6, 8)), axis=0),
        lambda: ts.op.batch_matmul(ts.placeholder((2, 3, 4)), ts.placeholder((1, 4, 5))),
        lambda: ts.op.matmul(ts.placeholder((4, 3)), ts.placeholder((5, 4)), transpose_a=True,
                             transpose_b=True),
        lambda: ts.op.add(ts.placeholder((3, 4)), ts.placeholder((4,))),
    ]
    for call in calls:
        tasks = ts.auto_schedule.extract_tasks(call)
        assert len(tasks) == 1, call
        t = tasks[0]
        ours = ts.make_workload(t["workload"], t["params"])
        # the workload's output has the shape of the call's
        assert tuple(ours.outputs[0].shape) == tuple(call().shape), t
    # calls a workload cannot express are not recorded
    assert ts.auto_schedule.extract_tasks(
        lambda: ts.op.batch_matmul(ts.placeholder((2, 4, 3)), ts.placeholder((2, 4, 5)),
                                   transpose_a=True)) == []
