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
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Type
from urllib.parse import quote

from gradwarden import __version__
from gradwarden.engine.diagnostic import Diagnostic, Severity
from gradwarden.rules.base import Rule

if TYPE_CHECKING:  # pragma: no cover
    from gradwarden.fixability import FixIndex
    from gradwarden.notebook import CellMap

Notebooks = Optional[Mapping[str, "CellMap"]]  # notebook filename -> its cells (positions per cell)

OUTPUT_FORMATS = ("text", "json", "json-lines", "sarif", "github", "html")

REPOSITORY_URL = "https://github.com/gradwarden/gradwarden"
DOCS_URL = REPOSITORY_URL + "/blob/main/docs/rules.md"
ERRORS_URL = REPOSITORY_URL + "/blob/main/docs/errors.md"  # torch's messages -> the rules that predict them
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
SEVERITY_WORD = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFORMATION: "info",
    Severity.HINT: "hint",
}


def _cell_span(filename: str, span, notebooks: Notebooks):
    """(cell number or None, span in that cell's rows)."""
    nb = notebooks.get(filename) if notebooks else None
    located = nb.span(span) if nb is not None else None
    if located is None:
        return None, span
    return located


def position(filename: str, span, notebooks: Notebooks = None, style: Optional["Style"] = None) -> str:
    """``a.py:4:1``, or ``nb.ipynb:cell 3:2:1`` in a notebook (ruff's form)."""
    style = style or Style(False)
    cell, local = _cell_span(filename, span, notebooks)
    parts = [style(filename, "bold")]
    if cell is not None:
        parts.append(f"cell {cell}")
    parts += [str(local.row), str(local.column)]
    return style(":", "cyan").join(parts)


_LINE_REF = re.compile(r"\b(line|lines) (\d+)\b")


def cell_message(message: str, filename: str, notebooks: Notebooks) -> str:
    """The engine's "line 7" as "cell 3, line 2" in a notebook (its rows are program rows)."""
    nb = notebooks.get(filename) if notebooks else None
    if nb is None:
        return message

    def sub(m: "re.Match[str]") -> str:
        found = nb.locate(int(m.group(2)))
        if found is None:
            return m.group(0)
        return f"cell {found[0]}, line {found[1]}"

    return _LINE_REF.sub(sub, message)


def format_text(
    diags: Sequence[Diagnostic],
    *,
    color: bool = False,
    show_source: bool = False,
    sources: Optional[Mapping[str, Optional[str]]] = None,
    notebooks: Notebooks = None,
    fixes: Optional["FixIndex"] = None,
) -> str:
    """``path:line:col: CODE [*] severity: message`` (``[*]``: ``--fix`` fixes it), then the
    related locations indented, one per line. In a notebook ``path:cell N:line:col``."""
    style = Style(color)
    sep = style(":", "cyan")
    lines: List[str] = []
    for d in sort_diagnostics(diags):
        sev_style = _SEVERITY_STYLE.get(d.severity, ())
        choice = fixes.choice(d) if fixes is not None else None
        mark = f" {style('[*]', 'cyan')}" if choice is not None and choice.safe else ""
        head = (f"{position(d.filename, d.span, notebooks, style)}{sep} {style(d.code, *sev_style)}{mark} "
                f"{style(SEVERITY_WORD.get(d.severity, d.severity.label) + ':', *sev_style)} "
                f"{cell_message(d.message, d.filename, notebooks)}")
        lines.append(head)
        if show_source and sources is not None:
            lines.extend(_source_excerpt(sources.get(d.filename), d, style, notebooks))
        for r in d.related:
            rname = r.filename or d.filename
            rwhere = position(rname, r.span, notebooks, Style(False)).replace(":", sep)
            lines.append(f"  {rwhere}{sep} {style('note', 'bold', 'cyan')}: "
                         f"{cell_message(r.message, rname, notebooks)}")
    return "".join(line + "\n" for line in lines)


def _source_excerpt(text: Optional[str], d: Diagnostic, style: Style, notebooks: Notebooks = None) -> List[str]:
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
    shown_row = _cell_span(d.filename, d.span, notebooks)[1].row  # a notebook: the row in its cell
    gutter = " " * len(str(shown_row))
    bar = style("|", "blue", "bold")
    carets = style("^" * width, *_SEVERITY_STYLE.get(d.severity, ()))
    return [
        f"  {gutter} {bar}",
        f"  {style(str(shown_row), 'blue', 'bold')} {bar} {line.expandtabs(4)}",
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
def _loc(row: int, column: int) -> Dict[str, int]:
    return {"row": row, "column": column}


def _located(filename: str, span, notebooks: Notebooks) -> Dict[str, Any]:
    """``location``/``end_location`` (and ``cell`` in a notebook: rows counted in the cell)."""
    cell, local = _cell_span(filename, span, notebooks)
    out: Dict[str, Any] = {}
    if cell is not None:
        out["cell"] = cell
    out["location"] = _loc(local.row, local.column)
    out["end_location"] = _loc(local.end_row, local.end_column)
    return out


def fix_json(fix, filename: str, notebooks: Notebooks = None) -> Dict[str, Any]:
    return {
        "kind": fix.kind,
        "message": fix.title,
        "applicability": "safe" if fix.safe else "unsafe",
        "preferred": fix.preferred,
        "edits": [{"content": e.content, **_located(filename, e.span, notebooks)} for e in fix.edits],
    }


def diagnostic_json(d: Diagnostic, notebooks: Notebooks = None, fixes: Optional["FixIndex"] = None) -> Dict[str, Any]:
    """``Diagnostic.to_json()``; with ``fixes``, ``fix`` is the fix that ``--fix`` (else
    ``--unsafe-fixes``) applies, with its edits, or null when no fix run would change anything;
    in a notebook, positions are counted in cells and each one names its ``cell``."""
    data = d.to_json()
    if fixes is not None:
        choice = fixes.choice(d)
        data["fix"] = fix_json(choice.fix, d.filename, notebooks) if choice is not None else None
        data["fixes"] = [fix_json(f, d.filename, notebooks) for f in fixes.fixes(d)]
    if notebooks and d.filename in notebooks:
        data["message"] = cell_message(d.message, d.filename, notebooks)
        data.update(_located(d.filename, d.span, notebooks))
        for entry, r in zip(data["related"], d.related):
            rname = r.filename or d.filename
            entry["message"] = cell_message(r.message, rname, notebooks)
            entry.update(_located(rname, r.span, notebooks))
        if fixes is None:
            data["fix"] = fix_json(d.preferred_fix(), d.filename, notebooks) if d.preferred_fix() else None
            data["fixes"] = [fix_json(f, d.filename, notebooks) for f in d.fixes]
    return data


def format_json(diags: Sequence[Diagnostic], *, notebooks: Notebooks = None, fixes: Optional["FixIndex"] = None) -> str:
    return json.dumps([diagnostic_json(d, notebooks, fixes) for d in sort_diagnostics(diags)],
                      indent=2, ensure_ascii=False) + "\n"


def format_json_lines(diags: Sequence[Diagnostic], *, notebooks: Notebooks = None,
                      fixes: Optional["FixIndex"] = None) -> str:
    return "".join(json.dumps(diagnostic_json(d, notebooks, fixes), ensure_ascii=False) + "\n"
                   for d in sort_diagnostics(diags))


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


def format_github(diags: Sequence[Diagnostic], *, notebooks: Notebooks = None) -> str:
    """GitHub Actions workflow commands (annotations); related locations become extra lines
    of the message. A notebook's finding is annotated on the file (its rows are not the
    JSON's lines) with ``cell N:line:col`` at the head of the message."""
    out: List[str] = []
    for d in sort_diagnostics(diags):
        in_notebook = bool(notebooks) and d.filename in notebooks  # type: ignore[operator]
        props = [("file", d.filename)]
        if not in_notebook:
            props += [
                ("line", str(d.span.row)),
                ("col", str(d.span.column)),
                ("endLine", str(d.span.end_row)),
                ("endColumn", str(d.span.end_column)),
            ]
        props.append(("title", f"gradwarden ({d.code})"))
        message = cell_message(d.message, d.filename, notebooks)
        if in_notebook:
            message = f"{position(d.filename, d.span, notebooks)}: {message}"
        for r in d.related:
            rname = r.filename or d.filename
            message += f"\n{position(rname, r.span, notebooks)}: note: {cell_message(r.message, rname, notebooks)}"
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


def _sarif_location(filename: str, span, notebooks: Notebooks) -> Dict[str, object]:
    """A physical location; in a notebook the region is counted in the cell's rows, and the
    cell is named (``properties.cell``, and a logical location ``nb.ipynb:cell 3``)."""
    cell, local = _cell_span(filename, span, notebooks)
    physical: Dict[str, object] = {"artifactLocation": _sarif_uri(filename), "region": _sarif_region(local)}
    location: Dict[str, object] = {"physicalLocation": physical}
    if cell is not None:
        physical["properties"] = {"cell": cell}
        location["logicalLocations"] = [{"name": f"cell {cell}", "fullyQualifiedName": f"{filename}:cell {cell}"}]
    return location


def _sarif_fix(fix, filename: str) -> Dict[str, object]:
    return {
        "description": {"text": fix.title},
        "artifactChanges": [{
            "artifactLocation": _sarif_uri(filename),
            "replacements": [
                {"deletedRegion": _sarif_region(e.span), "insertedContent": {"text": e.content}} for e in fix.edits
            ],
        }],
    }


# GitHub code scanning's limits on one upload (docs.github.com, "SARIF results exceed limit" and
# "SARIF file is too large"): above MAX_RESULTS results in a run the whole upload is rejected;
# only the SHOWN_RESULTS most severe are displayed; a result may have at most MAX_LOCATIONS
# locations (100 shown); the gzipped file may be at most MAX_GZIP_BYTES.
SARIF_MAX_RESULTS = 25_000
SARIF_SHOWN_RESULTS = 5_000
SARIF_MAX_LOCATIONS = 1_000
SARIF_MAX_GZIP_BYTES = 10 * 1024 * 1024
FINGERPRINT_KEY = "gradwarden/codeContext/v1"


def _code_only(line: str) -> str:
    """A source line without its comment (outside strings) and with its whitespace collapsed:
    what the fingerprint reads, so that re-indenting or a `# noqa` does not change it."""
    from gradwarden.noqa import comment_start

    hash_at = comment_start(line)
    return " ".join((line if hash_at is None else line[:hash_at]).split())


def code_context(d: Diagnostic, lines: Optional[Sequence[str]]) -> str:
    """The normalised code around ``d``: the flagged text, its statement's lines, and the
    nearest line of code above and below (never the line numbers)."""
    if not lines or not 1 <= d.span.row <= len(lines):
        return re.sub(r"\b(line|lines|cell) \d+\b", r"\1 #", d.message)  # no source: the message, unnumbered
    first = lines[d.span.row - 1]
    if d.span.end_row == d.span.row:
        flagged = first[max(d.span.column - 1, 0): max(d.span.end_column - 1, 0)]
    else:
        flagged = first[max(d.span.column - 1, 0):]
    end = min(d.span.end_row, d.span.row + 4, len(lines))
    statement = [_code_only(lines[r - 1]) for r in range(d.span.row, end + 1)]

    def neighbour(start: int, step: int) -> str:
        r = start
        while 1 <= r <= len(lines):
            text = _code_only(lines[r - 1])
            if text:
                return text
            r += step
        return ""

    return "\n".join([" ".join(flagged.split()), *statement, neighbour(d.span.row - 1, -1),
                      neighbour(end + 1, 1)])


def sarif_fingerprints(diags: Sequence[Diagnostic], read: Optional[Callable[[str], Optional[str]]] = None
                       ) -> List[str]:
    """One ``partialFingerprints`` value per diagnostic (same order): a hash of the rule, the
    file and the normalised code around the finding, so that an alert keeps its identity when
    lines above it are added or removed; identical code flagged twice in a file is told apart
    by its occurrence (``:1``, ``:2`` in file order, as GitHub's own line hash does)."""
    import hashlib

    texts: Dict[str, Optional[List[str]]] = {}
    bases: List[str] = []
    for d in diags:
        if d.filename not in texts:
            text = read(d.filename) if read is not None else None
            texts[d.filename] = text.splitlines() if text is not None else None
        key = "\0".join((d.code, Path(d.filename).as_posix(), code_context(d, texts[d.filename])))
        bases.append(hashlib.sha256(key.encode("utf-8")).hexdigest()[:32])
    seen: Counter = Counter()
    out: List[str] = []
    order = sorted(range(len(diags)), key=lambda i: (diags[i].filename, diags[i].span.row, diags[i].span.column))
    numbered: Dict[int, str] = {}
    for i in order:
        seen[bases[i]] += 1
        numbered[i] = f"{bases[i]}:{seen[bases[i]]}"
    for i in range(len(diags)):
        out.append(numbered[i])
    return out


_SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFORMATION: 2, Severity.HINT: 3}


def sarif_limits(diags: Sequence[Diagnostic]) -> Tuple[List[Diagnostic], List[str]]:
    """(the diagnostics that fit in one code scanning upload, what to tell the user). Above
    SARIF_MAX_RESULTS GitHub rejects the whole file: the most severe are kept (then in file
    order) and the message says how many were left out and how to narrow the run."""
    messages: List[str] = []
    kept = list(diags)
    if len(kept) > SARIF_MAX_RESULTS:
        ranked = sorted(kept, key=lambda d: (_SEVERITY_ORDER.get(d.severity, 9), d.filename, d.span.row,
                                             d.span.column, d.code))
        kept = sort_diagnostics(ranked[:SARIF_MAX_RESULTS])
        messages.append(
            f"{len(diags)} results exceed GitHub code scanning's limit of {SARIF_MAX_RESULTS:,} per run (an "
            f"upload above it is rejected): the {SARIF_MAX_RESULTS:,} most severe are written, "
            f"{len(diags) - SARIF_MAX_RESULTS} left out; narrow the run with --select/--ignore or paths, "
            "or adopt the existing findings with --add-noqa")
    if len(kept) > SARIF_SHOWN_RESULTS:
        messages.append(
            f"{len(kept)} results: GitHub code scanning shows only the {SARIF_SHOWN_RESULTS:,} most severe of a "
            "run; narrow the run with --select/--ignore or paths, or adopt the existing findings with --add-noqa")
    return kept, messages


def format_sarif(
    diags: Sequence[Diagnostic],
    *,
    rules: Optional[Sequence[Type[Rule]]] = None,
    errors: Sequence[str] = (),
    root: Optional[Path] = None,
    notebooks: Notebooks = None,
    fixes: Optional["FixIndex"] = None,
    read: Optional[Callable[[str], Optional[str]]] = None,
    warnings: Optional[List[str]] = None,
) -> str:
    """SARIF 2.1.0: one run, the whole rule catalog in ``tool.driver.rules``, one result per
    diagnostic (columns counted in Unicode code points, relative paths against %SRCROOT%,
    the working directory). ``errors``: internal errors, reported as tool notifications.
    ``fixes``: the fix ``--fix`` (else ``--unsafe-fixes``) applies becomes the result's
    ``fixes`` entry (not for notebooks, whose edits are counted in cells).
    Each result carries ``partialFingerprints`` (``sarif_fingerprints``; ``read(filename)``
    gives the code they hash). GitHub's limits are kept (``sarif_limits``): what was left out
    is said in a tool notification and appended to ``warnings``."""
    if rules is None:
        from gradwarden.rules import all_rules

        rules = all_rules()
    index = {r.code: i for i, r in enumerate(rules)}
    results = []
    ordered, limit_messages = sarif_limits(sort_diagnostics(diags))
    if warnings is not None:
        warnings.extend(limit_messages)
    prints = sarif_fingerprints(ordered, read)
    for d, fingerprint in zip(ordered, prints):
        result: Dict[str, object] = {
            "ruleId": d.code,
            "level": sarif_level(d.severity),
            "message": {"text": cell_message(d.message, d.filename, notebooks)},
            "locations": [_sarif_location(d.filename, d.span, notebooks)],
            "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
        }
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        if d.related:
            related = []
            for i, r in enumerate(d.related[: SARIF_MAX_LOCATIONS - 1]):
                rname = r.filename or d.filename
                entry = {"id": i, **_sarif_location(rname, r.span, notebooks)}
                entry["message"] = {"text": cell_message(r.message, rname, notebooks)}
                related.append(entry)
            result["relatedLocations"] = related
        choice = fixes.choice(d) if fixes is not None else None
        if choice is not None and choice.fix.edits and not (notebooks and d.filename in notebooks):
            result["fixes"] = [_sarif_fix(choice.fix, d.filename)]
            result["properties"] = {"fixApplicability": "safe" if choice.safe else "unsafe"}
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
                "toolExecutionNotifications": [{"level": "error", "message": {"text": e}} for e in errors]
                + [{"level": "warning", "message": {"text": m}} for m in limit_messages],
            }
        ],
        "results": results,
    }
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if len(text) > SARIF_MAX_GZIP_BYTES and warnings is not None:  # gzip never grows JSON this large
        import gzip

        size = len(gzip.compress(text.encode("utf-8")))
        if size > SARIF_MAX_GZIP_BYTES:
            warnings.append(f"the SARIF file is {size / 2**20:.1f} MB gzipped, above GitHub code scanning's "
                            f"limit of {SARIF_MAX_GZIP_BYTES // 2**20} MB: narrow the run with --select/--ignore "
                            "or paths, or adopt the existing findings with --add-noqa")
    return text


# --------------------------------------------------------------------------- html
def format_html(
    diags: Sequence[Diagnostic],
    *,
    read: Callable[[str], Optional[str]],
    notebooks: Notebooks = None,
    errors: Sequence[str] = (),
    files_checked: Optional[int] = None,
) -> str:
    """One self-contained HTML page with the timeline picture of every finding (a CI
    artifact). ``read(filename)``: the text the diagnostics were computed on (a notebook: its
    program), for the source lines the pictures link to."""
    from gradwarden.picture.reports import check_report

    def locate(filename: str, row: int):
        nb = notebooks.get(filename) if notebooks else None
        return nb.locate(row) if nb is not None else None

    return check_report(diags, read=read, locate=locate if notebooks else None, errors=errors,
                        files_checked=files_checked)


FORMATTERS: Dict[str, Callable[..., str]] = {
    "text": format_text,
    "json": format_json,
    "json-lines": format_json_lines,
    "sarif": format_sarif,
    "github": format_github,
    "html": format_html,
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
