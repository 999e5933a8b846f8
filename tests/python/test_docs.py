# The documentation stands on its own: the pipeline diagram in docs/architecture.md lists the
# passes of Lower.cpp in order (as lower_pass_names() reports them), no document points outside
# the repository or to a file that does not exist, and the README's layout names the tree's
# folders.
import pathlib
import re
import subprocess

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
    import tessel as ts  # the only test here that needs the extension

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


# Folders that are not part of the tree: build outputs and tool caches.
NOT_IN_THE_TREE = re.compile(r"^(\.|build|_skbuild|dist|venv|fuzz_failures|__pycache__|.*\.egg-info$)")


def readme_layout():
    """The folders the README's layout section names, as paths relative to the root. An entry is a
    line of the section's code block whose first word ends in '/', indented by 0, 2 or 4 spaces:
    indented entries are subfolders of the entry above them one level less indented."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("\n## Layout"):]
    block = section[section.index("```") + 3:]
    block = block[block.index("\n") + 1:block.index("```")]
    folders, parents = [], {}
    for line in block.splitlines():
        m = re.match(r"^( *)(\S+/)(\s|$)", line)
        if not m or len(m.group(1)) not in (0, 2, 4):
            continue
        depth = len(m.group(1)) // 2
        name = m.group(2).rstrip("/")
        path = name if depth == 0 else f"{parents[depth - 1]}/{name}"
        parents[depth] = path
        folders.append(path)
    return folders


def ignored_by_git(path):
    """Whether git ignores `path` (a folder of a developer's own, listed in .git/info/exclude);
    False outside a git checkout."""
    r = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", str(path)],
                       capture_output=True)
    return r.returncode == 0


def subfolders(path):
    return sorted(p.name for p in path.iterdir()
                  if p.is_dir() and not NOT_IN_THE_TREE.match(p.name) and not ignored_by_git(p))


def test_readme_layout_matches_the_tree():
    named = readme_layout()
    assert named, "README.md: no layout section found"
    for folder in named:
        assert (ROOT / folder).is_dir(), f"README.md's layout names {folder}/, which does not exist"
    named_set = set(named) | {folder.split("/")[0] for folder in named}
    for base in ["", "src", "src/auto_schedule"]:
        for name in subfolders(ROOT / base if base else ROOT):
            path = f"{base}/{name}" if base else name
            assert path in named_set, f"README.md's layout does not name {path}/"
