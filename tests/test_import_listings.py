"""Import resolution answers "is this module or package here" from one listing per folder
(engine/front/listings.py) kept in the run's scope: the answers must be those of the ``stat``
probes it replaced (packages, namespace packages, a module beside a package of the same name,
a symlinked folder, a link that points nowhere, a name differing only in case), a ``check``
lists each folder once, and a file created between two runs (or two analyses of the language
server) is seen by the next one."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from gradwarden.engine import entry
from gradwarden.engine.front import listings
from gradwarden.engine.front.imports import ImportResolver


def _layout(root: Path) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    for rel in ("pkg/__init__.py", "pkg/mod.py", "pkg/inner/__init__.py", "pkg/inner/deep.py",
                "ns/sub.py", "dup.py", "dup/__init__.py", "real/thing.py", "Upper.py", "main.py"):
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("X = 1\n")
    os.symlink(root / "real", root / "linked")
    os.symlink(root / "nowhere.py", root / "ghost.py")  # dangling
    return root / "main.py"


def _answers(main: Path):
    r = ImportResolver(str(main))
    return {
        "pkg.mod": r.find("pkg.mod", 0),
        "pkg+mod": r.find("pkg", 0, "mod"),
        "pkg.inner.deep": r.find("pkg.inner.deep", 0),
        "pkg": r.find("pkg", 0),
        "ns.sub": r.find("ns.sub", 0),
        "ns/": r.find_dir("ns", 0),
        "pkg/": r.find_dir("pkg.inner", 0),
        "dup": r.find("dup", 0),
        "linked.thing": r.find("linked.thing", 0),
        "linked/": r.find_dir("linked", 0),
        "ghost": r.find("ghost", 0),
        "upper": r.find("upper", 0),
        "missing": r.find("missing.part", 0),
    }


@pytest.fixture
def project(tmp_path):
    return _layout(tmp_path / "proj")


def test_listings_answer_as_the_probes_they_replace(project):
    root = project.parent
    with entry.files_fixed():
        in_run = _answers(project)
    alone = _answers(project)  # no run: each analysis lists for itself
    assert in_run == alone
    assert in_run["pkg.mod"] == in_run["pkg+mod"] == root / "pkg" / "mod.py"
    assert in_run["pkg.inner.deep"] == root / "pkg" / "inner" / "deep.py"
    assert in_run["pkg"] == root / "pkg" / "__init__.py"
    assert in_run["ns.sub"] == root / "ns" / "sub.py"
    assert in_run["ns/"] and in_run["pkg/"] and in_run["linked/"]
    assert in_run["dup"] == root / "dup.py"  # the module before the package, as Python finds it
    assert in_run["linked.thing"] == root / "linked" / "thing.py"  # through the link, as named
    assert in_run["ghost"] is None and in_run["missing"] is None
    # a name differing only in case: what stat says on this file system
    assert (in_run["upper"] is not None) == (root / "upper.py").is_file()


def test_each_kind_of_entry_matches_stat(project):
    root = project.parent
    names = ["pkg", "pkg/mod.py", "ns", "dup.py", "dup", "linked", "linked/thing.py", "ghost.py",
             "nowhere.py", "upper.py", "Upper.py", "main.py/x.py", "pyproject.toml", "missing/x.py"]
    scope: dict = {}
    for name in names:
        p = os.path.join(str(root), name)
        assert listings.is_file(p, scope) == Path(p).is_file(), name
        assert listings.is_dir(p, scope) == Path(p).is_dir(), name
        assert listings.exists(p, scope) == Path(p).exists(), name


def test_a_run_lists_each_folder_once(project, monkeypatch):
    listed = []
    real = os.scandir

    def counting(path):
        listed.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(listings.os, "scandir", counting)
    with entry.files_fixed():
        _answers(project)
        for rel in ("pkg/mod.py", "pkg/inner/deep.py", "ns/sub.py"):
            ImportResolver(str(project.parent / rel)).find("dup", 0)
    assert listed and len(listed) == len(set(listed))


def test_a_file_created_between_two_runs_is_found_by_the_second(project):
    late = project.parent / "pkg" / "late.py"
    with entry.files_fixed():
        assert ImportResolver(str(project)).find("pkg.late", 0) is None
    late.write_text("Y = 2\n")
    with entry.files_fixed():
        assert ImportResolver(str(project)).find("pkg.late", 0) == late


def test_an_analysis_outside_a_run_sees_a_file_created_after_the_last_one(project):
    """The language server: no run scope; each analysis (each resolver tree) lists afresh."""
    assert ImportResolver(str(project)).find("pkg.later", 0) is None
    assert not ImportResolver(str(project)).find_dir("fresh", 0)
    (project.parent / "pkg" / "later.py").write_text("Z = 3\n")
    (project.parent / "fresh").mkdir()
    assert ImportResolver(str(project)).find("pkg.later", 0) == project.parent / "pkg" / "later.py"
    assert ImportResolver(str(project)).find_dir("fresh", 0)
