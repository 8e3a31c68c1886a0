"""What one ``gradwarden check`` run gathered before reporting: the hand-over between collecting
(``cli.collect``) and the stages that use it (``cli_report``, the fix stage in ``fixes.cli``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from gradwarden.config import Settings
from gradwarden.engine.diagnostic import Diagnostic


@dataclass
class CheckRun:
    """Everything ``check`` gathered before reporting (a fix stage can work on it)."""

    settings: Settings
    diagnostics: List[Diagnostic] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)  # internal errors, unreadable files
    usage_errors: List[str] = field(default_factory=list)  # missing paths
    sources: Dict[str, Optional[str]] = field(default_factory=dict)  # filename -> text (--show-source)
    files_checked: int = 0
    stdin_data: Optional[bytes] = None  # what was read from standard input (the fix stage writes it back)
    result_cache: Optional[Any] = None  # gradwarden.cache.ResultCache, unless --no-cache
