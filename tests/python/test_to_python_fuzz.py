# For a sample of schedule-fuzzer cases (random step lists on the operator suite, from
# tests/fuzz/support through the test-only _tessel_fuzz module), executing Schedule.to_python()
# on a fresh schedule of the same DAG reproduces the same steps and the same lowered IR.
# TESSEL_PY_FUZZ_CASES sets the sample size (default 120: every operator several times).
import os

import pytest

import tessel as ts

fuzz = pytest.importorskip("_tessel_fuzz", reason="built with TESSEL_BUILD_TESTS=ON only")

CASES = int(os.environ.get("TESSEL_PY_FUZZ_CASES", "120"))
SEED = 20240603


def lowered(s, args):
    try:
        return str(ts.lower(s, args))
    except ts.ScheduleError as e:  # a late reject must replay as the same late reject
        return "ScheduleError: " + str(e)


@pytest.mark.parametrize("case", range(CASES))
def test_to_python_replays_fuzz_case(case):
    names = fuzz.operator_names()
    name = names[case % len(names)]
    c = fuzz.fuzz_case(name, SEED + case)
    s, args, outputs = c["schedule"], c["args"], c["outputs"]
    script = s.to_python()
    scope = {}
    exec(compile(script, f"<to_python of {name} case {case}>", "exec"), scope)
    fresh = ts.create_schedule(outputs)
    scope["apply_schedule"](fresh)
    assert fresh.to_json() == s.to_json(), script
    assert lowered(fresh, args) == lowered(s, args), script


def test_sample_covers_every_operator_and_has_steps():
    names = fuzz.operator_names()
    assert CASES >= len(names)
    steps = sum(fuzz.fuzz_case(names[i % len(names)], SEED + i)["schedule"].num_steps for i in range(CASES))
    assert steps > CASES  # the sample is not trivially empty
