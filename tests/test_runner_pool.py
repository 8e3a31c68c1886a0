"""The worker pool of ``gradwarden check`` (runner.run): forked workers find the engine already
loaded by their parent (loaded once, shared, instead of once per worker), and the parent's
collector is left as it found it. Facts about modules and processes, never durations."""
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
    assert len(reports) == len(files)
    pids = {int(pid) for _, pid in reports}
    assert os.getpid() not in pids  # analysed in the workers
    assert all(loaded == "True" for loaded, _ in reports)  # each found the engine loaded
    assert gc.get_freeze_count() == frozen_before  # what the run froze for the fork is unfrozen
