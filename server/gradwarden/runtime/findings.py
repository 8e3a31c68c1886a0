"""Findings of a debug run: the child's events in, ``Finding`` objects out (no torch here).

A ``Finding`` is either something the instrumented run saw (``source == "runtime"``) or a
static diagnostic with the verdict of the run (``source == "static"``): ``confirmed`` (a
runtime finding of the same hazard family at the same place), ``not reproduced`` (its line
ran and nothing of the kind happened) or ``not reached`` (its line never ran). Runtime
findings that match no static diagnostic have the status ``runtime-only``.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from gradwarden.engine.diagnostic import Diagnostic, Related, Severity, Span
from gradwarden.rules.messages import TORCH_MESSAGES
from gradwarden.rules.messages import classify as classify_message

RUNTIME_SOURCE = "gradwarden (runtime)"

CONFIRMED = "confirmed"
NOT_REPRODUCED = "not reproduced"
NOT_REACHED = "not reached"
RUNTIME_ONLY = "runtime-only"
STATUSES = (CONFIRMED, NOT_REPRODUCED, NOT_REACHED, RUNTIME_ONLY)

# Codes that describe the same hazard seen from two sides (static rule vs what raised).
_GROUPS: Tuple[frozenset, ...] = (
    frozenset({"GW101"}),
    # a saved tensor changed under autograd (GW405: the optimizer step bumped the weights a
    # retained graph saved; GW602: a write through .detach()/.data)
    frozenset({"GW201", "GW202", "GW203", "GW405", "GW501", "GW502", "GW601", "GW602"}),
    frozenset({"GW301", "GW302", "GW303", "GW304", "GW305", "GW306"}),  # views, expand, overlap
    frozenset({"GW401", "GW402", "GW403", "GW404", "GW504"}),  # freed or stale graphs
    frozenset({"GW307", "GW308"}),  # custom Function contract
    frozenset({"GW302", "GW713", "GW714"}),  # a write whose memory overlaps itself or its source
    # parameters no gradient reaches: a zero-derivative op, a cut, a checkpoint without grad input
    # GW722: a loss term cut from the graph; GW723: a custom backward that returns an input's gradient
    # elsewhere (or None): both static, both seen by the run as a parameter without a gradient
    frozenset({"GW718", "GW719", "GW708", "GW722", "GW723"}),
    # a training step in eval mode: the run proves it for a module reading `self.training` as a
    # parameter without a gradient (GW719/GW718), for BatchNorm/Dropout as GW724
    frozenset({"GW718", "GW719", "GW724"}),
    # an optimizer steps with gradients its zeroing calls leave: none cleared (GW710), part (GW725)
    frozenset({"GW710", "GW725"}),
)

_KIND_OF_CODE = {
    "GW101": "leaf-inplace",
    "GW201": "version-counter",
    "GW202": "version-counter",
    "GW501": "version-counter",
    "GW301": "expanded-write",
    "GW302": "overlapping-write",
    "GW303": "grad-output-write",
    "GW304": "expanded-write",
    "GW305": "custom-function-view",
    "GW306": "multi-view-inplace",
    "GW401": "freed-graph",
    "GW402": "freed-graph",
    "GW403": "freed-graph",
    "GW404": "freed-graph",
    "GW307": "custom-function-contract",
    "GW308": "custom-function-contract",
    "GW203": "version-counter",
    "GW504": "freed-graph",
    "GW502": "fused-step",
    "GW503": "polluted-gradients",
    "GW601": "data-write",
    "GW709": "chain-rule-dropped",
    "GW714": "overlapping-write",
    "GW718": "zero-gradient",
    "GW719": "untrained-parameter",
    "GW720": "nonfinite-gradient",
    "GW721": "hook-overwrite",
    "GW722": "dead-loss-term",
    "GW723": "gradient-order",
    "GW724": "eval-mode-training",
    "GW710": "gradients-never-zeroed",
    "GW725": "partial-zero-grad",
    "GW707": "optimizer-without-grad",
    "GW604": "tensor-attribute-not-parameter",
    "GW738": "custom-function-contract",
    "GW739": "exhausted-iterator",
    "GW740": "gradients-cleared-before-step",
    "GW741": "learning-rate-always-zero",
    "GW742": "gradient-hook-returns-zero",
    "GW743": "gradient-clipped-to-zero",
    "GW744": "learning-rate-decayed-to-zero",
    "GW736": "unscaled-gradients",
}


def compatible(a: str, b: str) -> bool:
    """True when codes ``a`` and ``b`` name the same hazard family (or are equal): one of the
    groups above, or two rules that predict the same PyTorch message (rules/messages.py)."""
    if a == b:
        return True
    return any(a in g and b in g for g in _GROUPS) or any(a in m.codes and b in m.codes for m in TORCH_MESSAGES)


def kind_of(code: str) -> str:
    kind = _KIND_OF_CODE.get(code)
    if kind is None:
        kind = next((m.kind for m in TORCH_MESSAGES if code in m.codes), "other")
    return kind


# kinds of the messages raised by an in-place write (their site is the write)
_WRITE_KINDS = frozenset({"leaf-inplace", "expanded-write", "overlapping-write", "multi-view-inplace",
                          "custom-function-view", "no-grad-view-inplace", "detach-view"})


@dataclass(frozen=True)
class Site:
    """A place in a file (1-based row)."""

    filename: str
    row: int
    function: str = ""

    def to_json(self) -> Dict[str, Any]:
        return {"filename": self.filename, "row": self.row}

    @classmethod
    def from_event(cls, value: Any) -> Optional["Site"]:
        if not value:
            return None
        try:
            return cls(str(value[0]), int(value[1]), str(value[2]) if len(value) > 2 else "")
        except (TypeError, ValueError, IndexError):
            return None

    def key(self) -> Tuple[str, int]:
        return (_norm(self.filename), self.row)

    def __str__(self) -> str:
        return f"{self.filename}:{self.row}"


@dataclass(frozen=True)
class RelatedSite:
    kind: str  # write | save | backward | freed | call | step | created | note
    site: Site
    message: str = ""

    def to_json(self) -> Dict[str, Any]:
        return {"kind": self.kind, "message": self.message, **self.site.to_json()}


@dataclass
class Finding:
    """One result of a debug run (see the module docstring for ``source`` and ``status``)."""

    code: str
    kind: str
    message: str
    status: str
    severity: str = "error"  # error | warning | information | hint
    source: str = "runtime"  # runtime | static
    filename: Optional[str] = None  # where the finding is shown
    row: Optional[int] = None
    write_site: Optional[Site] = None
    save_site: Optional[Site] = None
    backward_site: Optional[Site] = None
    freed_site: Optional[Site] = None
    related: Tuple[RelatedSite, ...] = ()
    ranks: Tuple[int, ...] = ()
    evidence: Dict[str, Any] = field(default_factory=dict)  # versions, ops, tensor, error text
    static: Optional[Diagnostic] = None  # the static diagnostic (source == "static")
    runtime: Optional["Finding"] = None  # the runtime finding that confirmed it

    # ---- presentation
    @property
    def location(self) -> Optional[Site]:
        if self.filename is None or self.row is None:
            return None
        return Site(self.filename, self.row)

    def sites(self) -> List[Tuple[str, Site]]:
        out: List[Tuple[str, Site]] = []
        for kind, site in (("write", self.write_site), ("save", self.save_site), ("freed", self.freed_site),
                           ("backward", self.backward_site)):
            if site is not None:
                out.append((kind, site))
        for r in self.related:
            out.append((r.kind, r.site))
        return out

    def to_json(self) -> Dict[str, Any]:
        def site(s: Optional[Site]) -> Optional[Dict[str, Any]]:
            return s.to_json() if s is not None else None

        out: Dict[str, Any] = {
            "code": self.code,
            "kind": self.kind,
            "message": self.message,
            "status": self.status,
            "severity": self.severity,
            "source": self.source,
            "filename": self.filename,
            "row": self.row,
            "write_site": site(self.write_site),
            "save_site": site(self.save_site),
            "backward_site": site(self.backward_site),
        }
        if self.freed_site is not None:
            out["freed_site"] = site(self.freed_site)
        if self.related:
            out["related"] = [r.to_json() for r in self.related]
        if self.ranks:
            out["ranks"] = list(self.ranks)
        if self.evidence:
            out["evidence"] = self.evidence
        if self.runtime is not None:
            out["runtime"] = self.runtime.to_json()
        return out

    def to_diagnostic(self) -> Diagnostic:
        """The engine's Diagnostic for this finding.

        A runtime finding becomes a new diagnostic (the language server publishes it with the
        source ``RUNTIME_SOURCE``), its write/save/backward sites as related information. A
        static diagnostic keeps its identity (code, span, message, fixes) and, once confirmed,
        gains the run's evidence as related information.
        """
        if self.static is not None:
            extra = tuple(self._evidence_related())
            return replace(self.static, related=tuple(self.static.related) + extra)
        rule = ""
        try:
            from gradwarden.rules import get_rule

            r = get_rule(self.code)
            rule = r.name if r is not None else ""
        except Exception:  # noqa: BLE001
            rule = ""
        filename = self.filename or "<unknown>"
        row = self.row or 1
        return Diagnostic(
            code=self.code,
            message=f"{self.message} (debug run)",
            severity=_severity(self.severity),
            filename=filename,
            span=_line_span(filename, row),
            related=tuple(self._evidence_related()),
            rule=rule,
        )

    def _evidence_related(self) -> Iterable[Related]:
        source = self.runtime if self.runtime is not None else self
        ev = source.evidence
        versions = ev.get("versions") or {}
        labels = {
            "write": "debug run: the in-place write is here"
                     + (f" ({ev['write_op']})" if ev.get("write_op") else "")
                     + (f", version {versions.get('write_from')} -> {versions.get('write_to')}"
                        if versions.get("write_from") is not None else ""),
            "save": "debug run: saved for backward here"
                    + (f" by {ev['save_op']}" if ev.get("save_op") else "")
                    + (f" at version {versions.get('saved')}" if versions.get("saved") is not None else ""),
            "backward": "debug run: backward failed here" if source.severity == "error"
                        else "debug run: backward used the stale value here",
            "freed": "debug run: this backward freed the graph",
        }
        seen: Set[Tuple[str, str, int]] = set()
        for kind, site in source.sites():
            key = (kind, _norm(site.filename), site.row)
            if key in seen:
                continue
            seen.add(key)
            message = labels.get(kind)
            if message is None:
                rel = next((r for r in source.related if r.kind == kind and r.site == site), None)
                message = "debug run: " + (rel.message if rel and rel.message else kind)
            yield Related(span=_line_span(site.filename, site.row), message=message, kind=kind,
                          filename=site.filename)


def _severity(label: str) -> Severity:
    try:
        return Severity.parse(label)
    except KeyError:
        return Severity.ERROR


_LINE_CACHE: Dict[str, List[str]] = {}


def _line_span(filename: str, row: int) -> Span:
    """The span of a whole line (its text without leading indentation), or column 1."""
    lines = _LINE_CACHE.get(filename)
    if lines is None:
        try:
            lines = Path(filename).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            lines = []
        _LINE_CACHE[filename] = lines
    if 1 <= row <= len(lines):
        text = lines[row - 1]
        start = len(text) - len(text.lstrip())
        return Span(row, start + 1, row, max(len(text.rstrip()), start) + 1)
    return Span(row, 1, row, 1)


def _norm(filename: str) -> str:
    try:
        return os.path.normcase(os.path.realpath(filename))
    except (OSError, ValueError):
        return filename


# --------------------------------------------------------------------------- events
@dataclass
class RunEvents:
    """Everything the child processes reported, merged over ranks and processes."""

    findings: List[Finding] = field(default_factory=list)
    coverage: Dict[str, Set[int]] = field(default_factory=dict)  # normalised filename -> rows
    files: Dict[str, str] = field(default_factory=dict)  # normalised -> as reported
    hello: Dict[Tuple[str, int], Dict[str, Any]] = field(default_factory=dict)  # (rank, pid) -> event
    starts: Dict[Tuple[str, int], Dict[str, Any]] = field(default_factory=dict)
    exits: Dict[Tuple[str, int], Dict[str, Any]] = field(default_factory=dict)
    fatal: List[Dict[str, Any]] = field(default_factory=list)
    backward_calls: Dict[str, int] = field(default_factory=dict)  # rank -> top-level backward calls
    last_backward_site: Optional[Site] = None
    # what the run showed that proves no hazard by itself, only the premise of a static
    # diagnostic (a hook slot overwritten within a step, GW721): it confirms that diagnostic
    # and is never reported alone
    premises: List[Finding] = field(default_factory=list)

    @property
    def ranks(self) -> List[str]:
        return sorted({rank for rank, _ in self.hello}, key=lambda r: (len(r), r))

    def main_exit(self, rank: str) -> Optional[Dict[str, Any]]:
        """The exit of the process that started for ``rank`` (not of one it forked)."""
        for (r, pid), ev in self.exits.items():
            if r == rank and (r, pid) in self.hello:
                return ev
        return None

    def add(self, ev: Mapping[str, Any]) -> Optional[Finding]:
        """Fold one event in; returns the new finding, if the event is one."""
        kind = ev.get("ev")
        rank = str(ev.get("rank", "0"))
        pid = int(ev.get("pid", 0) or 0)
        if kind in ("finding", "raised"):
            finding = finding_from_event(ev) if kind == "finding" else finding_from_raised(ev)
            if finding is None:
                return None
            if ev.get("confirm_only"):
                if all(_finding_key(p) != _finding_key(finding) for p in self.premises):
                    self.premises.append(finding)
                return None
            merged = self._merge(finding)
            return finding if merged is finding else None
        if kind == "lines":
            for fn, rows in (ev.get("lines") or {}).items():
                key = _norm(fn)
                self.files.setdefault(key, fn)
                self.coverage.setdefault(key, set()).update(int(r) for r in rows)
        elif kind == "backward":
            n = int(ev.get("n", 0) or 0)
            if n > self.backward_calls.get(rank, 0):
                self.backward_calls[rank] = n
            self.last_backward_site = Site.from_event(ev.get("site"))
        elif kind == "hello":
            self.hello[(rank, pid)] = dict(ev)
        elif kind == "start":
            self.starts[(rank, pid)] = dict(ev)
        elif kind == "exit":
            self.exits[(rank, pid)] = dict(ev)
            n = int(ev.get("backward_calls", 0) or 0)
            if (rank, pid) in self.hello and n > self.backward_calls.get(rank, 0):
                self.backward_calls[rank] = n
        elif kind == "fatal":
            self.fatal.append(dict(ev))
        return None

    def _merge(self, finding: Finding) -> Finding:
        key = _finding_key(finding)
        for existing in self.findings:
            if _finding_key(existing) == key:
                existing.ranks = tuple(sorted(set(existing.ranks) | set(finding.ranks)))
                if _SEVERITY_RANK.get(finding.severity, 9) < _SEVERITY_RANK.get(existing.severity, 9):
                    # the same place seen twice (a warning, then the error it led to): keep the error
                    existing.severity = finding.severity
                    existing.message = finding.message
                    existing.evidence = dict(existing.evidence, **finding.evidence)
                    existing.related = tuple(dict.fromkeys(existing.related + finding.related))
                return existing
        self.findings.append(finding)
        return finding


_SEVERITY_RANK = {"error": 0, "warning": 1, "information": 2, "hint": 3}


def _finding_key(f: Finding) -> Tuple[Any, ...]:
    def k(s: Optional[Site]) -> Tuple[Any, ...]:
        return s.key() if s is not None else ()

    # the location too: findings the child places by ``site`` alone (an untrained parameter's
    # cut, a non-finite branch) differ only there
    return (f.code, f.kind, k(f.location), k(f.write_site), k(f.save_site), k(f.backward_site), k(f.freed_site))


def finding_from_event(ev: Mapping[str, Any]) -> Finding:
    """A runtime Finding from the child's ``finding`` event."""
    write = Site.from_event(ev.get("write_site"))
    save = Site.from_event(ev.get("save_site"))
    backward = Site.from_event(ev.get("backward_site"))
    freed = Site.from_event(ev.get("freed_site"))
    related: List[RelatedSite] = []
    for item in ev.get("sites") or ():
        site = Site.from_event(item.get("site")) if isinstance(item, Mapping) else None
        if site is None:
            continue
        kind = str(item.get("kind", "note"))
        if (kind == "freed" and site == freed) or (kind == "save" and site == save):
            continue
        related.append(RelatedSite(kind, site, str(item.get("message", ""))))
    code = str(ev.get("code", ""))
    kind = str(ev.get("kind") or kind_of(code))
    # the child names the primary site when it is none of the four (a freed graph: the reuse)
    where = Site.from_event(ev.get("site")) or _primary(kind, write, save, backward, freed)
    evidence = {k: ev[k] for k in ("versions", "tensor", "save_op", "write_op", "module", "error",
                                   "backward_calls") if ev.get(k) is not None}
    try:
        rank = int(ev.get("rank", 0))
    except (TypeError, ValueError):
        rank = 0
    return Finding(
        code=code,
        kind=kind,
        message=str(ev.get("message", "")),
        status=RUNTIME_ONLY,
        severity=str(ev.get("severity", "error")),
        source="runtime",
        filename=where.filename if where else None,
        row=where.row if where else None,
        write_site=write,
        save_site=save,
        backward_site=backward,
        freed_site=freed,
        related=tuple(related),
        ranks=(rank,),
        evidence=evidence,
    )


def finding_from_raised(ev: Mapping[str, Any]) -> Optional[Finding]:
    """A runtime Finding from a ``raised`` event (an exception or a warning torch raised that
    the child does not classify itself): the code of the rule that predicts the message
    (rules/messages.py), or None when no rule does."""
    text = _plain_text(str(ev.get("text", "")))
    exc = str(ev.get("exc", ""))
    entry = classify_message(text, exc)
    if entry is None:
        return None
    site = Site.from_event(ev.get("site"))
    first = text.strip().splitlines()[0] if text.strip() else text
    warning = exc.endswith("Warning")
    # sites the child knows beside the raise (where a view written under grad was made under no_grad)
    related = []
    for item in ev.get("sites") or ():
        where = Site.from_event(item.get("site")) if isinstance(item, Mapping) else None
        if where is not None:
            related.append(RelatedSite(str(item.get("kind", "note")), where, str(item.get("message", ""))))
    try:
        rank = int(ev.get("rank", 0))
    except (TypeError, ValueError):
        rank = 0
    return Finding(
        code=entry.codes[0],
        kind=entry.kind,
        message=first[:500],
        status=RUNTIME_ONLY,
        severity="warning" if warning else "error",
        source="runtime",
        filename=site.filename if site else None,
        row=site.row if site else None,
        write_site=site if entry.kind in _WRITE_KINDS else None,
        backward_site=None if entry.kind in _WRITE_KINDS else site,
        related=tuple(related),
        ranks=(rank,),
        evidence={"error": first[:500], "exception": exc},
    )


_ANSI = None


def _plain_text(text: str) -> str:
    """``text`` without terminal escapes (torch colours some of its messages)."""
    global _ANSI
    if _ANSI is None:
        import re

        _ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
    return _ANSI.sub("", text)


def _primary(kind: str, write: Optional[Site], save: Optional[Site], backward: Optional[Site],
             freed: Optional[Site]) -> Optional[Site]:
    if kind == "freed-graph":
        return save or freed or backward
    return write or save or backward or freed


def read_events(paths: Iterable[Path]) -> RunEvents:
    """Parse every events file (incomplete last lines are ignored)."""
    run = RunEvents()
    for path in sorted(paths):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        for line in data.split(b"\n"):
            if not line.strip():
                continue
            try:
                ev = json.loads(line.decode("utf-8", "replace"))
            except ValueError:
                continue
            if isinstance(ev, dict):
                run.add(ev)
    return run


# --------------------------------------------------------------------------- confirmation
def _diag_rows(d: Diagnostic, family_d: bool) -> Set[Tuple[str, int]]:
    rows = {(_norm(d.filename), d.span.row)}
    for r in d.related:
        if r.kind == "backward" and not family_d:
            continue
        rows.add((_norm(r.filename or d.filename), r.span.row))
    return rows


def _finding_rows(f: Finding, family_d: bool) -> Set[Tuple[str, int]]:
    rows = set()
    for kind, site in f.sites():
        if kind == "backward" and not family_d:
            continue
        rows.add(site.key())
    return rows


def matches(d: Diagnostic, f: Finding) -> bool:
    """Does runtime finding ``f`` show static diagnostic ``d`` happening?"""
    if not compatible(d.code, f.code):
        return False
    family_d = d.code.startswith("GW4") or d.code == "GW504"
    frows = _finding_rows(f, family_d)
    if (_norm(d.filename), d.span.row) in frows:
        return True
    loc = f.location
    # a finding the run saw only where torch raised (a non-scalar backward, a frozen loss):
    # the static finding may sit where the fix goes and name that backward as related
    raised_only = f.write_site is None and f.save_site is None
    if loc is not None and loc.key() in _diag_rows(d, family_d or raised_only):
        return True
    return bool(frows & _diag_rows(d, family_d)) and family_d


def classify(
    static: Sequence[Diagnostic],
    runtime: Sequence[Finding],
    coverage: Mapping[str, Set[int]],
    premises: Sequence[Finding] = (),
) -> List[Finding]:
    """The verdict on every static diagnostic, then the runtime findings no static one explains
    (``premises`` confirm a static diagnostic and are never reported alone)."""
    out: List[Finding] = []
    used: Set[int] = set()
    for d in static:
        match = next((f for f in list(runtime) + list(premises) if matches(d, f)), None)
        rows = coverage.get(_norm(d.filename))
        if match is not None:
            used.add(id(match))
            status = CONFIRMED
        elif rows is not None and d.span.row in rows:
            status = NOT_REPRODUCED
        else:
            status = NOT_REACHED
        sites = _static_sites(d)
        out.append(Finding(
            code=d.code,
            kind=kind_of(d.code),
            message=d.message,
            status=status,
            severity=d.severity.label,
            source="static",
            filename=d.filename,
            row=d.span.row,
            write_site=(match.write_site if match else None) or sites.get("write"),
            save_site=(match.save_site if match else None) or sites.get("save"),
            backward_site=(match.backward_site if match else None) or sites.get("backward"),
            freed_site=(match.freed_site if match else None) or sites.get("freed"),
            ranks=match.ranks if match else (),
            evidence=dict(match.evidence) if match else {},
            static=d,
            runtime=match,
        ))
    for f in runtime:
        if id(f) not in used:
            out.append(f)
    return out


# raised by a backward (or autograd.grad): the raise is the finding's backward site wherever it is shown
_RAISED_AT_BACKWARD = frozenset({"GW701", "GW702"})


def shown_at_static_cause(classified: Sequence[Finding]) -> Dict[int, Finding]:
    """The run's findings seen only where torch raised (a non-scalar ``backward()``, a loss that
    does not require grad) that confirm a static diagnostic placed where the fix goes (the helper
    that returns a per-sample loss, the call that froze the model) and naming that raise: the
    run's finding is shown at the static line too, the raise kept as its backward site. Returns
    ``id(run's finding) -> the same finding shown there``; the static findings point at it."""
    moved: Dict[int, Finding] = {}
    for f in classified:
        r = f.runtime
        if f.source != "static" or r is None or f.filename is None or f.row is None or r.location is None or \
                r.code not in _RAISED_AT_BACKWARD:
            continue
        if r.write_site is not None or r.save_site is not None or r.location.key() == f.location.key():  # type: ignore[union-attr]
            continue
        if f.location.key() in _finding_rows(r, True):  # type: ignore[union-attr]
            continue  # the run names that line itself
        new = moved.get(id(r))
        if new is None:
            new = moved[id(r)] = replace(r, filename=f.filename, row=f.row, backward_site=r.backward_site or r.location)
        f.runtime = new
    for f in classified:
        r = f.runtime
        if f.source != "static" or r is None or f.filename is None or f.row is None or r.location is None or \
                r.code not in _CONFIRMED_UPSTREAM or id(r) in moved:
            continue
        if r.location.key() == f.location.key() or f.code != r.code:  # type: ignore[union-attr]
            continue
        if f.location.key() not in {s.key() for k, s in r.sites() if k == "note"}:  # type: ignore[union-attr]
            continue
        # the run saw the op nearest the loss turn a zero into NaN; the static line is a singular
        # op below it on the same backward (the fix goes there): shown there, the run's op kept
        moved[id(r)] = f.runtime = replace(
            r, filename=f.filename, row=f.row,
            related=tuple(x for x in r.related if x.site.key() != f.location.key()) + (  # type: ignore[union-attr]
                RelatedSite("note", r.location, "the op whose backward the run saw turn a zero gradient into NaN"),))
    return moved


# a non-finite gradient: the run names the first singular op on the backward, its notes the
# singular ops below it; a static diagnostic at one of those is where the finding is shown
_CONFIRMED_UPSTREAM = frozenset({"GW720"})


def _static_sites(d: Diagnostic) -> Dict[str, Site]:
    sites: Dict[str, Site] = {}
    if d.code in ("GW101", "GW201", "GW202", "GW501", "GW502", "GW601", "GW301", "GW302", "GW303", "GW304",
                  "GW305", "GW306"):
        sites["write"] = Site(d.filename, d.span.row)
    for r in d.related:
        if r.kind in ("save", "backward", "freed") and r.kind not in sites:
            sites[r.kind] = Site(r.filename or d.filename, r.span.row)
    return sites
