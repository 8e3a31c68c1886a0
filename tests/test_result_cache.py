"""The result cache of ``gradwarden check`` (gradwarden/cache.py), as facts: how many files were
analysed (a counting analyser stands in for the engine's entry point, or ``-v``'s count of
cached files in a subprocess), what the output is, what is on disk. No timings."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import List, Tuple

import pytest

import gradwarden
from gradwarden import cache, cli, runner
from gradwarden.engine.analyze import analyze_source
from project_import import TRAIN

ANALYSED: List[str] = []
RUN_FILES: List[str] = []


def counting_analyze(source, filename="<stdin>"):
    """The real engine, counting its calls (module level: the cache keys on the analyser)."""
    ANALYSED.append(filename)
    return analyze_source(source, filename)


HAZARD = "import torch\nx = torch.ones(2, requires_grad=True)\nx.add_(1)\n"
CLEAN = "import torch\nx = torch.ones(2)\n"
MODELS_WITH_WEIGHTS = textwrap.dedent("""
    import torch.nn as nn
    class D(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 1)
        def forward(self, x):
            return self.fc(x)
""")
MODELS_WITHOUT_WEIGHTS = textwrap.dedent("""
    import torch.nn as nn
    class D(nn.Module):
        def forward(self, x):
            return x * 2
""")


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for var in ("NO_COLOR", "FORCE_COLOR", "GRADWARDEN_OUTPUT_FORMAT", cache.ENV_CACHE_DIR, cache.ENV_NO_CACHE):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(runner, "analyze_source", counting_analyze)
    real_run = runner.run

    def counting_run(files, **kw):  # the files `check` hands to the engine (the JSON report's
        RUN_FILES.extend(name for _, name in files)  # fix runs analyse too: not counted here)
        return real_run(files, **kw)

    monkeypatch.setattr(runner, "run", counting_run)
    ANALYSED.clear()
    (tmp_path / "hazard.py").write_text(HAZARD)
    (tmp_path / "clean.py").write_text(CLEAN)
    return tmp_path


def check(capsys, *args: str) -> Tuple[int, List[dict], List[str]]:
    """One in-process ``gradwarden check --output-format json``: exit code, findings, and the
    files the engine analysed for this run's findings."""
    RUN_FILES.clear()
    rc = cli.main(["check", "--output-format", "json", *args])
    out, err = capsys.readouterr()
    return rc, json.loads(out or "[]"), sorted(RUN_FILES)


def codes(findings: List[dict]) -> List[Tuple[str, str, int]]:
    return sorted((f["filename"], f["code"], f["location"]["row"]) for f in findings)


def entries(folder: Path) -> List[Path]:
    return sorted((folder / gradwarden.__version__).glob("*.json"))


# --------------------------------------------------------------------------- reuse
def test_second_run_analyses_nothing_and_reports_the_same(project, capsys):
    rc1, first, analysed1 = check(capsys, ".")
    rc2, second, analysed2 = check(capsys, ".")
    assert analysed1 == ["clean.py", "hazard.py"] and analysed2 == []
    assert rc1 == rc2 == 1
    assert second == first and codes(first) == [("hazard.py", "GW101", 3)]
    assert first[0]["fix"] is not None  # fixes survive the round trip too


def test_cached_diagnostics_equal_fresh_ones_field_for_field(project, capsys):
    check(capsys, ".")
    fresh = runner.run([(project / "hazard.py", "hazard.py")])[0].diagnostics
    c = cache.ResultCache(project / cache.CACHE_DIR_NAME, cli.resolve_settings(
        cli.build_parser().parse_args(["check"]), project), ignore_noqa=False, analyzer=counting_analyze)
    got = c.lookup(str(project / "hazard.py"), "hazard.py", cache._sha256(HAZARD.encode()))
    assert got == fresh and got


def test_show_source_from_the_cache(project, capsys):
    check(capsys, ".")
    ANALYSED.clear()
    assert cli.main(["check", "--show-source", "hazard.py"]) == 1
    out = capsys.readouterr().out
    assert ANALYSED == [] and "x.add_(1)" in out


# --------------------------------------------------------------------------- invalidation
def test_an_edit_reanalyses_that_file_only(project, capsys):
    check(capsys, ".")
    (project / "clean.py").write_text(CLEAN + "y = torch.ones(2, requires_grad=True)\ny.mul_(2)\n")
    rc, findings, analysed = check(capsys, ".")
    assert analysed == ["clean.py"]
    assert codes(findings) == [("clean.py", "GW101", 4), ("hazard.py", "GW101", 3)]
    assert len(entries(project / cache.CACHE_DIR_NAME)) == 2  # replaced, not added: one per file


@pytest.mark.parametrize("options", [["--select", "GW2"], ["--ignore", "GW101"], ["--ignore-noqa"],
                                     ["--severity-override", "GW101=warning"],
                                     ["--config", 'per-file-ignores = { "hazard.py" = ["GW1"] }']])
def test_a_configuration_change_reanalyses_and_each_configuration_keeps_its_entries(project, capsys, options):
    _, default, _ = check(capsys, ".")
    _, changed, analysed = check(capsys, *options, ".")
    assert analysed == ["clean.py", "hazard.py"]
    _, again, analysed = check(capsys, *options, ".")
    assert analysed == [] and again == changed
    _, back, analysed = check(capsys, ".")
    assert analysed == [] and back == default


def test_a_config_file_change_reanalyses(project, capsys):
    check(capsys, ".")
    (project / "pyproject.toml").write_text('[tool.gradwarden]\nignore = ["GW101"]\n')
    rc, findings, analysed = check(capsys, ".")
    assert analysed == ["clean.py", "hazard.py"] and findings == [] and rc == 0


@pytest.mark.parametrize("what", ["version", "optable", "engine sources", "analyser"])
def test_a_different_gradwarden_reanalyses(project, capsys, monkeypatch, tmp_path_factory, what):
    check(capsys, ".")
    if what == "version":
        monkeypatch.setattr(cache, "__version__", "99.0")
    elif what == "optable":
        other = tmp_path_factory.mktemp("t") / "optable.json"
        other.write_text('{"format": 1}')
        monkeypatch.setattr(cache, "_OPTABLE", other)
    elif what == "engine sources":
        stamp = cache._engine_stamp()
        monkeypatch.setattr(cache, "_engine_stamp", lambda: stamp + "edited")
    else:
        def other_analyze(source, filename="<stdin>"):
            return counting_analyze(source, filename)

        monkeypatch.setattr(runner, "analyze_source", other_analyze)
    assert check(capsys, ".")[2] == ["clean.py", "hazard.py"]


def test_the_engine_stamp_follows_the_engine_sources(project, monkeypatch, tmp_path_factory):
    """The stamp reads size and mtime of the package's engine files (a copy stands in)."""
    copy = tmp_path_factory.mktemp("pkg")
    shutil.copytree(Path(cache.__file__).parent / "engine", copy / "engine",
                    ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache, "_PACKAGE", copy)
    before = cache._engine_stamp()
    assert cache._engine_stamp() == before
    target = copy / "engine" / "interp" / "interpreter.py"
    target.write_text(target.read_text() + "\n# edited\n")
    assert cache._engine_stamp() != before


def test_a_followed_project_import_change_reanalyses_the_script(project, capsys):
    (project / "pyproject.toml").write_text("")
    (project / "models.py").write_text(MODELS_WITH_WEIGHTS)
    (project / "train.py").write_text(TRAIN)
    _, findings, analysed = check(capsys, "train.py")
    assert codes(findings) == [("train.py", "GW501", 9)] and analysed == ["train.py"]
    assert check(capsys, "train.py")[2] == []
    (project / "models.py").write_text(MODELS_WITHOUT_WEIGHTS)
    _, findings, analysed = check(capsys, "train.py")
    assert analysed == ["train.py"] and findings == []  # no weights: nothing for the step to change
    assert check(capsys, "train.py")[2] == []


def test_a_project_module_that_appears_later_reanalyses_the_script(project, capsys):
    (project / "pyproject.toml").write_text("")
    (project / "train.py").write_text(TRAIN)
    _, findings, _ = check(capsys, "train.py")
    assert findings == []  # `models` cannot be found yet
    assert check(capsys, "train.py")[2] == []
    (project / "models.py").write_text(MODELS_WITH_WEIGHTS)
    _, findings, analysed = check(capsys, "train.py")
    assert analysed == ["train.py"] and codes(findings) == [("train.py", "GW501", 9)]


def test_a_library_module_records_no_followed_files(project, capsys):
    check(capsys, "hazard.py")
    (entry,) = entries(project / cache.CACHE_DIR_NAME)
    assert json.loads(entry.read_text())["followed"] == {}


# --------------------------------------------------------------------------- robustness
@pytest.mark.parametrize("garbage", [b"", b"{not json", b"[1, 2]", b'{"engine": 3}', b"\xff\xfe\x00",
                                     b"[" * 200_000, "corrupt-diagnostics"])
def test_a_corrupted_entry_is_ignored_and_rebuilt(project, capsys, garbage):
    _, first, _ = check(capsys, "hazard.py")
    (entry,) = entries(project / cache.CACHE_DIR_NAME)
    if garbage == "corrupt-diagnostics":
        data = json.loads(entry.read_text())
        data["diagnostics"] = [{"__t": "Diagnostic", "code": "GW101"}]  # missing fields
        garbage = json.dumps(data).encode()
    entry.write_bytes(garbage)
    rc, findings, analysed = check(capsys, "hazard.py")
    assert analysed == ["hazard.py"] and findings == first and rc == 1
    assert check(capsys, "hazard.py")[2] == []  # rewritten, and good again


def test_an_entry_cannot_name_other_classes(project, capsys):
    check(capsys, "hazard.py")
    (entry,) = entries(project / cache.CACHE_DIR_NAME)
    data = json.loads(entry.read_text())
    data["diagnostics"] = [{"__t": "Path", "args": "/"}]
    entry.write_text(json.dumps(data))
    assert check(capsys, "hazard.py")[2] == ["hazard.py"]


def test_an_unwritable_cache_folder_warns_once_and_the_check_goes_on(project, capsys):
    blocker = project / "blocked"
    blocker.write_text("a file where the cache folder should be")
    rc = cli.main(["check", "--cache-dir", str(blocker / "cache"), "."])
    out, err = capsys.readouterr()
    assert rc == 1 and "GW101" in out
    assert err.count("warning: cannot write the cache") == 1


def run_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in (cache.ENV_CACHE_DIR, cache.ENV_NO_CACHE)}
    return subprocess.run([sys.executable, "-m", "gradwarden", *args], cwd=cwd, capture_output=True, text=True,
                          env=env)


def from_cache(proc: subprocess.CompletedProcess) -> int:
    line = [l for l in proc.stderr.splitlines() if l.startswith("checked ")][-1]
    return int(re.search(r"\((\d+) from the cache", line).group(1))


def test_concurrent_runs_never_corrupt_the_cache(tmp_path):
    for i in range(12):
        (tmp_path / f"m{i}.py").write_text(HAZARD if i % 3 == 0 else CLEAN)
    expected = run_cli(tmp_path, "check", "--no-cache", "--output-format", "json", ".")
    assert not (tmp_path / cache.CACHE_DIR_NAME).exists()
    cmd = [sys.executable, "-m", "gradwarden", "check", "--output-format", "json", "."]
    env = {k: v for k, v in os.environ.items() if k not in (cache.ENV_CACHE_DIR, cache.ENV_NO_CACHE)}
    procs = [subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(6)]
    outputs = [p.communicate() for p in procs]
    assert all(out == expected.stdout for out, _ in outputs)
    assert [p.returncode for p in procs] == [1] * 6
    folder = tmp_path / cache.CACHE_DIR_NAME
    assert len(entries(folder)) == 12
    assert all(isinstance(json.loads(e.read_text()), dict) for e in entries(folder))
    assert list(folder.rglob("*.part")) == []  # no temporary file left behind
    warm = run_cli(tmp_path, "check", "-v", "--output-format", "json", ".")
    assert warm.stdout == expected.stdout and from_cache(warm) == 12


def test_several_jobs_fill_and_use_the_cache(tmp_path):
    for i in range(25):
        (tmp_path / f"m{i}.py").write_text(HAZARD if i == 7 else CLEAN)
    cold = run_cli(tmp_path, "check", "-v", "-j", "2", ".")
    warm = run_cli(tmp_path, "check", "-v", "-j", "2", ".")
    assert "with 2 job(s)" in cold.stderr and from_cache(cold) == 0 and from_cache(warm) == 25
    assert cold.stdout == warm.stdout and "m7.py:3:1: GW101" in warm.stdout


# --------------------------------------------------------------------------- --fix
def test_fix_from_cached_diagnostics_equals_fix_without_cache(project, capsys, tmp_path_factory):
    twin = tmp_path_factory.mktemp("twin")
    shutil.copy(project / "hazard.py", twin / "hazard.py")
    check(capsys, ".")  # fills the cache: the fix stage starts from cached diagnostics
    assert cli.main(["check", "--fix", "--unsafe-fixes", "hazard.py"]) in (0, 1)
    capsys.readouterr()
    assert cli.main(["check", "--no-cache", "--fix", "--unsafe-fixes", str(twin / "hazard.py")]) in (0, 1)
    capsys.readouterr()
    fixed = (project / "hazard.py").read_text()
    assert fixed != HAZARD and fixed == (twin / "hazard.py").read_text()
    _, after, analysed = check(capsys, "hazard.py")
    assert analysed == ["hazard.py"]  # new content: analysed again, not the stale entry
    _, twin_after, _ = check(capsys, "--no-cache", str(twin / "hazard.py"))
    assert codes(after) == [(p.replace(str(twin) + os.sep, ""), c, r) for p, c, r in codes(twin_after)]


# --------------------------------------------------------------------------- where, and clean
def test_no_cache_writes_nothing_and_reads_nothing(project, capsys):
    check(capsys, "--no-cache", ".")
    assert not (project / cache.CACHE_DIR_NAME).exists()
    check(capsys, ".")
    assert check(capsys, "--no-cache", ".")[2] == ["clean.py", "hazard.py"]


def test_environment_switches(project, capsys, monkeypatch):
    monkeypatch.setenv(cache.ENV_NO_CACHE, "1")
    check(capsys, ".")
    assert not (project / cache.CACHE_DIR_NAME).exists()
    monkeypatch.delenv(cache.ENV_NO_CACHE)
    monkeypatch.setenv(cache.ENV_CACHE_DIR, str(project / "elsewhere"))
    check(capsys, ".")
    assert entries(project / "elsewhere") and not (project / cache.CACHE_DIR_NAME).exists()


def test_cache_dir_option_and_the_folder_markers(project, capsys):
    check(capsys, "--cache-dir", "c", ".")
    folder = project / "c"
    assert len(entries(folder)) == 2 and not (project / cache.CACHE_DIR_NAME).exists()
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (folder / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert check(capsys, "--cache-dir", "c", ".")[2] == []


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_git_ignores_the_cache_folder(project, capsys):
    subprocess.run(["git", "init", "-q", "."], cwd=project, check=True)
    check(capsys, ".")
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=project,
                            capture_output=True, text=True, check=True).stdout
    assert "hazard.py" in status and cache.CACHE_DIR_NAME not in status


def test_cache_sits_beside_the_config_file(project, capsys):
    (project / "pyproject.toml").write_text("[tool.gradwarden]\n")
    sub = project / "pkg"
    sub.mkdir()
    (sub / "a.py").write_text(HAZARD)
    os.chdir(sub)
    check(capsys, "a.py")
    assert entries(project / cache.CACHE_DIR_NAME) and not (sub / cache.CACHE_DIR_NAME).exists()


def test_clean_removes_the_caches_here_and_below(project, capsys):
    check(capsys, ".")
    (project / "sub").mkdir()
    (project / "sub" / "a.py").write_text(HAZARD)
    os.chdir(project / "sub")
    check(capsys, "a.py")
    os.chdir(project)
    assert (project / "sub" / cache.CACHE_DIR_NAME).is_dir()
    assert cli.main(["clean"]) == 0
    out = capsys.readouterr().out
    assert out.count("Removed ") == 2
    assert not (project / cache.CACHE_DIR_NAME).exists() and not (project / "sub" / cache.CACHE_DIR_NAME).exists()
    assert (project / "hazard.py").exists() and (project / "sub" / "a.py").exists()
    assert check(capsys, ".")[2] == ["clean.py", "hazard.py", "sub/a.py"]


def test_clean_refuses_a_folder_that_is_not_a_cache(project, capsys):
    precious = project / "precious"
    precious.mkdir()
    (precious / "data.txt").write_text("keep me")
    assert cli.main(["clean", "--cache-dir", str(precious)]) == 2
    assert "not a gradwarden cache" in capsys.readouterr().err
    assert (precious / "data.txt").read_text() == "keep me"
    check(capsys, "--cache-dir", "c", ".")
    assert cli.main(["clean", "--cache-dir", "c"]) == 0 and not (project / "c").exists()


# --------------------------------------------------------------------------- the report's fixes
INDEXED: List[List[str]] = []


@pytest.fixture
def count_fix_index(monkeypatch):
    """Counts fixability.index_fixes calls (each runs the fixer with libcst);
    cache.ResultCache.index_fixes calls it once per file it cannot answer."""
    from gradwarden import fixability

    real = fixability.index_fixes

    def counting(diags, source_of, *args):
        INDEXED.append(sorted({d.filename for d in diags if d.fixes}))
        return real(diags, source_of, *args)

    monkeypatch.setattr(fixability, "index_fixes", counting)
    INDEXED.clear()
    return INDEXED


def report(capsys, *args: str) -> Tuple[int, str]:
    INDEXED.clear()
    rc = cli.main(["check", *args])
    return rc, capsys.readouterr().out


@pytest.mark.parametrize("output_format", ["text", "json", "sarif"])
def test_the_fixes_a_report_shows_come_from_the_cache_on_a_warm_run(project, capsys, count_fix_index,
                                                                    output_format):
    rc, cold = report(capsys, "--output-format", output_format, ".")
    assert INDEXED == [["hazard.py"]]
    rc2, warm = report(capsys, "--output-format", output_format, ".")
    assert INDEXED == [] and warm == cold and rc == rc2 == 1
    _, uncached = report(capsys, "--no-cache", "--output-format", output_format, ".")
    assert uncached == cold
    if output_format == "text":
        assert "[*]" in cold or "fixable" in cold


def test_an_edit_recomputes_the_fixes_of_that_file(project, capsys, count_fix_index):
    report(capsys, "--output-format", "json", ".")
    (project / "hazard.py").write_text("# moved down\n" + HAZARD)
    _, after = report(capsys, "--output-format", "json", ".")
    assert INDEXED == [["hazard.py"]]
    _, uncached = report(capsys, "--no-cache", "--output-format", "json", ".")
    assert after == uncached and json.loads(after)[0]["fix"]["edits"][0]["location"]["row"] >= 2
    fixes = project / cache.CACHE_DIR_NAME / gradwarden.__version__ / "fixes"
    assert len(list(fixes.glob("*.json"))) == 1  # one entry per file, replaced on change


def test_a_corrupted_fixes_entry_is_recomputed(project, capsys, count_fix_index):
    _, cold = report(capsys, "--output-format", "json", ".")
    (entry,) = sorted((project / cache.CACHE_DIR_NAME / gradwarden.__version__ / "fixes").glob("*.json"))
    entry.write_text('{"engine": "%s", "chosen": [[7, 1, 2]], "realised": []}'
                     % json.loads(entry.read_text())["engine"])
    _, again = report(capsys, "--output-format", "json", ".")
    assert INDEXED == [["hazard.py"]] and again == cold


def test_fixes_of_a_script_depend_on_the_files_its_fix_runs_follow(project, capsys, count_fix_index):
    (project / "pyproject.toml").write_text("")
    (project / "models.py").write_text(MODELS_WITH_WEIGHTS)
    (project / "train.py").write_text(TRAIN)
    _, cold = report(capsys, "--output-format", "json", "train.py")
    assert INDEXED == [["train.py"]] and json.loads(cold)[0]["code"] == "GW501"
    (entry,) = sorted((project / cache.CACHE_DIR_NAME / gradwarden.__version__ / "fixes").glob("*.json"))
    assert str(project / "models.py") in json.loads(entry.read_text())["followed"]
    assert report(capsys, "--output-format", "json", "train.py")[1] == cold and INDEXED == []
    (project / "models.py").write_text(MODELS_WITH_WEIGHTS + "# a comment: same findings\n")
    assert report(capsys, "--output-format", "json", "train.py")[1] == cold
    assert INDEXED == [["train.py"]]


NOTEBOOK = {
    "cells": [{"cell_type": "code", "metadata": {}, "source": ["import torch\n"], "outputs": [], "execution_count": None},
              {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
               "source": ["x = torch.ones(2, requires_grad=True)\n", "x.add_(1)\n"]}],
    "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
}


def test_notebooks_are_cached_too(project, capsys):
    (project / "nb.ipynb").write_text(json.dumps(NOTEBOOK))
    rc, first, analysed = check(capsys, "nb.ipynb")
    assert rc == 1 and analysed == ["nb.ipynb"] and [f["code"] for f in first] == ["GW101"]
    rc, second, analysed = check(capsys, "nb.ipynb")
    assert analysed == [] and second == first
    ANALYSED.clear()
    assert cli.main(["check", "--show-source", "nb.ipynb"]) == 1
    assert ANALYSED == [] and "x.add_(1)" in capsys.readouterr().out
    edited = json.loads(json.dumps(NOTEBOOK))
    edited["cells"][1]["source"][1] = "x.mul_(2)\n"
    (project / "nb.ipynb").write_text(json.dumps(edited))
    rc, third, analysed = check(capsys, "nb.ipynb")
    assert analysed == ["nb.ipynb"] and "mul_" in third[0]["message"]
