"""tessel.auto_schedule: the auto-scheduler (docs/tuning.md).

    import tessel as ts
    names, matrix = ts.auto_schedule.features(schedule, target="llvm")   # rows x 164, float32
    model = ts.auto_schedule.CostModel(seed=1)
    quality = model.update([ts.auto_schedule.MeasuredProgram(task.key, matrix, costs=[1e-3])])
    scores = model.predict([matrix])

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
