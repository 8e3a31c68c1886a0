"""Output formats of ``gradwarden check`` (text, json, json-lines, sarif, github) and of the
rule documentation (``gradwarden rules``, docs/rules.md). Pure functions: diagnostics in,
a string out.
"""
from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Type
from urllib.parse import quote

from gradwarden import __version__
from gradwarden.engine.diagnostic import Diagnostic, Severity
from gradwarden.rules.base import Rule

OUTPUT_FORMATS = ("text", "json", "json-lines", "sarif", "github")

REPOSITORY_URL = "https://github.com/gradwarden/gradwarden"
DOCS_URL = REPOSITORY_URL + "/blob/main/docs/rules.md"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def sort_diagnostics(diags: Iterable[Diagnostic]) -> List[Diagnostic]:
    return sorted(diags, key=lambda d: (d.filename, d.span.row, d.span.column, d.code, d.message))


# --------------------------------------------------------------------------- colors
class Style:
    """ANSI styling; a no-op when color is off."""

    CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "blue": "34", "cyan": "36"}

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *styles: str) -> str:
        if not self.enabled or not styles:
            return text
        seq = ";".join(self.CODES[s] for s in styles)
        return f"\x1b[{seq}m{text}\x1b[0m"


_SEVERITY_STYLE = {
    Severity.ERROR: ("bold", "red"),
    Severity.WARNING: ("bold", "yellow"),
    Severity.INFORMATION: ("bold", "blue"),
    Severity.HINT: ("dim",),
}


# --------------------------------------------------------------------------- text
def format_text(
    diags: Sequence[Diagnostic],
    *,
    color: bool = False,
    show_source: bool = False,
    sources: Optional[Mapping[str, Optional[str]]] = None,
) -> str:
    """``path:line:col: CODE message``, then the related locations indented, one per line."""
    style = Style(color)
    sep = style(":", "cyan")
    lines: List[str] = []
    for d in sort_diagnostics(diags):
        head = (f"{style(d.filename, 'bold')}{sep}{d.span.row}{sep}{d.span.column}{sep} "
                f"{style(d.code, *_SEVERITY_STYLE.get(d.severity, ()))} {d.message}")
        lines.append(head)
        if show_source and sources is not None:
            lines.extend(_source_excerpt(sources.get(d.filename), d, style))
        for r in d.related:
            where = r.filename or d.filename
            lines.append(f"  {where}{sep}{r.span.row}{sep}{r.span.column}{sep} {style('note', 'bold', 'cyan')}: {r.message}")
    return "".join(line + "\n" for line in lines)


def _source_excerpt(text: Optional[str], d: Diagnostic, style: Style) -> List[str]:
    if not text:
        return []
    src_lines = text.splitlines()
    if not 1 <= d.span.row <= len(src_lines):
        return []
    line = src_lines[d.span.row - 1]
    start = len(line[: max(d.span.column - 1, 0)].expandtabs(4))
    end_col = d.span.end_column if d.span.end_row == d.span.row else len(line) + 1
    end = len(line[: max(end_col - 1, 0)].expandtabs(4))
    width = max(1, end - start)
    gutter = " " * len(str(d.span.row))
    bar = style("|", "blue", "bold")
    carets = style("^" * width, *_SEVERITY_STYLE.get(d.severity, ()))
    return [
        f"  {gutter} {bar}",
        f"  {style(str(d.span.row), 'blue', 'bold')} {bar} {line.expandtabs(4)}",
        f"  {gutter} {bar} {' ' * start}{carets}",
        f"  {gutter} {bar}",
    ]


def _plural(n: int, word: str) -> str:
    if word == "information":
        return f"{n} information"
    return f"{n} {word}" + ("" if n == 1 else "s")


def summary_line(diags: Sequence[Diagnostic]) -> str:
    """``Found 3 problems (2 errors, 1 warning).``, ``Found 1 error.`` or ``All checks passed!``"""
    if not diags:
        return "All checks passed!"
    counts = Counter(d.severity for d in diags)
    if set(counts) == {Severity.ERROR}:
        return f"Found {_plural(len(diags), 'error')}."
    head = f"Found {_plural(len(diags), 'problem')}"
    parts = [_plural(counts[s], s.label) for s in Severity if counts[s]]
    return f"{head} ({', '.join(parts)})."


def format_statistics(diags: Sequence[Diagnostic], *, output_format: str = "text") -> str:
    """Count per code, most frequent first."""
    counts = Counter(d.code for d in diags)
    info: Dict[str, Diagnostic] = {}
    for d in diags:
        info.setdefault(d.code, d)
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if output_format in ("json", "json-lines", "sarif"):
        data = [{"code": code, "name": _rule_name(info[code]), "count": n, "severity": info[code].severity.label}
                for code, n in rows]
        return json.dumps(data, indent=2) + "\n"
    if not rows:
        return ""
    wn = max(len(str(n)) for _, n in rows)
    wc = max(len(code) for code, _ in rows)
    ws = max(len(info[code].severity.label) for code, _ in rows)
    return "".join(
        f"{n:>{wn}}\t{code:<{wc}}\t{info[code].severity.label:<{ws}}\t{_rule_name(info[code])}\n" for code, n in rows
    )


def _rule_name(d: Diagnostic) -> str:
    if d.rule:
        return d.rule
    from gradwarden.rules import get_rule

    rule = get_rule(d.code)
    return rule.name if rule else ""


# --------------------------------------------------------------------------- json
def format_json(diags: Sequence[Diagnostic]) -> str:
    return json.dumps([d.to_json() for d in sort_diagnostics(diags)], indent=2, ensure_ascii=False) + "\n"


def format_json_lines(diags: Sequence[Diagnostic]) -> str:
    return "".join(json.dumps(d.to_json(), ensure_ascii=False) + "\n" for d in sort_diagnostics(diags))


# --------------------------------------------------------------------------- github
def escape_github_data(text: str) -> str:
    """Escape a workflow command's message (as @actions/core does)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_github_property(text: str) -> str:
    """Escape a workflow command property value: also ``:`` and ``,``."""
    return escape_github_data(text).replace(":", "%3A").replace(",", "%2C")


_GITHUB_LEVEL = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFORMATION: "notice",
    Severity.HINT: "notice",
}


def format_github(diags: Sequence[Diagnostic]) -> str:
    """GitHub Actions workflow commands (annotations); related locations become extra lines
    of the message."""
    out: List[str] = []
    for d in sort_diagnostics(diags):
        props = [
            ("file", d.filename),
            ("line", str(d.span.row)),
            ("col", str(d.span.column)),
            ("endLine", str(d.span.end_row)),
            ("endColumn", str(d.span.end_column)),
            ("title", f"gradwarden ({d.code})"),
        ]
        message = d.message
        for r in d.related:
            message += f"\n{r.filename or d.filename}:{r.span.row}:{r.span.column}: note: {r.message}"
        prop_text = ",".join(f"{k}={escape_github_property(v)}" for k, v in props)
        out.append(f"::{_GITHUB_LEVEL.get(d.severity, 'notice')} {prop_text}::{escape_github_data(message)}\n")
    return "".join(out)


# --------------------------------------------------------------------------- sarif
_SARIF_LEVEL = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFORMATION: "note",
    Severity.HINT: "note",
}


def sarif_level(severity: Severity) -> str:
    return _SARIF_LEVEL.get(severity, "note")


def rule_help_uri(rule: Type[Rule]) -> str:
    return f"{DOCS_URL}#{rule_anchor(rule)}"


def _sarif_rule(rule: Type[Rule]) -> Dict[str, object]:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.doc() or rule.summary},
        "help": {"text": rule.doc() or rule.summary, "markdown": rule.render()},
        "helpUri": rule_help_uri(rule),
        "defaultConfiguration": {"level": sarif_level(rule.severity)},
        "properties": {"family": rule.family, "tags": ["pytorch", "autograd"]},
    }


def _sarif_uri(filename: str) -> Dict[str, str]:
    path = Path(filename)
    if path.is_absolute():
        return {"uri": path.as_uri()}
    return {"uri": quote(path.as_posix()), "uriBaseId": "%SRCROOT%"}


def _sarif_region(span) -> Dict[str, int]:
    return {
        "startLine": span.row,
        "startColumn": span.column,
        "endLine": span.end_row,
        "endColumn": span.end_column,
    }


def format_sarif(
    diags: Sequence[Diagnostic],
    *,
    rules: Optional[Sequence[Type[Rule]]] = None,
    errors: Sequence[str] = (),
    root: Optional[Path] = None,
) -> str:
    """SARIF 2.1.0: one run, the whole rule catalog in ``tool.driver.rules``, one result per
    diagnostic (columns counted in Unicode code points, relative paths against %SRCROOT%,
    the working directory). ``errors``: internal errors, reported as tool notifications."""
    if rules is None:
        from gradwarden.rules import all_rules

        rules = all_rules()
    index = {r.code: i for i, r in enumerate(rules)}
    results = []
    for d in sort_diagnostics(diags):
        result: Dict[str, object] = {
            "ruleId": d.code,
            "level": sarif_level(d.severity),
            "message": {"text": d.message},
            "locations": [
                {"physicalLocation": {"artifactLocation": _sarif_uri(d.filename), "region": _sarif_region(d.span)}}
            ],
        }
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        if d.related:
            result["relatedLocations"] = [
                {
                    "id": i,
                    "physicalLocation": {
                        "artifactLocation": _sarif_uri(r.filename or d.filename),
                        "region": _sarif_region(r.span),
                    },
                    "message": {"text": r.message},
                }
                for i, r in enumerate(d.related)
            ]
        results.append(result)
    base = Path(os.path.abspath(root if root is not None else os.getcwd()))
    base_uri = base.as_uri().rstrip("/") + "/"
    run = {
        "tool": {
            "driver": {
                "name": "gradwarden",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": REPOSITORY_URL,
                "rules": [_sarif_rule(r) for r in rules],
            }
        },
        "columnKind": "unicodeCodePoints",
        "originalUriBaseIds": {"%SRCROOT%": {"uri": base_uri}},
        "invocations": [
            {
                "executionSuccessful": not errors,
                "toolExecutionNotifications": [{"level": "error", "message": {"text": e}} for e in errors],
            }
        ],
        "results": results,
    }
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


FORMATTERS: Dict[str, Callable[..., str]] = {
    "text": format_text,
    "json": format_json,
    "json-lines": format_json_lines,
    "sarif": format_sarif,
    "github": format_github,
}


# --------------------------------------------------------------------------- rule docs
def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading (lowercase, punctuation dropped, spaces to -)."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def rule_heading(rule: Type[Rule]) -> str:
    return rule.render().splitlines()[0].lstrip("#").strip()


def rule_anchor(rule: Type[Rule]) -> str:
    return github_anchor(rule_heading(rule))


def rules_table(rules: Sequence[Type[Rule]]) -> str:
    """``gradwarden rules``: code, name, severity, summary."""
    header = ("CODE", "NAME", "SEVERITY", "SUMMARY")
    rows = [(r.code, r.name, r.severity.label, r.summary) for r in rules]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(3)]
    out = []
    for row in [header, *rows]:
        out.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3])) + "  " + row[3])
    return "".join(line.rstrip() + "\n" for line in out)


def rules_json(rules: Sequence[Type[Rule]]) -> str:
    data = [
        {
            "code": r.code,
            "name": r.name,
            "family": r.family,
            "severity": r.severity.label,
            "summary": r.summary,
            "explanation": r.doc(),
            "url": rule_help_uri(r),
        }
        for r in rules
    ]
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def rules_markdown(rules: Sequence[Type[Rule]]) -> str:
    """The full documentation page (docs/rules.md): a header, an index, then every rule."""
    out = [
        "# gradwarden rules",
        "",
        "<!-- Generated by `gradwarden rules --markdown > docs/rules.md`; do not edit by hand. -->",
        "",
        "Every rule of gradwarden with its default severity, explanation and examples.",
        "Select rules with `--select`/`--ignore` (or `select`/`ignore` under `[tool.gradwarden]`),",
        "change a severity with `severity = { GW404 = \"warning\" }`, silence one line with",
        "`# noqa: CODE`. `gradwarden rule CODE` prints one rule's section.",
        "",
        "| Code | Name | Severity | Summary |",
        "| --- | --- | --- | --- |",
    ]
    for r in rules:
        summary = r.summary.replace("|", "\\|")
        out.append(f"| [{r.code}](#{rule_anchor(r)}) | `{r.name}` | {r.severity.label} | {summary} |")
    out.append("")
    for r in rules:
        out.append(r.render().rstrip("\n"))
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
