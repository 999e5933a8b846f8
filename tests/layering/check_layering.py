#!/usr/bin/env python3
"""The compiler's layers, bottom first, and the check that every include points down.

A file of src/ or include/tessel/ may include the headers of its own layer and of the layers
below it, never those of a layer above (docs/architecture.md, "Layers"); that holds for the
private headers under src/ too. Run by ctest (`layering.includes`); prints
each violation as `file:line: <layer> includes <header> of <layer>` and exits 1.
"""
import pathlib
import re
import sys

# Bottom first. Each layer: the folders (relative to src/ and include/tessel/) and single headers
# of include/tessel/ it owns.
LAYERS = [
    ("errors", ["Error.h", "Options.h", "support/JsonDepth.h", "support/JsonFields.h"]),
    ("runtime", ["runtime"]),
    ("ir", ["ir"]),
    ("support", ["support", "HostArray.h", "Tolerance.h"]),
    ("arith", ["arith"]),
    ("te", ["te"]),
    ("target", ["target", "Target.h"]),
    ("schedule", ["schedule"]),
    ("lower", ["lower"]),
    ("codegen", ["codegen"]),
    ("op", ["op"]),
    ("auto_schedule/task", ["auto_schedule/task"]),
    ("auto_schedule/space", ["auto_schedule/space"]),
    ("auto_schedule/features", ["auto_schedule/features"]),
    ("auto_schedule/cost_model", ["auto_schedule/cost_model"]),
    ("auto_schedule/measure", ["auto_schedule/measure"]),
    ("auto_schedule/records", ["auto_schedule/records"]),
    ("auto_schedule/tuner", ["auto_schedule/tuner"]),
    ("driver", ["driver"]),
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(relative):
    """The index of the layer owning `relative` (a path under src/ or include/tessel/), or None."""
    best, best_len = None, -1
    for index, (_, owned) in enumerate(LAYERS):
        for prefix in owned:
            hit = relative == prefix or relative.startswith(prefix + "/")
            if hit and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    return best


def check(root):
    problems = []
    src, inc = root / "src", root / "include" / "tessel"
    files = [(p, p.relative_to(src).as_posix()) for p in src.rglob("*") if p.suffix in (".h", ".cpp")]
    files += [(p, p.relative_to(inc).as_posix()) for p in inc.rglob("*.h")]
    unowned = sorted({rel for _, rel in files if layer_of(rel) is None})
    for rel in unowned:
        problems.append(f"{rel}: in no layer (add its folder to LAYERS)")
    for path, rel in files:
        mine = layer_of(rel)
        if mine is None:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            header = m.group(1)
            if header.startswith("tessel/"):
                target = header[len("tessel/"):]
            elif (path.parent / header).exists():
                target = (path.parent / header).resolve().relative_to(src.resolve()).as_posix()
            elif (src / header).exists():
                target = header
            else:
                continue  # a third-party header
            theirs = layer_of(target)
            if theirs is None:
                continue
            where = f"{path.relative_to(root)}:{number}"
            if theirs > mine:
                problems.append(f"{where}: {LAYERS[mine][0]} includes {header} of the layer "
                                f"above, {LAYERS[theirs][0]}")
    return problems


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[2])
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) against the layering (tests/layering/check_layering.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
