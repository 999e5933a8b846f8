"""cost_model_diagnosis: how well the cost model ranks CPU schedules it has not measured, from the
logs of `benchmarks/run.sh tune_search_quality` (one folder: <workload>_{random,model}_seed<n>.jsonl).

    python3 benchmarks/cost_model_diagnosis.py DIR {gemm,conv2d} lockin SEED
        trains tessel's CostModel on the model-guided run's rounds 0..r (as the tuner had them)
        and prints its ranking quality on the random run's states of the same seed, and where it
        ranks the random run's 10 fastest states: is a search that locked onto one region misled
        by the model, or did its evolution never reach the fast states?
    python3 benchmarks/cost_model_diagnosis.py DIR {gemm,conv2d} variants [CONFIG]
        cross-validation over the three random runs (train on two seeds' states, test on the
        third; 128 and all training states) of tessel's model and of pack-sum variants trained
        in Python's xgboost with a custom objective (depth, eta, label weights, hessian), e.g.
        CONFIG "dict(depth=6, eta=0.1, weight='sqrt')". Needs xgboost (benchmarks' venv).

Features are computed once per log and cached next to it (<log>.features.pkl).
"""
import json
import os
import pickle
import statistics
import sys

import numpy as np
import tessel as ts

A = ts.auto_schedule
TASKS = {
    "gemm": ("op.matmul", [512, 512, 512, 0, 0, "float32"]),
    "conv2d": ("op.conv2d_nchw", [1, 64, 56, 56, 64, [3], [1], [1], [1], 1, "float32"]),
}


def load(task, path):
    """[(round, features, costs or [])] of a log, features cached beside it."""
    cache = path + ".features.pkl"
    if os.path.exists(cache):
        with open(cache, "rb") as f:
            return pickle.load(f)
    out = []
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            ok = r["result"]["error_code"] == "none"
            _, feat = A.features(task.apply_record(json.dumps(r["schedule"])), task)
            out.append((r.get("provenance", {}).get("round"), np.array(feat),
                        r["result"]["costs"] if ok else []))
    with open(cache, "wb") as f:
        pickle.dump(out, f)
    return out


def programs(task, recs):
    return [A.MeasuredProgram(task.key, f, costs=c, error=0 if c else 1) for _, f, c in recs]


def lockin(task, folder, wl, seed):
    model = load(task, os.path.join(folder, f"{wl}_model_seed{seed}.jsonl"))
    rand = [x for x in load(task, os.path.join(folder, f"{wl}_random_seed{seed}.jsonl")) if x[2]]
    costs = np.array([statistics.median(c) for _, _, c in rand])
    fastest = np.argsort(costs)[:10]
    test = programs(task, rand)
    print(f"random run: best {costs.min() * 1e3:.3f} ms, median {np.median(costs) * 1e3:.3f} ms")
    for r in range(max(x[0] or 0 for x in model) + 1):
        cm = A.CostModel(seed=seed, nthread=2)
        cm.train(programs(task, [x for x in model if x[0] is not None and x[0] <= r]))
        scores = cm.predict(test)
        rank = np.empty(len(scores), int)
        rank[np.argsort(-scores)] = np.arange(len(scores))
        q = A.ranking_quality(test, scores)
        print(f"after round {r}: pairwise {q.pairwise_accuracy:.3f} recall@30 {q.recall_at_k:.3f};"
              f" ranks of the 10 fastest random states (of {len(test)}): "
              f"{[int(rank[i]) for i in fastest]}")


def rows_of(recs):
    """The feature rows of programs stacked (float32) and each row's program index."""
    x = np.concatenate([f for _, f, _ in recs]).astype(np.float32)
    g = np.concatenate([np.full(len(f), i) for i, (_, f, _) in enumerate(recs)])
    return x, g


def pack_sum(train, depth=10, eta=0.2, rounds=400, weight="y", hess="rows", gamma=0.001):
    """A booster with tessel's objective (src/auto_schedule/cost_model/CostModel.cpp) and its
    defaults, or a variant: label weights y / sqrt(y) / 1, hessian weight x rows or weight alone."""
    import xgboost as xgb
    x, g = rows_of(train)
    c = np.array([statistics.median(c) for _, _, c in train])
    y = c.min() / c
    n = len(train)
    rows = np.bincount(g, minlength=n).astype(float)
    w = {"y": y, "sqrt": np.sqrt(y), "1": np.ones(n)}[weight]

    def objective(pred, _):
        err = np.bincount(g, weights=pred, minlength=n) - y
        return (w * err)[g], (w * rows if hess == "rows" else w)[g]

    params = {"max_depth": depth, "eta": eta, "gamma": gamma, "nthread": 2, "verbosity": 0}
    return xgb.train(params, xgb.DMatrix(x), rounds, obj=objective)


def variants(task, folder, wl, config):
    import xgboost as xgb
    runs = {s: [x for x in load(task, os.path.join(folder, f"{wl}_random_seed{s}.jsonl")) if x[2]]
            for s in (1, 2, 3)}
    configs = [eval(config)] if config else [  # noqa: S307 (a diagnosis tool's own argument)
        None, dict(), dict(depth=6), dict(eta=0.1), dict(depth=6, eta=0.1), dict(weight="sqrt"),
        dict(weight="1"), dict(depth=6, eta=0.1, weight="sqrt")]
    for cfg in configs:
        res = {128: [], 0: []}
        for test_seed in (1, 2, 3):
            train = sum((runs[s] for s in (1, 2, 3) if s != test_seed), [])
            test = runs[test_seed]
            for n in res:
                part = train[:n] if n else train
                if cfg is None:  # tessel's own CostModel
                    cm = A.CostModel(seed=1, nthread=2)
                    cm.train(programs(task, part))
                    scores = cm.predict(programs(task, test))
                else:
                    b = pack_sum(part, **cfg)
                    x, g = rows_of(test)
                    scores = np.bincount(g, weights=b.predict(xgb.DMatrix(x)), minlength=len(test))
                q = A.ranking_quality(programs(task, test), list(map(float, scores)))
                res[n].append((q.pairwise_accuracy, q.recall_at_k))
        label = "tessel CostModel" if cfg is None else f"pack-sum {cfg}"
        print(f"{wl} {label}: " + "  ".join(
            f"train {n or 'all'}: pairwise {np.mean([p for p, _ in v]):.3f} "
            f"recall@30 {np.mean([r for _, r in v]):.3f}" for n, v in res.items()), flush=True)


def main():
    folder, wl, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    task = ts.SearchTask(*TASKS[wl], target="llvm")
    if mode == "lockin":
        lockin(task, folder, wl, int(sys.argv[4]))
    else:
        variants(task, folder, wl, sys.argv[4] if len(sys.argv) > 4 else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
