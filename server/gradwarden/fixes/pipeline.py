"""Fixing a document with the whole check pipeline (engine, noqa, configuration).

``fixes.apply`` holds the fix loop and takes the analysis as a function; this module binds it
to ``gradwarden.runner`` (which itself uses ``fixes.apply`` for notebooks, hence two modules).
"""
from __future__ import annotations

from typing import List, Optional

from gradwarden.engine.diagnostic import Diagnostic
from gradwarden.fixes.apply import MAX_PASSES, Analyze, FixOutcome, fix_until_stable
from gradwarden.runner import diagnose


def fix_text(text: str, filename: str, *, unsafe: bool = False, analyze: Optional[Analyze] = None,
             settings=None, ignore_noqa: bool = False, max_passes: int = MAX_PASSES,
             diagnostics: Optional[List[Diagnostic]] = None) -> FixOutcome:
    """Fix one document's text with the whole pipeline (engine, noqa, ``settings``);
    ``diagnostics``: those of ``text`` when already known (saves one analysis)."""
    if analyze is None:
        def analyze(t: str) -> List[Diagnostic]:
            return diagnose(t, filename, settings, ignore_noqa=ignore_noqa)

    return fix_until_stable(text, analyze, unsafe=unsafe, max_passes=max_passes, diagnostics=diagnostics)
