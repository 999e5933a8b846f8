"""tessel.auto_schedule: the auto-scheduler (docs/tuning.md).

    import tessel as ts
    names, matrix = ts.auto_schedule.features(schedule, target="llvm")   # rows x 164, float32
    model = ts.auto_schedule.CostModel(seed=1)
    quality = model.update([ts.auto_schedule.MeasuredProgram(task.key, matrix, costs=[1e-3])])
    scores = model.predict([matrix])

    space = ts.auto_schedule.SearchSpace(task)            # its sketches: space.sketches
    r = space.sample(100, seed=1)                         # r["states"], r["rejected"]
    child = space.mutate(r["states"][0], seed=2)          # a State or None
    print(child.to_python())

A thin layer over the C++ library (``tessel._tessel.auto_schedule``).
"""
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
