"""tessel.auto_scheduler: TVM's Ansor tuning API (TVM <= 0.19, ``tvm.auto_scheduler``) over
tessel's tuner, so an Ansor tuning script runs with its imports changed (docs/tvm.md):

    from tessel import auto_scheduler

    @auto_scheduler.register_workload
    def matmul(N, L, M, dtype):
        A = ts.placeholder((N, L), name="A", dtype=dtype)
        ...
        return [A, B, C]

    task = auto_scheduler.SearchTask(func=matmul, args=(512, 512, 512, "float32"), target="llvm")
    options = auto_scheduler.TuningOptions(
        num_measure_trials=64, measure_callbacks=[auto_scheduler.RecordToFile("matmul.json")])
    task.tune(options)
    sch, args = task.apply_best("matmul.json")
    f = ts.build(sch, args, task.target)

The names and arguments are TVM's; what runs is tessel's (`ts.auto_schedule.tune`, its
JSON-lines records, `ts.apply_history_best`). TVM's logs are not read: a log is tessel's.
Arguments that configure TVM's machinery tessel does not have (RPC runners, search policies,
cost-model objects) are refused with a TypeError naming them, never silently dropped.
"""
import os
import tempfile

from . import _tessel
from . import auto_schedule as _auto

register_workload = _tessel.register_workload
ApplyHistoryBest = _tessel.apply_history_best


class RecordToFile:
    """A measure callback writing every measurement to ``filename`` (TVM's RecordToFile)."""

    def __init__(self, filename="auto_scheduler_tuning.json"):
        self.filename = os.fspath(filename)

    def __repr__(self):
        return f"RecordToFile({self.filename!r})"


class LocalRunner:
    """TVM's LocalRunner: the timing settings of tessel's measurement workers."""

    def __init__(self, timeout=10, number=3, repeat=1, min_repeat_ms=100, cooldown_interval=0.0,
                 enable_cpu_cache_flush=False):
        if cooldown_interval:
            raise TypeError("LocalRunner: cooldown_interval is not supported by tessel's workers")
        self.timeout = float(timeout)
        self.number = int(number)
        self.repeat = int(repeat)
        self.min_repeat_ms = float(min_repeat_ms)
        self.enable_cpu_cache_flush = bool(enable_cpu_cache_flush)


class LocalBuilder:
    """TVM's LocalBuilder: the build time limit and the number of build threads."""

    def __init__(self, timeout=15, n_parallel=None, build_func="default"):
        if build_func != "default":
            raise TypeError("LocalBuilder: only build_func='default' (tessel builds itself)")
        self.timeout = float(timeout)
        self.n_parallel = int(n_parallel) if n_parallel else 0


class TuningOptions:
    """TVM's TuningOptions. ``measure_callbacks`` takes RecordToFile objects (the first names
    the log; with none, a temporary log is used and removed after the tuning)."""

    def __init__(self, num_measure_trials=0, early_stopping=None, num_measures_per_round=64,
                 verbose=1, builder="local", runner="local", measure_callbacks=None):
        self.num_measure_trials = int(num_measure_trials)
        self.early_stopping = int(early_stopping) if early_stopping else 0
        self.num_measures_per_round = int(num_measures_per_round)
        self.verbose = int(verbose)
        self.builder = LocalBuilder() if builder == "local" else builder
        self.runner = LocalRunner() if runner == "local" else runner
        if not isinstance(self.builder, LocalBuilder):
            raise TypeError(f"TuningOptions: builder must be 'local' or a LocalBuilder, "
                            f"not {builder!r}")
        if not isinstance(self.runner, LocalRunner):
            raise TypeError(f"TuningOptions: runner must be 'local' or a LocalRunner, not "
                            f"{runner!r} (tessel measures on this machine)")
        self.measure_callbacks = list(measure_callbacks or [])
        for cb in self.measure_callbacks:
            if not isinstance(cb, RecordToFile):
                raise TypeError(f"TuningOptions: measure_callbacks takes RecordToFile objects, "
                                f"not {cb!r}")


class SearchTask:
    """TVM's SearchTask(func=, args=, target=): a registered workload (the function or its
    name) with its arguments, for a target. ``compute_dag`` is the workload's tensors
    (ts.TensorDAG); ``task`` the ts.SearchTask underneath."""

    def __init__(self, func=None, args=None, compute_dag=None, workload_key=None, target=None,
                 target_host=None, hardware_params=None, layout_rewrite_option=None,
                 task_inputs=None, **unsupported):
        for name, value in (("workload_key", workload_key), ("target_host", target_host),
                            ("hardware_params", hardware_params),
                            ("layout_rewrite_option", layout_rewrite_option),
                            ("task_inputs", task_inputs)):
            if value is not None:
                unsupported[name] = value
        if unsupported:
            raise TypeError("SearchTask: tessel does not take " + ", ".join(sorted(unsupported)))
        if target is None:
            raise TypeError("SearchTask: target= is required")
        if compute_dag is not None:
            if func is not None:
                raise TypeError("SearchTask: give func= (and args=) or compute_dag=, not both")
            self.task = _tessel.SearchTask(dag=compute_dag, target=target)
        else:
            if func is None:
                raise TypeError("SearchTask: give func= (a registered workload) or compute_dag=")
            self.task = _tessel.SearchTask(func, tuple(args or ()), target=target)
        self.compute_dag = self.task.dag
        self.target = self.task.target
        self.workload_key = self.task.key

    def __repr__(self):
        return f"SearchTask({self.workload_key})"

    def tune(self, tuning_options, search_policy=None):
        """Tunes the task (tessel's evolutionary search with its XGBoost cost model: what TVM's
        default SketchPolicy does) and returns ts.auto_schedule.TuningResult."""
        if search_policy is not None:
            raise TypeError("SearchTask.tune: search_policy is not supported (tessel's search is "
                            "the sketch policy with its cost model)")
        o = tuning_options
        if o.num_measure_trials <= 0:
            raise ValueError("TuningOptions.num_measure_trials must be > 0 to tune")
        owned = None
        if o.measure_callbacks:
            log = o.measure_callbacks[0].filename
        else:
            fd, owned = tempfile.mkstemp(suffix=".jsonl", prefix="tessel-tune-")
            os.close(fd)
            log = owned
        try:
            return _auto.tune(
                self.task, trials=o.num_measure_trials, log_file=log,
                measurements_per_round=o.num_measures_per_round,
                early_stopping=o.early_stopping, number=o.runner.number,
                repeat=o.runner.repeat, min_repeat_ms=o.runner.min_repeat_ms,
                flush_cache=o.runner.enable_cpu_cache_flush, run_timeout=o.runner.timeout,
                build_timeout=o.builder.timeout, build_threads=o.builder.n_parallel,
                progress=o.verbose > 0, print_schedule=o.verbose > 1)
        finally:
            if owned:
                os.remove(owned)

    def apply_best(self, log_file):
        """(schedule, args) of the best record of the task in ``log_file``: build it with
        ts.build(schedule, args, target). RuntimeError when the log has no usable record."""
        records = [r for r in _tessel.read_records(os.fspath(log_file))[0]
                   if r.task_key == self.task.key]
        costs = _tessel.ScheduleCosts()
        for r in records:
            costs.add(r)
        best = costs.best()  # by the median of each schedule's measurements
        if best is None:
            raise RuntimeError(f"apply_best: {os.fspath(log_file)} has no successful record of "
                               f"task {self.task.key}")
        return (self.task.apply_record(records[best[1]].schedule_json),
                list(self.compute_dag.args))

    def print_best(self, log_file):
        """The best record's schedule as a Python script (TVM prints its TE or CUDA code)."""
        schedule, _ = self.apply_best(log_file)
        return schedule.to_python()
