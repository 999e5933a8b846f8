"""Shared helpers of the GPU benchmarks (benchmarks/*_cuda.py): loading a tutorial's schedules,
timing with CUDA events after warm-up, and the BENCH line (DESIGN.md's conventions)."""
import importlib.util
import os
import statistics

import torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def tutorial(name):
    """Imports tutorials/<name>.py as a module (its schedules; its main part does not run)."""
    path = os.path.join(REPO, "tutorials", name + ".py")
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def median_ms(fn, warmup=5, reps=30):
    """Median milliseconds of fn() over `reps` runs after `warmup` runs, each timed with CUDA
    events on the current stream. The queue is pre-filled (a GPU sleep of about 0.1 ms before the
    start event), so the time is the GPU's: the host's launch latency, which would otherwise count
    for a kernel of a few microseconds (a short-row softmax), is hidden behind the sleep."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(200_000)  # cycles
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def relative_error(out, ref):
    """||out - ref|| / ||ref|| in float64; NaN anywhere fails."""
    out, ref = out.double(), ref.double()
    assert not torch.isnan(out).any(), "the output has NaN (unwritten elements?)"
    return (torch.linalg.norm(out - ref) / torch.linalg.norm(ref)).item()


def bench_line(name, case, tessel, ref_name, ref):
    return f"BENCH {name} {case} tessel={tessel:.1f} {ref_name}={ref:.1f} ratio={tessel / ref:.3f}"
