# docs/tuning.md lists every feature, one line each (`<kind>`, `<b>` and `<i>` stand for the
# annotation kinds, buffer slots and curve samples), and lists nothing else.
import itertools
import pathlib
import re

import tessel as ts

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "tuning.md"
EXPANSIONS = {"<kind>": ["vec", "unroll", "parallel"], "<b>": [str(b) for b in range(5)],
              "<i>": [str(i) for i in range(10)]}


def documented_features():
    text = DOC.read_text()
    section = text.split("## Features", 1)[1].split("\n## ", 1)[0]
    names = []
    for pattern in re.findall(r"^- `([^`]+)`", section, flags=re.M):
        slots = [k for k in EXPANSIONS if k in pattern]
        for values in itertools.product(*(EXPANSIONS[k] for k in slots)):
            name = pattern
            for k, v in zip(slots, values):
                name = name.replace(k, v)
            names.append(name)
    return names


def test_every_feature_is_documented_once():
    names = documented_features()
    assert len(names) == len(set(names))
    assert sorted(names) == sorted(ts.auto_schedule.feature_names())
