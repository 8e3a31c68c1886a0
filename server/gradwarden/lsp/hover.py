"""Hover text: a tensor's version-counter timeline as the engine saw it, a short explanation of
version counters, and the rule's documentation. Pure functions over the engine's dataclasses
(``explain.Timeline``, ``Diagnostic``); the server decides which ones apply at a position.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple

from gradwarden.engine.diagnostic import Diagnostic, Related, Span
from gradwarden.noqa import comment_start

Label = Callable[[int], str]  # 1-based row -> "line 12" / "cell 3, line 4"

VERSION_COUNTER = (
    "Every tensor carries a *version counter* (views and `.detach()` aliases share their base's), "
    "and each in-place write — `+=`, `mul_()`, slice assignment, `optimizer.step()` — bumps it. "
    "When an operation saves a tensor for backward, autograd records the counter's value; "
    "`backward()` compares it with the current value and raises *\"one of the variables needed for "
    "gradient computation has been modified by an inplace operation\"* when they differ, instead of "
    "computing gradients from overwritten values."
)
DATA_WRITES = (
    "Writes through `.data` change the memory without bumping the counter, so autograd cannot "
    "notice them: the gradients come out silently wrong."
)

_ICONS = {
    "created": "○",
    "save": "◆",
    "write": "✎",
    "step": "✎",
    "data_write": "⚠",
    "backward": "⟲",
    "freed": "✗",
    "call": "→",
    "note": "·",
}


@dataclass(frozen=True)
class Event:
    """One line of a timeline (from ``explain.TimelineEvent`` or a diagnostic's related/timeline)."""

    span: Span
    kind: str
    message: str
    version: Optional[int] = None


def events_of_timeline(timeline) -> List[Event]:
    return [Event(e.span, e.kind, e.message, getattr(e, "version", None)) for e in timeline.events]


def events_of_diagnostic(d: Diagnostic) -> List[Event]:
    """The diagnostic's own timeline when the engine attached one; else its related locations
    and the flagged statement, in source order."""
    if d.timeline:
        return [Event(r.span, r.kind, r.message) for r in d.timeline]
    events = [Event(r.span, r.kind, r.message) for r in d.related]
    events.append(Event(d.span, "write" if d.code.startswith(("GW1", "GW2", "GW3", "GW6")) else "note",
                        d.message.split("\n", 1)[0]))
    return sorted(events, key=lambda e: (e.span.row, e.span.column))


# --------------------------------------------------------------------------- markdown helpers
class _Doc:
    """Markdown or plain text, written once."""

    def __init__(self, markdown: bool) -> None:
        self.md = markdown
        self.parts: List[str] = []

    def code(self, text: str) -> str:
        return f"`{text}`" if self.md else text

    def bold(self, text: str) -> str:
        return f"**{text}**" if self.md else text

    def para(self, text: str) -> None:
        self.parts.append(text if self.md else strip_markdown(text))

    def rule(self) -> None:
        self.parts.append("---" if self.md else "")

    def text(self) -> str:
        return "\n\n".join(p for p in self.parts).strip() + "\n"


def strip_markdown(text: str) -> str:
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", text)
    text = re.sub(r"(?<!\w)\*(?!\s)(.+?)(?<!\s)\*(?!\w)", r"\1", text)
    text = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r"\1 (\2)", text)
    text = text.replace("``", "`").replace("`", "")
    text = re.sub(r"^#+\s*", "", text, flags=re.M)
    return text


def _version_tag(e: Event) -> str:
    if e.version is None or "version" in e.message:
        return ""
    return f" (v{e.version})"


def render_events(events: Sequence[Event], label: Label, markdown: bool, here_row: Optional[int] = None) -> str:
    lines = []
    for e in events:
        icon = _ICONS.get(e.kind, "·")
        where = label(e.span.row)
        here = "  ← here" if here_row is not None and e.span.row <= here_row <= e.span.end_row else ""
        msg = e.message + _version_tag(e)
        if markdown:
            lines.append(f"- {icon} **{where}** — {msg}{here}")
        else:
            lines.append(f"  {icon} {where}: {strip_markdown(msg)}{here}")
    return "\n".join(lines)


def rule_summary(code: str, markdown: bool, *, full: bool = False) -> Optional[str]:
    """``**GW201** `saved-tensor-modified` — summary`` and the doc's first paragraph (the whole doc
    with ``full``), with a link to the rule's page."""
    from gradwarden.rules import get_rule

    rule = get_rule(code)
    if rule is None:
        return None
    try:
        from gradwarden.formats import rule_help_uri

        url = rule_help_uri(rule)
    except Exception:  # noqa: BLE001 - a link is a nicety
        url = ""
    doc = rule.doc()
    body = doc if full else doc.split("\n\n", 1)[0]
    body = _rst_to_md(body)
    head = f"**{rule.code}** `{rule.name}` — {rule.summary}"
    if url:
        head += f" ([docs]({url}))"
    sev = f"Default severity: {rule.severity.label}."
    said = _torch_messages(rule.code)
    if said:
        sev += f" PyTorch's message: {said}."
    text = f"{head}\n\n{body}\n\n{sev}" if body else f"{head}\n\n{sev}"
    return text if markdown else strip_markdown(text)


def _torch_messages(code: str) -> str:
    """The error/warning texts of torch this rule predicts, linked to their entries in
    docs/errors.md (the catalogue a user searches with the message they got)."""
    try:
        from gradwarden.errgen.families import families_for
        from gradwarden.formats import ERRORS_URL
    except Exception:  # noqa: BLE001 - a link is a nicety
        return ""
    return "; ".join(f"[{f.title}]({ERRORS_URL}#{f.key})" for f in families_for(code))


def _rst_to_md(text: str) -> str:
    return text.replace("``", "`")


# --------------------------------------------------------------------------- the hovers
def render_timeline_hover(
    *,
    name: str,
    events: Sequence[Event],
    label: Label,
    markdown: bool,
    here_row: Optional[int] = None,
    requires_grad: Optional[bool] = None,
    is_leaf: Optional[bool] = None,
    note: str = "",
    diagnostic: Optional[Diagnostic] = None,
) -> str:
    doc = _Doc(markdown)
    facts = []
    if requires_grad is not None:
        facts.append("requires grad" if requires_grad else "does not require grad")
    if is_leaf is not None and requires_grad:
        facts.append("a leaf" if is_leaf else "not a leaf")
    head = f"{doc.bold(doc.code(name))} — version-counter timeline"
    if facts:
        head += f" ({', '.join(facts)})"
    doc.para(head)
    if events:
        doc.parts.append(render_events(events, label, markdown, here_row))
    else:
        doc.para("No save, in-place write or backward of this tensor was seen.")
    if note:
        doc.para(note[0].upper() + note[1:] + ".")
    if diagnostic is not None:
        doc.para(f"{doc.bold(diagnostic.code)}: {diagnostic.message.split(chr(10), 1)[0]}")
    doc.rule()
    doc.para(VERSION_COUNTER)
    if any(e.kind == "data_write" for e in events) or (diagnostic is not None and diagnostic.code == "GW601"):
        doc.para(DATA_WRITES)
    if diagnostic is not None:
        summary = rule_summary(diagnostic.code, markdown)
        if summary:
            doc.rule()
            doc.parts.append(summary)
    return doc.text()


def render_diagnostic_hover(d: Diagnostic, label: Label, markdown: bool, here_row: Optional[int] = None) -> str:
    """A flagged range without an engine timeline: its events (related locations), message and
    rule documentation."""
    name = _subject(d) or d.code
    return render_timeline_hover(name=name, events=events_of_diagnostic(d), label=label, markdown=markdown,
                                 here_row=here_row, diagnostic=d)


def _subject(d: Diagnostic) -> Optional[str]:
    m = re.search(r"`([^`]+)`", d.message)
    return m.group(1) if m else None


def render_rule_hover(codes: Sequence[str], markdown: bool) -> Optional[str]:
    parts = [s for s in (rule_summary(c, markdown, full=len(codes) == 1) for c in codes) if s]
    if not parts:
        return None
    sep = "\n\n---\n\n" if markdown else "\n\n"
    return sep.join(parts) + "\n"


# --------------------------------------------------------------------------- noqa under the cursor
_NOQA = re.compile(r"#\s*(?:gradwarden\s*:\s*)?noqa(?![A-Za-z0-9_])(?:\s*:\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?",
                   re.IGNORECASE)
_CODE = re.compile(r"[A-Za-z]+[0-9]+")


def noqa_codes_at(line: str, column: int) -> Optional[List[str]]:
    """The rule codes of a ``# noqa`` comment when ``column`` (1-based) is on it: the code under
    the cursor, or every code of the comment; an empty list for a bare ``# noqa``; None when
    the cursor is not on a noqa comment."""
    hash_at = comment_start(line)
    if hash_at is None:
        return None
    for m in _NOQA.finditer(line, hash_at):
        start, end = m.start() + 1, m.end() + 1
        if not start <= column <= end:
            continue
        codes_text = m.group("codes")
        if not codes_text:
            return []
        base = m.start("codes")
        for cm in _CODE.finditer(codes_text):
            if base + cm.start() + 1 <= column <= base + cm.end() + 1:
                return [cm.group(0).upper()]
        return [c.upper() for c in _CODE.findall(codes_text)]
    return None


def bare_noqa_text(markdown: bool) -> str:
    text = ("`# noqa` silences every gradwarden diagnostic on this line; `# noqa: GW201` only the "
            "listed rules (prefixes such as `GW2` work too). `# gradwarden: noqa` on a line of its own "
            "applies to the whole file.")
    return (text if markdown else strip_markdown(text)) + "\n"


def diagnostic_at(diags: Sequence[Diagnostic], row: int, column: int) -> Optional[Diagnostic]:
    """The most severe diagnostic whose range contains the position (then the narrowest)."""
    hits = [d for d in diags if d.span.contains(row, column)]
    if not hits:
        return None
    hits.sort(key=lambda d: (int(d.severity), d.span.end_row - d.span.row, d.span.end_column - d.span.column))
    return hits[0]


def diagnostic_touching(diags: Sequence[Diagnostic], row: int, column: int) -> Optional[Diagnostic]:
    """A diagnostic one of whose related or timeline locations contains the position (the save
    site, the backward call, ...)."""
    for d in sorted(diags, key=lambda d: int(d.severity)):
        for r in tuple(d.related) + tuple(d.timeline):
            if r.span.contains(row, column):
                return d
    return None


def related_rows(d: Diagnostic) -> Tuple[int, ...]:
    return tuple(sorted({r.span.row for r in d.related} | {d.span.row}))


__all__ = [
    "Event", "VERSION_COUNTER", "render_timeline_hover", "render_diagnostic_hover", "render_rule_hover",
    "noqa_codes_at", "diagnostic_at", "diagnostic_touching", "events_of_timeline", "events_of_diagnostic",
    "bare_noqa_text", "Related",
]
