# The schedule's methods come from the step kinds' field descriptions (schedule/Step.h): one
# method per kind on the schedule and on the stage view, arguments by position or by field name,
# Python's own TypeError for a call that does not fit, and the steps' JSON kinds as method names.
import json

import pytest

import tessel as ts
import util
from util import replays

STEP_KINDS = ["split", "fuse", "reorder", "annotate", "pragma", "compute_at", "compute_inline",
              "compute_root", "set_scope", "cache_read", "cache_write", "storage_split",
              "storage_reorder", "storage_align", "follow_split", "rfactor", "reindex"]


def test_every_step_kind_is_a_method_with_its_signature():
    A, B, C = util.matmul(8, 8, 8)
    s = ts.create_schedule(C)
    for kind in STEP_KINDS:
        assert callable(getattr(s, kind)), kind
        assert callable(getattr(s[C], kind)), kind
        assert f"{kind}(stage" in getattr(ts.Schedule, kind).__doc__
    assert "split(stage, iter, factor=None, nparts=None, tail=\"guard\")" in ts.Schedule.split.__doc__
    assert "rfactor(stage, iter, factor_axis=0)" in ts.Schedule.rfactor.__doc__


def test_arguments_by_field_name():
    A, B, C = util.matmul(16, 12, 8)
    s = ts.create_schedule(C)
    io, ii = s.split(stage=C, iter=0, factor=4)
    s.reorder(stage=2, order=[ii, io])  # some of the leaves: they swap slots
    assert [v.name for v in s[C].leaf_iter_vars] == ["i0.inner", "i0.outer", "i1", "k"]
    s.annotate(stage=2, iter=2, annotation="vectorize")
    kinds = [step["kind"] for step in json.loads(s.to_json())["steps"]]
    assert kinds == ["split", "reorder", "annotate"]
    util.check_matmul(s, A, B, C)
    replays(s, [A, B, C])


def test_calls_that_do_not_fit_are_type_errors():
    A, B, C = util.matmul(8, 8, 8)
    s = ts.create_schedule(C)
    with pytest.raises(TypeError, match="unexpected keyword argument 'factr'"):
        s.split(C, 0, factr=4)
    with pytest.raises(TypeError, match="missing argument 'iters'"):
        s.fuse(C)
    with pytest.raises(TypeError, match="takes at most 1 positional arguments but 2"):
        s.compute_inline(C, 1)
    with pytest.raises(TypeError, match="multiple values"):
        s.compute_root(C, stage=C)
    assert json.loads(s.to_json())["steps"] == []


def test_unknown_named_values_list_the_legal_ones():
    A, B, C = util.matmul(8, 8, 8)
    s = ts.create_schedule(C)
    with pytest.raises(ts.ScheduleError, match="unknown annotation 'threadIdx.w'.*threadIdx.x"):
        s.bind(C, 0, "threadIdx.w")
    with pytest.raises(ts.ScheduleError, match="unknown storage scope 'texture'"):
        s.set_scope(C, "texture")
    assert s.num_steps == 0


def test_record_carries_a_format_version():
    A, B, C = util.matmul(8, 8, 8)
    s = ts.create_schedule(C)
    s[C].split(C.op.axis[0], factor=2)
    record = json.loads(s.to_json())
    assert record["format_version"] == 1
    record["format_version"] = 99
    with pytest.raises(ts.ScheduleError, match="newer tessel"):
        ts.schedule_from_json(C, json.dumps(record))
    del record["format_version"]  # records from before versions are version 1
    again = ts.schedule_from_json(C, json.dumps(record))
    assert again.to_json() == s.to_json()
