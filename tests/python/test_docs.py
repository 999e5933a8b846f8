# The documentation stands on its own: the pipeline diagram in docs/architecture.md lists the
# passes of Lower.cpp in order (as lower_pass_names() reports them), and no document points
# outside the repository.
import pathlib
import re

import tessel as ts

ROOT = pathlib.Path(__file__).resolve().parents[2]


def diagram_passes():
    text = (ROOT / "docs" / "architecture.md").read_text()
    start = text.index("lower(s, args, target)")
    block = text[start:text.index("LoweredFunc", start)]
    lines = [ln for ln in block.splitlines()[1:] if "→" in ln]
    names = re.findall(r"[a-z_]+", " ".join(lines))
    seen = []
    for n in names:  # simplify runs three times; lower_pass_names lists it once
        if n not in seen:
            seen.append(n)
    return seen


def test_architecture_diagram_lists_the_pipeline():
    assert diagram_passes() == ts.lower_pass_names(ts.Target("cuda -arch=sm_80"))
    cpu = ts.lower_pass_names(ts.Target("llvm"))
    assert [n for n in diagram_passes() if n != "split_host_device"] == cpu


def test_no_document_points_outside_the_repository():
    docs = list((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md",
                                                  ROOT / "benchmarks" / "README.md"]
    for doc in docs:
        text = doc.read_text()
        for pattern in [r"\.\./shared", r"\.\./DESIGN", r"\bDESIGN\.md", r"\bSTYLE\.md"]:
            assert not re.search(pattern, text), f"{doc.relative_to(ROOT)} refers to {pattern}"
        for link in re.findall(r"\]\(([^)\s#]+)\)", text):
            if "://" in link:
                continue
            target = (doc.parent / link).resolve()
            assert ROOT in target.parents or target == ROOT, f"{doc}: {link} leaves the repository"
            assert target.exists(), f"{doc.relative_to(ROOT)}: broken link {link}"
