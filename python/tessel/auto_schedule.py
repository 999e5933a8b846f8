"""tessel.auto_schedule: the auto-scheduler (docs/tuning.md).

    import tessel as ts
    task = ts.SearchTask("matmul", (512, 512, 512, "float32"), target="llvm -num-cores=2")
    result = ts.auto_schedule.tune(task, trials=256, log_file="matmul_512.jsonl")
    print(result.best_gflops, result.best_schedule.to_python())
    ts.auto_schedule.plot("matmul_512.jsonl", "matmul_512.png")   # needs matplotlib

    names, matrix = ts.auto_schedule.features(schedule, target="llvm")   # rows x 164, float32
    model = ts.auto_schedule.CostModel(seed=1)
    quality = model.update([ts.auto_schedule.MeasuredProgram(task.key, matrix, costs=[1e-3])])
    scores = model.predict([matrix])

    space = ts.auto_schedule.SearchSpace(task)            # its sketches: space.sketches
    r = space.sample(100, seed=1)                         # r["states"], r["rejected"]
    child = space.mutate(r["states"][0], seed=2)          # a State or None
    print(child.to_python())

    ts.auto_schedule.use_shipped_logs(False)   # build() and ts.op ignore tuning_logs/ from now on

A thin layer over the C++ library (``tessel._tessel.auto_schedule``): the tuner runs in C++;
this module only draws its progress (a ``tqdm`` bar when tqdm is installed, else a plain line)
and the tuning curve (matplotlib).
"""
import inspect
import math
import os
import sys

from ._tessel import auto_schedule as _native

NUM_FEATURES = _native.NUM_FEATURES
feature_names = _native.feature_names
features = _native.features
MeasuredProgram = _native.MeasuredProgram
RankingQuality = _native.RankingQuality
CostModel = _native.CostModel
normalized_throughputs = _native.normalized_throughputs
ranking_quality = _native.ranking_quality

Sketch = _native.Sketch
SketchRule = _native.SketchRule
SketchContext = _native.SketchContext
RuleCondition = _native.RuleCondition
State = _native.State
SearchSpace = _native.SearchSpace
generate_sketches = _native.generate_sketches
builtin_sketch_rules = _native.builtin_sketch_rules
sample = _native.sample
search_suite = _native.search_suite

# The tuning logs shipped with tessel (docs/tuning.md, "Shipped tuning logs"): build() and
# ts.op use their best records unless turned off.
use_shipped_logs = _native.use_shipped_logs
shipped_logs_enabled = _native.shipped_logs_enabled
shipped_logs_folder = _native.shipped_logs_folder
set_shipped_logs_folder = _native.set_shipped_logs_folder
# A wheel carries its own copy (tessel/tuning_logs); TESSEL_TUNING_LOGS still comes first.
_packaged_logs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tuning_logs")
if os.path.isdir(_packaged_logs):
    _native._set_default_shipped_logs_folder(_packaged_logs)

check_job = _native.check_job
from ._tasks import extract_tasks, write_job  # noqa: E402  (jobs for tessel-tune)

TuningResult = _native.TuningResult
TuningRound = _native.TuningRound
TuningProgress = _native.TuningProgress
TuningCurvePoint = _native.TuningCurvePoint
format_progress = _native.format_progress
task_flops = _native.task_flops
tuning_curve = _native.tuning_curve


# The positional parameters of tune(), in order; the other options are keywords. Every option,
# its default and its meaning come from C++ (TuningOptions::fields, MeasureOptions::fields).
_TUNE_POSITIONAL = ("trials", "log_file", "measurements_per_round", "seed")


def tune(task, *args, **kwargs):
    """Tunes a ts.SearchTask and returns a TuningResult (C++ ``tune()``,
    auto_schedule/tuner/Tuner.h).

    Every measurement is appended to ``log_file`` (required), and a log that already holds
    records of the task is resumed: they count as trials done (``trials`` is the total), the cost
    model trains on them and none is a trial again. After each round the fastest
    ``remeasure_top`` states are timed again, each until it has ``remeasure_limit`` measurements,
    and so is the default schedule in the rounds after its trial (records of origin "remeasure",
    not trials; 0 turns this off), and a schedule costs the
    median of its measurements (``ts.ScheduleCosts``). ``progress``: a tqdm bar when tqdm is
    installed (``pip install tqdm``), else one plain line per round on stderr (refreshed in place
    on a terminal); False for none. ``print_schedule`` prints the best schedule as a Python
    script at the end. Measurement options as ts.Measurer's; ``min_programs``: successful
    programs before the cost model trains (random candidates until then). ``measure_default``:
    the first round also measures the task's rule-based default schedule (origin "default"), so
    that the log's best is never slower than not tuning. ``restart_after``: restart the search
    (a new epoch: fresh model and seeds, the log's best kept) once that many trials in a row have
    not improved the epoch's best by 1 % (0: never). ``final_measurements``: the final check,
    the fastest states and the default schedule timed side by side, in turns, that many times
    each and logged (origin "check"); their medians decide the log's best, so a tuned best
    slower than the default side by side is not kept (the result's ``final_seconds``,
    ``default_seconds``, ``best_is_default``; ``search_best_seconds`` is the search's own figure;
    0: no check). Ctrl-C stops the tuning at the next phase of a round, with what was measured
    in the log.
    """
    bound = tune.__signature__.bind(task, *args, **kwargs)
    bound.apply_defaults()
    options = dict(bound.arguments)
    task = options.pop("task")
    progress = options.pop("progress")
    print_schedule = options.pop("print_schedule")
    if options["log_file"] is None:
        options["log_file"] = ""
    reporter = _progress_reporter(task, options["trials"]) if progress else None
    try:
        result = _native._tune(task, verbose=0, on_progress=reporter.update if reporter else None,
                               **options)
    finally:
        if reporter:
            reporter.close()
    if print_schedule and result.best_schedule is not None:
        best = f"{result.best_gflops:.2f} GFLOP/s ({result.best_seconds * 1e3:.3f} ms)"
        if math.isfinite(result.final_seconds):
            best = _checked_text(result)
        print(f"# best of {result.trials} trials: {best}")
        print(result.best_schedule.to_python(), end="")
    return result


def _checked_text(result):
    """The final check's figures, as the C++ progress printer writes them."""
    def text(seconds):
        if result.flops <= 0:
            return f"{seconds * 1e3:.3f} ms"
        return f"{result.flops / seconds / 1e9:.2f} GFLOP/s ({seconds * 1e3:.3f} ms)"
    out = f"{text(result.final_seconds)} in the final check ("
    if result.best_is_default:
        out += "the default schedule; "
    elif math.isfinite(result.default_seconds):
        out += f"the default: {text(result.default_seconds)}; "
    return out + f"the search's timings of its best: {text(result.search_best_seconds)})"


def _tune_signature():
    """tune()'s signature from the options C++ describes: (task, trials, log_file,
    measurements_per_round, seed, *, every other option, progress=True, print_schedule=True)."""
    keywords = {name: (default, doc) for name, default, doc in _native.tune_keywords()}
    kind = inspect.Parameter
    params = [kind("task", kind.POSITIONAL_OR_KEYWORD)]
    for name in _TUNE_POSITIONAL:
        default = None if name == "log_file" else keywords[name][0]
        params.append(kind(name, kind.POSITIONAL_OR_KEYWORD, default=default))
    params += [kind(name, kind.KEYWORD_ONLY, default=default)
               for name, (default, _) in keywords.items() if name not in _TUNE_POSITIONAL]
    params += [kind("progress", kind.KEYWORD_ONLY, default=True),
               kind("print_schedule", kind.KEYWORD_ONLY, default=True)]
    return inspect.Signature(params), keywords


tune.__signature__, _tune_keywords = _tune_signature()
tune.__doc__ += "\n    Options (default):\n" + "\n".join(
    f"      {name} ({default!r}): {doc}" for name, (default, doc) in _tune_keywords.items()) + "\n"


def _progress_reporter(task, trials):
    try:
        import tqdm  # noqa: F401  (optional: pip install tqdm)
    except ImportError:
        return _PlainProgress()
    return _TqdmProgress(trials)


class _PlainProgress:
    """One line per round (format_progress); refreshed in place on a terminal."""

    def __init__(self, stream=None):
        self._stream = stream or sys.stderr
        self._tty = hasattr(self._stream, "isatty") and self._stream.isatty()
        self._open = False

    def update(self, p):
        if p.last_round is None:
            return  # the start: nothing measured yet
        line = format_progress(p)
        if self._tty:
            self._stream.write("\r\033[K" + line)
            self._open = True
        else:
            self._stream.write(line + "\n")
        self._stream.flush()

    def close(self):
        if self._open:
            self._stream.write("\n")
            self._stream.flush()


class _TqdmProgress:
    """A tqdm bar over the trials (resumed ones as its start), with the best GFLOP/s."""

    def __init__(self, trials):
        from tqdm import tqdm
        self._tqdm = tqdm
        self._total = trials
        self._bar = None

    def update(self, p):
        if self._bar is None:
            self._bar = self._tqdm(total=self._total, initial=p.trials, unit="trial",
                                   desc=f"tune {p.task}", dynamic_ncols=True)
        self._bar.update(p.trials - self._bar.n)
        if p.best_gflops > 0:
            self._bar.set_postfix_str(f"best {p.best_gflops:.2f} GFLOP/s")

    def close(self):
        if self._bar is not None:
            self._bar.close()


def plot(log_file, png_path, title=None):
    """Draws the tuning curve of ``log_file`` (a log, or a list of logs: a job's, as
    ``tessel-tune plot`` gives them), the best GFLOP/s after each trial (one line per task; the
    best time in ms for a task whose FLOPs are unknown), to ``png_path``.

    Needs matplotlib, an optional dependency (``pip install matplotlib`` or the ``plot`` extra).
    """
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("ts.auto_schedule.plot needs matplotlib, an optional dependency: "
                          "pip install matplotlib (or pip install 'tessel[plot]')") from e
    files = [log_file] if isinstance(log_file, (str, bytes, os.PathLike)) else list(log_file)
    curves = [c for f in files for c in _native._log_curves(str(f))]
    if not curves:
        raise ValueError(f"plot: the log '{log_file}' holds no tuning records")
    if len(files) == 1:
        log_file = files[0]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    throughput = all(flops > 0 for _, _, flops, _ in curves)
    for key, workload, flops, points in curves:
        xs = [p.trial for p in points]
        if throughput:
            ys = [p.best_gflops for p in points]
        else:
            ys = [p.best_seconds * 1e3 if p.best_seconds != float("inf") else float("nan")
                  for p in points]
        ax.plot(xs, ys, drawstyle="steps-post", label=workload or key.split(" ")[-1])
    ax.set_xlabel("trials")
    ax.set_ylabel("best GFLOP/s" if throughput else "best time (ms)")
    ax.set_title(title or f"tuning curve: {log_file}")
    ax.grid(True, alpha=0.3)
    if len(curves) > 1:
        ax.legend()
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)
    plt.close(fig)
    return png_path
