"""The one diagnostic model spoken by the CLI, the language server, the fixer and the runtime bridge.

Plain frozen dataclasses, no LSP or torch types: every face converts from these.
Positions are 1-based rows and 1-based columns counted in characters (like ruff's JSON);
``end_column`` is exclusive-1-based, i.e. the column just after the last character.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import IntEnum
from typing import Any, Dict, List, Optional, Tuple


class Severity(IntEnum):
    """Numbered as in LSP so that conversion is the identity."""

    ERROR = 1  # the code will raise when it runs
    WARNING = 2  # silently wrong gradients, or a hazard we are fairly sure of
    INFORMATION = 3  # we cannot prove it; worth a look
    HINT = 4

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> "Severity":
        key = text.strip().upper()
        if key == "INFO":
            key = "INFORMATION"
        return cls[key]


@dataclass(frozen=True)
class Span:
    """A range in one file. ``file``: set by the engine only for a range in another module of
    the project than the one analysed (the absolute path; ``rules.dispatch`` turns it into the
    diagnostic's or the related location's filename and clears it); None: the analysed file."""

    row: int
    column: int
    end_row: int
    end_column: int
    file: Optional[str] = None

    def contains(self, row: int, column: int) -> bool:
        if (row, column) < (self.row, self.column):
            return False
        return (row, column) <= (self.end_row, self.end_column)


@dataclass(frozen=True)
class Related:
    """A secondary location: where a tensor was saved, where backward will fail, ..."""

    span: Span
    message: str
    kind: str = "note"  # save | write | backward | freed | step | created | call | note
    filename: Optional[str] = None  # None: same file as the diagnostic


@dataclass(frozen=True)
class Edit:
    """Replace ``span`` with ``content`` (an empty span inserts)."""

    span: Span
    content: str


@dataclass(frozen=True)
class Fix:
    """A suggested change, as data.

    ``kind`` names the transformation (the fixer implements each kind); ``target`` is the
    expression or statement it applies to; ``edits`` is a minimal textual realisation that
    the engine could compute on its own (the libcst fixer may recompute it).
    """

    kind: str  # clone | detach | retain_graph | augassign_to_binop | inplace_to_outofplace |
    #            no_grad | data_to_detach | move_step | inplace_false | recompute |
    #            complete_grads | static_function
    title: str
    safe: bool
    preferred: bool = False
    target: Optional[Span] = None
    edits: Tuple[Edit, ...] = ()
    params: Tuple[Tuple[str, str], ...] = ()  # extra facts for the fixer, e.g. (("name", "d"),)

    def param(self, key: str, default: str = "") -> str:
        return dict(self.params).get(key, default)


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    severity: Severity
    filename: str
    span: Span
    related: Tuple[Related, ...] = ()
    fixes: Tuple[Fix, ...] = ()
    rule: str = ""  # the rule's short name, e.g. "saved-tensor-modified"
    # The tensor's version timeline as the engine saw it (rendered by hover and `--explain`):
    timeline: Tuple[Related, ...] = ()
    # The hazard needs a backward this analysis did not see (a helper module analysed alone
    # assumes its callers run one): a program's finding at the same place, made with the
    # backward it runs, outranks it when a run's findings are merged (runner.merge_findings).
    assumes_backward: bool = False

    @property
    def row(self) -> int:
        return self.span.row

    @property
    def column(self) -> int:
        return self.span.column

    def outranks(self, other: "Diagnostic") -> bool:
        """Which of two analyses' reports of one finding (same file, code and place) is shown: a
        script's made through a helper, and the helper's own. The one made with the backward its
        program runs wins over one that assumes a caller's; then the more severe."""
        return (self.assumes_backward, self.severity) < (other.assumes_backward, other.severity)

    def with_severity(self, severity: Severity) -> "Diagnostic":
        return replace(self, severity=severity)

    def preferred_fix(self) -> Optional[Fix]:
        for f in self.fixes:
            if f.preferred:
                return f
        return self.fixes[0] if self.fixes else None

    def sort_key(self) -> Tuple[Any, ...]:
        return (self.filename, self.span.row, self.span.column, self.code)

    # ---- JSON (the CLI's --output-format json, and the runtime bridge's input) ----
    def to_json(self) -> Dict[str, Any]:
        def loc(row: int, col: int) -> Dict[str, int]:
            return {"row": row, "column": col}

        fix = self.preferred_fix()
        return {
            "code": self.code,
            "rule": self.rule,
            "message": self.message,
            "severity": self.severity.label,
            "filename": self.filename,
            "location": loc(self.span.row, self.span.column),
            "end_location": loc(self.span.end_row, self.span.end_column),
            "related": [
                {
                    "message": r.message,
                    "kind": r.kind,
                    "filename": r.filename or self.filename,
                    "location": loc(r.span.row, r.span.column),
                    "end_location": loc(r.span.end_row, r.span.end_column),
                }
                for r in self.related
            ],
            "fix": _fix_json(fix) if fix else None,
            "fixes": [_fix_json(f) for f in self.fixes],
        }


def _fix_json(fix: Fix) -> Dict[str, Any]:
    return {
        "kind": fix.kind,
        "message": fix.title,
        "applicability": "safe" if fix.safe else "unsafe",
        "preferred": fix.preferred,
        "edits": [
            {
                "content": e.content,
                "location": {"row": e.span.row, "column": e.span.column},
                "end_location": {"row": e.span.end_row, "column": e.span.end_column},
            }
            for e in fix.edits
        ],
    }


def diagnostics_to_json(diags: List[Diagnostic]) -> List[Dict[str, Any]]:
    return [d.to_json() for d in diags]


@dataclass
class FileResult:
    """What analysing one file produced (the CLI aggregates these)."""

    filename: str
    diagnostics: List[Diagnostic] = field(default_factory=list)
    error: Optional[str] = None  # an internal error, reported and counted but never fatal
