"""The static side of a debug run: the static engine on the user's files that ran, and the
verdict on each of its diagnostics from what the run saw (parent side)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

from gradwarden.runtime.findings import Finding, RunEvents, classify
from gradwarden.runtime.options import Target

MAX_STATIC_FILES = 400


def confirm_static(target: Target, run: RunEvents) -> Tuple[List[Finding], Optional[str]]:
    """Run the static engine on the user's files that ran and classify every diagnostic."""
    files: List[str] = []
    seen: Set[str] = set()
    candidates = list(run.files.values())
    if target.kind == "script":
        candidates.insert(0, target.value)
    for fn in candidates:
        if not fn.endswith(".py") or not os.path.isfile(fn):
            continue
        key = os.path.normcase(os.path.realpath(fn))
        if key in seen:
            continue
        seen.add(key)
        files.append(fn)
    files = files[:MAX_STATIC_FILES]
    diags = []
    problem: Optional[str] = None
    try:
        from gradwarden.config import ConfigError, load_settings
        from gradwarden.runner import check_path

        settings_cache: Dict[str, Any] = {}
        for fn in files:
            folder = os.path.dirname(os.path.abspath(fn))
            settings = settings_cache.get(folder)
            if settings is None:
                try:
                    settings = load_settings(Path(fn))
                except ConfigError as exc:
                    problem = str(exc)
                    settings = False
                settings_cache[folder] = settings
            outcome = check_path(fn, fn)
            if outcome.error:
                problem = outcome.error
            found = outcome.diagnostics
            if settings:
                found = settings.apply(found)
            diags.extend(d for d in found if d.code != "GW001")
    except Exception as exc:  # noqa: BLE001 - the run's findings still count
        problem = f"static analysis failed: {type(exc).__name__}: {exc}"
    return classify(diags, run.findings, run.coverage, run.premises), problem

