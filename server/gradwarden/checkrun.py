"""What one ``gradwarden check`` run gathered before reporting: the hand-over between collecting
(``cli.collect``) and the stages that use it (``cli_report``, the fix stage in ``fixes.cli``)."""
from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up cost)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional

    from gradwarden.config import Settings
    from gradwarden.engine.diagnostic import Diagnostic


class CheckRun:
    """Everything ``check`` gathered before reporting (a fix stage can work on it). A plain
    class, not a dataclass: importing ``dataclasses`` (and its ``inspect``) would cost every
    ``--version`` and ``rules`` run."""

    def __init__(self, settings: "Settings") -> None:
        self.settings = settings
        self.diagnostics: "List[Diagnostic]" = []
        self.errors: "List[str]" = []  # internal errors, unreadable files
        self.usage_errors: "List[str]" = []  # missing paths
        # files the fix stage could not rewrite (printed there, once; their findings are still
        # reported, and the run exits 2)
        self.fix_errors: "List[str]" = []
        self.sources: "Dict[str, Optional[str]]" = {}  # filename -> text (--show-source)
        self.files_checked = 0
        self.stdin_data: "Optional[bytes]" = None  # what was read from standard input (the fix stage writes it back)
        self.result_cache: "Optional[Any]" = None  # gradwarden.cache.ResultCache, unless --no-cache

    def __repr__(self) -> str:
        return (f"CheckRun({self.files_checked} file(s), {len(self.diagnostics)} diagnostic(s), "
                f"{len(self.errors)} error(s))")
