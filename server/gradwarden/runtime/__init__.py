"""The runtime bridge: run the user's code instrumented, name the line that broke autograd,
and confirm or refute the static diagnostics.

Nothing here imports torch: the instrumentation lives in ``_child.py``, which runs in a child
process of the *project's* interpreter (never in the language server's process). This package
is the parent side, safe to import from the language server.

API (for the language server and for scripts)::

    from gradwarden.runtime import DebugSession, DebugOptions, Target

    session = DebugSession(
        Target.script("train.py", args=["--epochs", "1"], cwd=root),   # or Target.module / Target.pytest
        DebugOptions(python=project_python, device="auto", max_steps=20, timeout=600,
                     output="log", log_path=log_file),                 # user stdout/stderr -> log
        on_progress=lambda p: ...,        # Progress(stage, message, backward_calls, elapsed, finding)
        on_done=lambda result: ...,       # DebugResult
        loop=asyncio.get_running_loop(),  # optional: callbacks are delivered on this loop
    )
    session.start()                       # returns at once; raises DebugError if it cannot start
    result = await session.wait_async()   # or session.wait(timeout) from a thread
    session.cancel()                      # any time: the whole process tree is terminated, then killed

    for finding in result.findings:       # static verdicts + runtime-only findings
        finding.status                    # confirmed | not reproduced | not reached | runtime-only
        diagnostic = finding.to_diagnostic()   # gradwarden.engine.diagnostic.Diagnostic

``Finding.to_diagnostic()``: a runtime-only finding becomes a new Diagnostic (publish it with
``source=RUNTIME_SOURCE`` = "gradwarden (runtime)"; its write/save/backward sites are ``Related``
entries with kinds ``write``/``save``/``backward``/``freed``/``call``/``step``); a static diagnostic
keeps its code, span, message and fixes, and once confirmed gains the run's evidence as extra
``Related`` entries (messages starting with "debug run:").

``DebugResult``: ``status`` (ok | failed | stopped | timeout | cancelled | crashed | error),
``message`` (one line), ``findings``, ``runtime_findings``, ``exit_code``, ``signal``, ``error``
(why the bridge could not run, e.g. torch missing in the interpreter), ``exception``, ``device``,
``backward_calls``, ``ranks``, ``crash`` (faulthandler's report), ``log_path``; ``to_json()``.

The child protocol (JSON lines in per-process files of a results folder) is private.
"""
from __future__ import annotations

from gradwarden.runtime.findings import (
    CONFIRMED,
    NOT_REACHED,
    NOT_REPRODUCED,
    RUNTIME_ONLY,
    RUNTIME_SOURCE,
    STATUSES,
    Finding,
    RelatedSite,
    Site,
)
from gradwarden.runtime.session import (
    STATUS_CANCELLED,
    STATUS_CRASHED,
    STATUS_ERROR,
    STATUS_FAILED,
    STATUS_OK,
    STATUS_STOPPED,
    STATUS_TIMEOUT,
    DebugError,
    DebugOptions,
    DebugResult,
    DebugSession,
    Progress,
    Target,
    run_debug,
)

__all__ = [
    "CONFIRMED",
    "NOT_REACHED",
    "NOT_REPRODUCED",
    "RUNTIME_ONLY",
    "RUNTIME_SOURCE",
    "STATUSES",
    "STATUS_CANCELLED",
    "STATUS_CRASHED",
    "STATUS_ERROR",
    "STATUS_FAILED",
    "STATUS_OK",
    "STATUS_STOPPED",
    "STATUS_TIMEOUT",
    "DebugError",
    "DebugOptions",
    "DebugResult",
    "DebugSession",
    "Finding",
    "Progress",
    "RelatedSite",
    "Site",
    "Target",
    "run_debug",
]
