"""The worker pool of ``gradwarden check`` (runner.run): forked workers find the engine already
loaded by their parent (loaded once, shared, instead of once per worker), the parent checks the
first files itself until one loads a package of the project and the workers inherit those
parses, and the parent's collector is left as it found it. Facts about modules, processes and
counts of parses, never durations."""
from __future__ import annotations

import gc
import multiprocessing
import os
import sys

import pytest

from gradwarden import runner
from gradwarden.engine.diagnostic import Diagnostic, Severity, Span

pytestmark = pytest.mark.skipif(multiprocessing.get_start_method() != "fork",
                                reason="workers share their parent's modules only when forked")


def _what_the_worker_had(source, filename):
    """An analyzer that reports, as its one diagnostic, whether the interpreter was loaded
    before it ran, and in which process."""
    loaded = "gradwarden.engine.interp.interpreter" in sys.modules
    return [Diagnostic("GW999", f"{loaded} {os.getpid()}", Severity.INFORMATION, filename, Span(1, 1, 1, 1))]


def test_forked_workers_inherit_the_engine_and_the_collector_is_restored(tmp_path, monkeypatch):
    files = []
    for i in range(runner.PARALLEL_THRESHOLD + 4):
        path = tmp_path / f"m{i}.py"
        path.write_text("x = 1\n")
        files.append((path, str(path)))
    frozen_before = gc.get_freeze_count()
    outcomes = runner.run(files, jobs=2, analyzer=_what_the_worker_had)
    reports = [o.diagnostics[0].message.split() for o in outcomes]
    assert [o.filename for o in outcomes] == [name for _, name in files]
    pids = [int(pid) for _, pid in reports]
    # no file loads a package: the parent checks one chunk (its priming budget), then forks one
    # worker (it is the other job itself), which takes chunks from the first on while the parent
    # takes them from the last backwards
    primed = runner._chunk_size(len(files), 2)
    assert pids[:primed] == [os.getpid()] * primed
    rest = pids[primed:]
    workers = [pid for pid in rest if pid != os.getpid()]
    assert len(set(workers)) <= 1
    assert rest == workers + [os.getpid()] * (len(rest) - len(workers))
    assert all(loaded == "True" for loaded, _ in reports)  # each found the engine loaded
    assert gc.get_freeze_count() == frozen_before  # what the run froze for the fork is unfrozen


def _parses_it_made(source, filename):
    """The real analysis, reporting in its last diagnostic how many project modules it parsed
    and in which process."""
    from gradwarden.engine.analyze import analyze_source
    from gradwarden.engine.front.imports import parses_made

    before = parses_made()
    found = analyze_source(source, filename)
    return found + [Diagnostic("GW999", f"{parses_made() - before} {os.getpid()}", Severity.INFORMATION,
                               filename, Span(1, 1, 1, 1))]


_SCRIPT = """\
import torch
from pkg.ops import scale

if __name__ == "__main__":
    x = torch.randn(3, requires_grad=True)
    y = scale(x).sigmoid()
    y.mul_(2)
    y.sum().backward()
"""


def test_workers_inherit_the_parses_of_the_first_package_load(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "ops.py").write_text("def scale(x):\n    return x * 2\n")
    names = ["a_main.py"] + [f"m{i:02}.py" for i in range(30)] + ["z_main.py"]
    for name in names:
        (tmp_path / name).write_text(_SCRIPT if name.endswith("_main.py") else "x = 1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runner, "PRIME_PARSES", 1)  # this package is one module
    # every chunk after the priming to the workers (the parent would otherwise take the last one,
    # z_main.py, itself: it holds the parse too)
    pool = runner._run_in_pool
    monkeypatch.setattr(runner, "_run_in_pool", lambda *a, **k: pool(*a, **{**k, "parent_works": False}))
    outcomes = runner.run([(tmp_path / n, n) for n in names], jobs=2, analyzer=_parses_it_made)
    reports = {o.filename: o.diagnostics[-1].message.split() for o in outcomes}
    assert [o.filename for o in outcomes] == names
    assert reports["a_main.py"] == ["1", str(os.getpid())]  # the parent loaded the package, then forked
    assert reports["m00.py"][1] != str(os.getpid())  # the priming stopped there
    made, pid = reports["z_main.py"]
    assert pid != str(os.getpid()) and made == "0"  # a worker found the parse inherited
    # the same findings as one process (the sigmoid's output written in place before its backward)
    alone = runner.run([(tmp_path / n, n) for n in names], jobs=1, analyzer=_parses_it_made)
    found = [[(d.code, d.span) for d in o.diagnostics[:-1]] for o in outcomes]
    assert found == [[(d.code, d.span) for d in o.diagnostics[:-1]] for o in alone]
    assert found[0] and found[-1]
