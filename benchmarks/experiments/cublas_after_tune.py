"""cublas_after_tune: which step of ts.auto_schedule.tune() leaves cuBLAS unable to start in the
same process (issue 57: after tuning a GEMM for `cuda`, PyTorch's first matrix product raises
std::bad_alloc, the next CUBLAS_STATUS_INTERNAL_ERROR; docs/ideas.md, "What a GPU tuning leaves
in its process"). Each stage runs in a fresh process that first makes a CUDA context (a torch
tensor on the GPU), then does the stage, then a float32 4096^3 torch.mm, and reports whether the
product ran:

    PYTHONPATH=build/gpu/python python3 benchmarks/experiments/cublas_after_tune.py [STAGE ...]
    ... --stack tune     # the stage again with a backtrace at each C++ throw (g++ on PATH)
    ... --cpp build/gpu none tune_zero ...   # tune_then_cublas.cpp's steps: no Python at all


Stages: none, task (ts.SearchTask), space (its SearchSpace, sketches lowered), space_nolower,
sample (8 random states), features (their features), measurer (ts.Measurer, simulated), measure
(it measures 4 samples), tune (1 simulated trial: no worker, no build), tune_nodefault,
tune_threads1, tune_zero (trials=0: the tuner made, no round), tune_one (one round of one random
candidate, nothing else: no default, no re-measurement, no evolution, one thread), build
(ts.build of the default schedule and one run). On the H100 host: tune, tune_nodefault,
tune_threads1 and tune_one leave cuBLAS unable to start, every other stage above leaves it
working. The steps of tune_one's round that no stage above takes, one at a time: round_log (a
simulated measurement of a sample, its record appended to a log), round_model (the cost model
updated with the sample's program), round_all (both, then the history's cost of the log).
"""
import os
import subprocess
import sys
import tempfile
import time

STAGES = ["none", "task", "space_nolower", "space", "sample", "features", "measurer", "measure",
          "tune", "tune_nodefault", "tune_threads1", "tune_zero", "tune_one", "round_log",
          "round_model", "round_all", "build"]
N = 4096


def stage(name):
    import torch
    import tessel as ts

    torch.zeros(1, device="cuda")
    t0 = time.perf_counter()
    task = None if name in ("none", "build") else ts.SearchTask(
        "matmul_mixed", [N, N, N, "float16"], target="cuda")
    if name in ("space", "sample", "features", "measure"):
        space = ts.auto_schedule.SearchSpace(task)
        if name != "space":
            states = [s.schedule for s in space.sample(8, seed=1)["states"]]
        if name == "features":
            for s in states:
                ts.auto_schedule.features(s, task)
        elif name == "measure":
            ts.Measurer(simulate_ms=1).measure(task, states[:4])
    elif name.startswith("round_"):
        round_steps(ts, task, name)
    elif name == "space_nolower":
        ts.auto_schedule.SearchSpace(task, lower=False)
    elif name == "measurer":
        ts.Measurer(simulate_ms=1)
    elif name.startswith("tune"):
        options = dict(simulate_ms=1, measure_default=name not in ("tune_nodefault", "tune_one"))
        if name in ("tune_threads1", "tune_one"):
            options["num_threads"] = 1
        if name == "tune_one":
            options.update(population=1, generations=0, remeasure_top=0, eps_greedy=1.0,
                           measurements_per_round=1, build_threads=1, min_programs=2**20)
        with tempfile.TemporaryDirectory() as d:
            ts.auto_schedule.tune(task, trials=0 if name == "tune_zero" else 1,
                                  log_file=os.path.join(d, "log.jsonl"), seed=1, progress=False,
                                  print_schedule=False, **options)
    elif name == "build":
        a = ts.placeholder((N, N), "float16", name="A")
        b = ts.placeholder((N, N), "float16", name="B")
        c = ts.op.matmul(a, b, out_dtype="float32")
        f = ts.build(ts.op.default_schedule(c, "cuda"), [a, b, c], target="cuda")
        x = torch.randn(N, N, device="cuda").half()
        f(x, x, torch.empty(N, N, device="cuda"))
        torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    try:
        x = torch.randn(N, N, device="cuda")
        (x @ x).sum().item()
        outcome = "ran"
    except RuntimeError as e:
        outcome = f"FAILED: {str(e).splitlines()[0][:120]}"
    print(f"{name:15s} {seconds:6.1f} s   float32 product after it: {outcome}", flush=True)


def round_steps(ts, task, name):
    """The steps of a tuner round beyond ts.Measurer.measure, by hand: a sample of the tuner's
    space (sketches not lowered), simulated, its record appended to a log (round_log), its
    program given to a cost model (round_model), or both and the log's costs (round_all)."""
    space = ts.auto_schedule.SearchSpace(task, lower=False)
    schedule = space.sample(1, seed=2)["states"][0].schedule
    result = ts.Measurer(simulate_ms=1).measure(task, [schedule])[0]
    if name in ("round_log", "round_all"):
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "log.jsonl")
            ts.RecordWriter(log).append([ts.make_record(task, schedule, result, origin="random")])
            if name == "round_all":
                costs = ts.ScheduleCosts()
                for r in ts.read_records(log)[0]:
                    costs.add(r)
    if name in ("round_model", "round_all"):
        _, matrix = ts.auto_schedule.features(schedule, task)
        program = ts.auto_schedule.MeasuredProgram(task.key, matrix, [result.costs[0]],
                                                   schedule=schedule)
        ts.auto_schedule.CostModel().update([program])


def unwind_hook():
    """A shared library printing a backtrace at each _Unwind_RaiseException: it sees the throws of
    libraries that link their C++ runtime statically (cuBLAS), which a __cxa_throw hook does not."""
    here = os.path.dirname(os.path.abspath(__file__))
    out = os.path.join(tempfile.gettempdir(), "tessel_unwind_backtrace.so")
    subprocess.run(["g++", "-shared", "-fPIC", "-O1", "-o", out,
                    os.path.join(here, "unwind_backtrace.cpp"), "-ldl"], check=True)
    return out


def cpp_steps(build_dir, steps):
    """tune_then_cublas.cpp built against `build_dir`'s libtessel (g++, linked as its tools are)
    and run once per step, with PyTorch's CUDA libraries on LD_LIBRARY_PATH."""
    import glob
    import re
    import site

    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    with open(os.path.join(build_dir, "build.ninja")) as f:
        link = next(m.group(1) for m in re.finditer(r"LINK_LIBRARIES = (.*)", f.read())
                    if "src/libtessel.a" in m.group(1))
    exe = os.path.join(tempfile.gettempdir(), "tune_then_cublas")
    subprocess.run(f"g++ -std=c++20 -O1 -I{root}/include -I{root}/src "
                   f"{here}/tune_then_cublas.cpp -o {exe} {link}", shell=True, check=True,
                   cwd=build_dir)
    libs = glob.glob(os.path.join(site.getsitepackages()[0], "nvidia", "**", "libcublas.so.*"),
                     recursive=True)
    env = dict(os.environ)
    if libs:
        env["LD_LIBRARY_PATH"] = ":".join(filter(None, [os.path.dirname(libs[0]),
                                                        env.get("LD_LIBRARY_PATH")]))
    for step in steps:
        r = subprocess.run([exe, step], env=env, timeout=120)
        if r.returncode != 0:
            print(f"{step:22s} the process failed with exit status {r.returncode}", flush=True)


def main():
    args = sys.argv[1:]
    if args[:1] == ["--stage"]:
        return stage(args[1])
    if args[:1] == ["--cpp"]:
        return cpp_steps(args[1], args[2:] or ["none", "all", "ctor", "tune_zero", "tune_one"])
    env = dict(os.environ)
    if args[:1] == ["--stack"]:
        args = args[1:]
        env["LD_PRELOAD"] = unwind_hook()
        env["CUBLASLT_LOG_LEVEL"] = "5"
    for name in args or STAGES:
        if name not in STAGES:
            sys.exit(f"unknown stage {name!r}: one of {', '.join(STAGES)}")
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--stage", name], env=env,
                           timeout=300)
        if r.returncode != 0:
            print(f"{name:15s} the process failed with exit status {r.returncode}", flush=True)


if __name__ == "__main__":
    main()
