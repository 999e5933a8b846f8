"""The tuner from Python (ts.auto_schedule.tune, docs/tuning.md "Tuning"): a tiny GEMM tuned for
two rounds writes one record per trial and apply-best builds its best schedule into a correct
kernel; a resumed tuning continues the trial count; errors are typed; the progress line and
bar; plot() draws the curve (skipped without matplotlib)."""
import io
import math

import numpy as np
import pytest

import tessel as ts
from tessel import auto_schedule as autos

from util import requires_llvm

# The tuner ranks candidates with the XGBoost cost model: without it tune() refuses to start.
pytestmark = pytest.mark.skipif(not autos.CostModel.available(), reason="built without XGBoost")

FAST = dict(measurements_per_round=4, population=64, generations=2, min_repeat_ms=5,
            min_programs=4, num_threads=2, build_threads=2, progress=False,
            print_schedule=False)


def small_task(n=32):
    return ts.SearchTask("matmul", (n, n, n, "float32"), target="llvm -num-cores=2")


@requires_llvm
def test_tune_writes_the_log_and_apply_best_builds_a_correct_kernel(tmp_path):
    task = small_task()
    log = tmp_path / "gemm.jsonl"
    r = autos.tune(task, trials=8, log_file=str(log), seed=3, **FAST)
    assert r.trials == 8 and r.resumed_trials == 0 and r.stop_reason == "trials"
    assert [x.measured for x in r.rounds] == [4, 4]
    assert r.rounds[1].chosen_by_model == 4 and r.rounds[1].states_scored > 0
    records, skipped, _ = ts.read_records(str(log))
    trials = [rec for rec in records if rec.is_trial]
    assert len(trials) == 8 and skipped == 0
    assert len({rec.schedule_json for rec in trials}) == 8
    # The fastest 3 re-measured after each round, and the default in the round after its trial
    # wherever it stands, up to 3 measurements each: a schedule costs the median of its
    # measurements.
    again = [rec for rec in records if rec.origin == "remeasure"]
    assert r.rounds[0].remeasured == 3 and r.rounds[1].remeasured in (3, 4)
    assert len(again) == sum(x.remeasured for x in r.rounds)
    default = trials[0].schedule_json
    assert trials[0].origin == "default"
    assert any(rec.schedule_json == default and rec.round == 1 for rec in again)
    assert {rec.schedule_json for rec in again} <= {rec.schedule_json for rec in trials}
    # Then the final check, last in the log: the 3 fastest and the default, in turns, 3 times.
    checked = [rec for rec in records if rec.origin == "check"]
    assert records[-len(checked):] == checked and not any(rec.is_trial for rec in checked)
    assert len(checked) in (9, 12) and default in {rec.schedule_json for rec in checked}
    assert r.final_seconds == r.best_seconds
    assert math.isfinite(r.default_seconds) and math.isfinite(r.search_best_seconds)
    assert r.best_is_default == (r.best_seconds == r.default_seconds)
    costs = ts.ScheduleCosts()
    for rec in records:
        costs.add(rec)
    assert max(costs.measurements(rec) for rec in records) <= 3
    assert costs.best()[0] == r.best_seconds
    assert not costs.behind_check(records[costs.best()[1]])
    assert r.best_schedule is not None and r.best_gflops > 0
    assert [p.trial for p in r.curve] == list(range(1, 9))
    assert r.curve[-1].best_seconds == r.best_seconds
    assert ([p.best_seconds for p in autos.tuning_curve(records)] ==
            [p.best_seconds for p in r.curve])

    A, B = task.dag.inputs
    C = task.dag.outputs[0]
    with ts.apply_history_best(str(log)):
        f = ts.build(ts.create_schedule(C), [A, B, C], task.target)
    a = np.random.rand(32, 32).astype("float32")
    b = np.random.rand(32, 32).astype("float32")
    c = np.zeros((32, 32), dtype="float32")
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


@requires_llvm
def test_tune_resumes_from_its_log(tmp_path):
    task = small_task()
    log = str(tmp_path / "resume.jsonl")
    autos.tune(task, trials=4, log_file=log, **FAST)
    r = autos.tune(task, trials=8, log_file=log, **FAST)
    assert r.resumed_trials == 4 and r.trials == 8
    assert [x.round for x in r.rounds] == [1]
    assert len({rec.schedule_json for rec in ts.read_records(log)[0]}) == 8


@requires_llvm
def test_restarts_begin_epochs_with_random_rounds(tmp_path):
    # restart_after=1: an epoch ends after each round whose last trial gained nothing.
    r = autos.tune(small_task(), trials=24, log_file=str(tmp_path / "restart.jsonl"),
                   restart_after=1, measure_default=False, **FAST)
    assert r.trials == 24
    epochs = [x.epoch for x in r.rounds]
    assert epochs == sorted(epochs) and epochs[0] == 0
    for before, after in zip(r.rounds, r.rounds[1:]):
        assert after.epoch == before.epoch + (1 if before.restarted else 0)
        if before.restarted:
            assert after.chosen_by_model == 0 and after.random == after.measured


def test_tune_refuses_bad_options_and_another_tasks_log(tmp_path):
    with pytest.raises(RuntimeError, match="no log_file"):
        autos.tune(small_task(), trials=4, **FAST)
    with pytest.raises(RuntimeError, match="restart_after must be at least 0"):
        autos.tune(small_task(), trials=4, log_file=str(tmp_path / "r.jsonl"),
                   **{**FAST, "restart_after": -1})
    with pytest.raises(RuntimeError, match="measurements_per_round must be at least 1"):
        autos.tune(small_task(), trials=4, log_file=str(tmp_path / "x.jsonl"),
                   **{**FAST, "measurements_per_round": 0})
    other = small_task(16)
    log = tmp_path / "other.jsonl"
    s = other.initial_schedule()
    result = ts.Measurer(min_repeat_ms=2).measure(other, [s])[0] if "llvm" in ts.targets() \
        else None
    if result is None:
        pytest.skip("recording a measurement needs the LLVM backend")
    ts.RecordWriter(str(log)).append([ts.make_record(other, s, result)])
    with pytest.raises(RuntimeError, match="holds records of another task"):
        autos.tune(small_task(), trials=4, log_file=str(log), **FAST)


@requires_llvm
def test_plain_progress_lines_and_the_printed_schedule(tmp_path, capsys):
    task = small_task()
    stream = io.StringIO()  # not a terminal: one line per round
    reporter = autos._PlainProgress(stream)
    r = autos._native._tune(
        task, trials=8, log_file=str(tmp_path / "p.jsonl"), measurements_per_round=4, seed=0,
        population=64, generations=2, mutation_prob=0.85, eps_greedy=0.05, early_stopping=0,
        num_threads=2, number=3, repeat=1, min_repeat_ms=5.0, flush_cache=False,
        build_timeout=15.0, run_timeout=10.0, build_threads=2, worker_path="", min_programs=4,
        verbose=0, on_progress=reporter.update)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2 and "\r" not in stream.getvalue()
    assert lines[0].startswith("matmul: 4/8 trials, best ") and "GFLOP/s" in lines[0]
    assert "| round 1: search " in lines[1] and ", train " in lines[1]
    assert r.trials == 8

    autos.tune(task, trials=12, log_file=str(tmp_path / "p.jsonl"),
               **{**FAST, "print_schedule": True})
    out = capsys.readouterr().out
    assert out.startswith("# best of 12 trials: ")
    assert " in the final check (" in out.splitlines()[0]
    assert "the search's timings of its best: " in out.splitlines()[0]
    assert "def apply_schedule(s):" in out


def test_the_final_check_is_logged_and_agrees_with_steady_timings(tmp_path):
    """final_measurements: the fastest states and the default timed side by side at the end and
    logged (origin "check"); with simulated timings (a schedule's own simulated cost, every
    time) the check agrees with the search; 0 leaves no check."""
    log = tmp_path / "f.jsonl"
    r = autos.tune(small_task(), trials=8, log_file=str(log), **{**FAST, "simulate_ms": 0.1})
    assert r.best_schedule is not None
    assert r.final_seconds == r.best_seconds and r.final_gflops == pytest.approx(r.best_gflops)
    assert r.search_best_seconds == r.best_seconds
    assert "final_gflops=" in repr(r)
    records, _, _ = ts.read_records(str(log))
    checks = [rec for rec in records if rec.origin == "check"]
    assert len(records) == sum(x.measured + x.remeasured for x in r.rounds) + len(checks)
    assert len(checks) in (9, 12)
    text = autos._checked_text(r)
    assert text.startswith(f"{r.final_gflops:.2f} GFLOP/s ({r.final_seconds * 1e3:.3f} ms)")
    assert "the default" in text
    unchecked = autos.tune(small_task(), trials=8, log_file=str(tmp_path / "g.jsonl"),
                           **{**FAST, "simulate_ms": 0.1, "final_measurements": 0})
    assert unchecked.final_seconds == float("inf") and unchecked.final_gflops == 0
    assert unchecked.default_seconds == float("inf")


@requires_llvm
def test_tqdm_bar_when_tqdm_is_installed(tmp_path, capsys):
    pytest.importorskip("tqdm")
    r = autos.tune(small_task(), trials=4, log_file=str(tmp_path / "q.jsonl"),
                   **{**FAST, "progress": True})
    assert r.trials == 4
    assert "4/4" in capsys.readouterr().err


@requires_llvm
def test_plot_draws_the_tuning_curve(tmp_path):
    pytest.importorskip("matplotlib")
    log = str(tmp_path / "plot.jsonl")
    autos.tune(small_task(), trials=4, log_file=log, **FAST)
    png = tmp_path / "curve.png"
    assert autos.plot(log, str(png)) == str(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_names_the_extra(tmp_path, monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(ImportError, match=r"pip install matplotlib .*tessel\[plot\]"):
        autos.plot(str(tmp_path / "none.jsonl"), str(tmp_path / "none.png"))


@requires_llvm
def test_plain_progress_refreshes_one_line_on_a_terminal(tmp_path):
    pty = pytest.importorskip("pty")
    import os
    master, slave = pty.openpty()
    with os.fdopen(slave, "w") as terminal:
        reporter = autos._PlainProgress(terminal)
        autos._native._tune(
            small_task(), trials=8, log_file=str(tmp_path / "tty.jsonl"),
            measurements_per_round=4, seed=0, population=64, generations=2, mutation_prob=0.85,
            eps_greedy=0.05, early_stopping=0, num_threads=2, number=3, repeat=1,
            min_repeat_ms=5.0, flush_cache=False, build_timeout=15.0, run_timeout=10.0,
            build_threads=2, worker_path="", min_programs=4, verbose=0,
            on_progress=reporter.update)
        reporter.close()
    import select
    out = b""
    while select.select([master], [], [], 0.5)[0]:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the terminal side is closed and everything was read
            break
        if not chunk:
            break
        out += chunk
    out = out.decode()
    os.close(master)
    assert out.startswith("\r\x1b[Kmatmul: 4/8 trials")
    assert "elapsed, ETA 0s\r\x1b[Kmatmul: 8/8 trials" in out or "\r\x1b[Kmatmul: 8/8 trials" in out
    assert out.count("\n") == 1 and out.rstrip("\r\n").endswith("elapsed")


def test_tune_keywords_and_defaults_come_from_the_cpp_description():
    import inspect
    keywords = {name: default for name, default, _ in autos._native.tune_keywords()}
    params = inspect.signature(autos.tune).parameters
    assert list(params)[:5] == ["task", "trials", "log_file", "measurements_per_round", "seed"]
    for name, default in keywords.items():
        expected = None if name == "log_file" else default
        assert params[name].default == expected, name
    # TuningOptions' and MeasureOptions' defaults, as the C++ structs give them.
    assert keywords["trials"] == 1000 and keywords["population"] == 2048
    assert keywords["mutation_prob"] == 0.85 and keywords["min_repeat_ms"] == 100.0
    assert keywords["build_timeout"] == 15.0 and keywords["measure_default"] is True
    assert "seed" in keywords and "reference_samples" not in keywords  # protocol only
    assert params["progress"].default is True and params["print_schedule"].default is True
    assert "population (2048): evolutionary search" in autos.tune.__doc__


def test_tune_refuses_unknown_and_mistyped_keywords_before_any_work(tmp_path):
    task = small_task()
    with pytest.raises(TypeError, match="unexpected keyword argument 'populaton'"):
        autos.tune(task, 8, str(tmp_path / "l.jsonl"), populaton=64)
    with pytest.raises(TypeError, match="'population' must be an int, not str"):
        autos.tune(task, 8, str(tmp_path / "l.jsonl"), population="64")
    with pytest.raises(TypeError, match="'measure_default' must be a bool, not int"):
        autos.tune(task, 8, str(tmp_path / "l.jsonl"), measure_default=1)
    with pytest.raises(ValueError, match="'seed' must be at least 0"):
        autos.tune(task, 8, str(tmp_path / "l.jsonl"), seed=-1)
    assert not (tmp_path / "l.jsonl").exists()
