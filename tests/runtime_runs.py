"""Running a test module's programs under ``gradwarden debug``: one zygote (the pre-imported
torch each run forks from), ``GRADWARDEN_RUNTIME_JOBS`` runs at a time (2 by default), every
result kept by name. Used by the runtime tests that run labelled cases and inline programs."""
from __future__ import annotations

import os
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, Mapping

from gradwarden.runtime import DebugOptions, DebugResult, DebugSession, Target
from gradwarden.runtime.session import Zygote

WORKERS = int(os.environ.get("GRADWARDEN_RUNTIME_JOBS", "2"))


def write_programs(programs: Mapping[str, str], folder: Path) -> Dict[str, Path]:
    """Each program's (indented) text as ``folder/<name>.py``."""
    paths = {}
    for name, text in programs.items():
        path = folder / (name + ".py")
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        paths[name] = path
    return paths


def debug_runs(scripts: Mapping[str, Path], **options) -> Dict[str, DebugResult]:
    """name -> the result of running that script (from its own folder) under the debugger;
    ``options`` go to DebugOptions beside ``output="discard", timeout=180``."""
    results: Dict[str, DebugResult] = {}
    with Zygote() as zygote:
        def one(name: str):
            path = scripts[name]
            session = DebugSession(Target.script(str(path), cwd=str(path.parent)),
                                   DebugOptions(output="discard", timeout=180, **options), zygote=zygote)
            session.start()
            result = session.wait()
            assert result is not None, name
            return name, result

        with ThreadPoolExecutor(WORKERS) as pool:
            results.update(pool.map(one, scripts))
    return results


def site_rows(finding, kind: str) -> List[int]:
    """The rows of a finding's sites of one kind ("saved", "related", ...)."""
    return [site.row for k, site in finding.sites() if k == kind]


def only_finding(result: DebugResult, code: str):
    """The run's one runtime finding of ``code`` (fails, listing what the run found, when there is
    not exactly one)."""
    found = [f for f in result.runtime_findings if f.code == code]
    assert len(found) == 1, [(f.code, f.row, f.message) for f in result.runtime_findings]
    return found[0]
