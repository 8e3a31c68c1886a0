"""``# noqa`` suppression comments, ruff's semantics. Pure functions (the CLI and the language
server both use them).

Line level, on the line where a diagnostic starts (for a diagnostic inside a multi-line string
or a backslash-continued line, the end of that string / continued line works too)::

    y += 1  # noqa                    every code on this line
    y += 1  # noqa: GW201, GW303      only these codes (commas and/or spaces; case-insensitive)
    y += 1  # gradwarden: noqa[: GW201]   the same, spelled for this tool

File level, a comment on a line of its own, anywhere in the file::

    # gradwarden: noqa                every diagnostic of the file
    # gradwarden: noqa: GW4           only these codes (prefixes allowed) in the whole file

A ``# noqa:`` followed by no valid code is not a directive (ruff ignores it too).
"""
from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Set, Tuple, Union

if TYPE_CHECKING:  # pragma: no cover
    from gradwarden.engine.diagnostic import Diagnostic


class _AllCodes:
    """Sentinel: a blanket ``# noqa``."""

    _instance: Optional["_AllCodes"] = None

    def __new__(cls) -> "_AllCodes":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ALL"

    def __reduce__(self) -> str:
        return "ALL"


ALL = _AllCodes()
Codes = Union[FrozenSet[str], _AllCodes]

_CODE = r"[A-Za-z]+[0-9]+"
# `# noqa`, `# noqa: A1, B2`, `#noqa:A1 B2`, `# gradwarden: noqa ...`; `noqa` must end a word.
# Compiled on first use (_pattern): compiling them (case-insensitive classes) costs several
# milliseconds, and a file without the word "noqa" never needs them (build_noqa_map).
_PATTERNS = {
    "_LINE_RE": (r"#\s*(?:gradwarden\s*:\s*)?noqa(?![A-Za-z0-9_])"
                 r"(?P<colon>\s*:\s*(?P<codes>" + _CODE + r"(?:[\s,]+" + _CODE + r")*)?)?", re.IGNORECASE),
    "_FILE_RE": (r"^\s*#\s*gradwarden\s*:\s*noqa(?![A-Za-z0-9_])"
                 r"(?P<colon>\s*:\s*(?P<codes>" + _CODE + r"(?:[\s,]+" + _CODE + r")*)?)?", re.IGNORECASE),
}


def _pattern(name: str) -> "re.Pattern[str]":
    compiled = globals().get(name)
    if compiled is None:
        compiled = globals()[name] = re.compile(*_PATTERNS[name])
    return compiled


def __getattr__(name: str) -> Any:  # `from gradwarden.noqa import _LINE_RE` (lsp/actions.py)
    if name in _PATTERNS:
        return _pattern(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_SPLIT = re.compile(r"[\s,]+")


def _codes_of(match: "re.Match[str]") -> Optional[Codes]:
    if match.group("colon") is None:
        return ALL
    codes = match.group("codes")
    if not codes:  # `# noqa:` with nothing usable after it: not a directive
        return None
    return frozenset(c.upper() for c in _SPLIT.split(codes.strip()) if c)


def noqa_codes_on_line(line: str) -> Optional[Codes]:
    """The codes a ``# noqa`` comment on ``line`` suppresses: ALL, a frozenset, or None.

    ``line`` may be a whole source line or just its comment. Several directives on one line
    combine (``# noqa: GW201  # noqa: GW303``)."""
    result: Optional[Codes] = None
    for match in _pattern("_LINE_RE").finditer(line):
        codes = _codes_of(match)
        if codes is None:
            continue
        if codes is ALL:
            return ALL
        result = codes if result is None else frozenset(result | codes)  # type: ignore[operator]
    return result


def file_noqa_codes(comment: str) -> Optional[Codes]:
    """The codes a file-level ``# gradwarden: noqa`` comment exempts (``comment`` must be the
    whole content of a comment-only line)."""
    match = _pattern("_FILE_RE").match(comment)
    if match is None:
        return None
    return _codes_of(match)


def _covers(codes: Optional[Codes], code: str) -> bool:
    if codes is None:
        return False
    if codes is ALL:
        return True
    code = code.upper()
    return any(code.startswith(c) for c in codes)  # type: ignore[union-attr]


@dataclass
class NoqaMap:
    """The suppressions of one file, computed once (the language server may cache it)."""

    lines: Dict[int, Codes] = field(default_factory=dict)  # 1-based row -> codes
    file_codes: Optional[Codes] = None
    # Row of a diagnostic -> the other row whose noqa also counts (end of a multi-line string
    # or of a backslash continuation).
    redirects: Dict[int, int] = field(default_factory=dict)

    def suppresses(self, code: str, row: int) -> bool:
        if _covers(self.file_codes, code):
            return True
        if _covers(self.lines.get(row), code):
            return True
        other = self.redirects.get(row)
        return other is not None and _covers(self.lines.get(other), code)


def comment_start(line: str) -> Optional[int]:
    """Index of the ``#`` that starts the line's comment (outside string literals), or None."""
    quote: Optional[str] = None
    i = 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if line.startswith(quote, i):
                i += len(quote)
                quote = None
                continue
        else:
            if ch == "#":
                return i
            if ch in "\"'":
                quote = line[i:i + 3] if line[i:i + 3] in ('"""', "'''") else ch
                i += len(quote)
                continue
        i += 1
    return None


def build_noqa_map(source: str) -> NoqaMap:
    """Scan ``source`` for noqa comments. Uses the tokenizer so that ``"# noqa"`` inside a
    string is not a directive; falls back to a line scan when the file does not tokenize."""
    result = NoqaMap()
    if "noqa" not in source.lower():
        return result
    # Rows as the tokenizer counts them (str.splitlines would also split at \f, \x1c, ...).
    lines = [ln.rstrip("\r\n") for ln in io.StringIO(source).readlines()]
    file_codes: Set[str] = set()
    blanket = False
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError, ValueError):
        tokens = None
    if tokens is None:
        comments = [(i + 1, ln[ln.index("#"):], ln.lstrip().startswith("#")) for i, ln in enumerate(lines) if "#" in ln]
    else:
        comments = []
        for tok in tokens:
            if tok.type == tokenize.COMMENT:
                row, col = tok.start
                own_line = lines[row - 1][:col].strip() == "" if row - 1 < len(lines) else True
                comments.append((row, tok.string, own_line))
        _record_redirects(tokens, lines, result.redirects)
    for row, comment, own_line in comments:
        if own_line:
            fcodes = file_noqa_codes(comment)
            if fcodes is ALL:
                blanket = True
                continue
            if fcodes:
                file_codes |= set(fcodes)  # type: ignore[arg-type]
                continue
        codes = noqa_codes_on_line(comment)
        if codes is not None:
            prev = result.lines.get(row)
            if prev is ALL or codes is ALL:
                result.lines[row] = ALL
            else:
                result.lines[row] = frozenset((prev or frozenset()) | codes)  # type: ignore[operator]
    if blanket:
        result.file_codes = ALL
    elif file_codes:
        result.file_codes = frozenset(file_codes)
    return result


def _record_redirects(tokens: List[tokenize.TokenInfo], lines: List[str], redirects: Dict[int, int]) -> None:
    # Multi-line strings: every row of the string may be suppressed at its last row.
    fstring_starts: List[int] = []
    for tok in tokens:
        name = tokenize.tok_name.get(tok.type, "")
        if name in ("FSTRING_START", "TSTRING_START"):
            fstring_starts.append(tok.start[0])
            continue
        if name in ("FSTRING_END", "TSTRING_END") and fstring_starts:
            start = fstring_starts.pop()
            end = tok.end[0]
        elif tok.type == tokenize.STRING:
            start, end = tok.start[0], tok.end[0]
        else:
            continue
        for row in range(start, end):
            redirects.setdefault(row, end)
    # Backslash continuations: a row ending in `\` (outside strings and comments) continues
    # on the next.
    string_rows = set(redirects)
    comment_rows = {t.start[0] for t in tokens if t.type == tokenize.COMMENT}
    row = len(lines)
    target = None
    while row >= 1:
        text = lines[row - 1]
        if (text.endswith("\\") and row not in string_rows and row not in comment_rows
                and target is not None):
            redirects.setdefault(row, target)
        else:
            target = row
        row -= 1
    # Chains (a string inside a continued line) resolve to the final row.
    for key in list(redirects):
        seen = {key}
        dest = redirects[key]
        while dest in redirects and dest not in seen:
            seen.add(dest)
            dest = redirects[dest]
        redirects[key] = dest


def filter_noqa(diags: Iterable[Diagnostic], source_text: Optional[str]) -> List[Diagnostic]:
    """Drop the diagnostics that a noqa comment of ``source_text`` suppresses."""
    diags = list(diags)
    if not diags or not source_text:
        return diags
    noqa = build_noqa_map(source_text)
    if not noqa.lines and noqa.file_codes is None:
        return diags
    return [d for d in diags if not noqa.suppresses(d.code, d.span.row)]

def filter_noqa_by_file(diags: Iterable[Diagnostic], filename: str, source_text: Optional[str],
                        read: Optional[Callable[[str], Optional[str]]] = None) -> List[Diagnostic]:
    """``filter_noqa`` for the findings of one analysis, each against the ``# noqa`` comments of
    the file it is in: the analysed file's (``source_text``), or another module of the project
    where the analysis found a hazard by following an import (read from disk, or by ``read``)."""
    diags = list(diags)
    own = [d for d in diags if d.filename == filename]
    if len(own) == len(diags):
        return filter_noqa(diags, source_text)
    kept = set(map(id, filter_noqa(own, source_text)))
    by_file: Dict[str, List[Diagnostic]] = {}
    for d in diags:
        if d.filename != filename:
            by_file.setdefault(d.filename, []).append(d)
    for other, found in by_file.items():
        text = read(other) if read is not None else read_source_file(other)
        kept.update(map(id, filter_noqa(found, text)))
    return [d for d in diags if id(d) in kept]


def read_source_file(path: str) -> Optional[str]:
    from gradwarden.engine.front.source import decode_source

    try:
        with open(path, "rb") as fh:
            return decode_source(fh.read())[0]
    except OSError:
        return None


# --------------------------------------------------------------------------- adding (--add-noqa)
@dataclass
class NoqaAddition:
    """What :func:`add_noqa_comments` did to a source."""

    text: str  # the new source (the old one when nothing changed)
    lines_changed: int = 0  # lines that got a new or extended directive
    codes_added: int = 0
    skipped: List[Tuple[int, str, str]] = field(default_factory=list)  # (row, code, why)


_NEWLINE = re.compile(r"(\r\n|\r|\n)$")


def noqa_target_rows(source: str) -> Optional[Dict[int, int]]:
    """Row -> the row whose ``# noqa`` covers it, where that is another row (the end of a
    multi-line string or of a backslash continuation: the rows :class:`NoqaMap` redirects).
    None when the source does not tokenize."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError, ValueError):
        return None
    lines = [ln.rstrip("\r\n") for ln in io.StringIO(source).readlines()]
    redirects: Dict[int, int] = {}
    _record_redirects(tokens, lines, redirects)
    return redirects


def _comments_by_row(source: str) -> Dict[int, Tuple[int, str]]:
    """Row -> (column, text) of the comment token on it."""
    out: Dict[int, Tuple[int, str]] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            out[tok.start[0]] = (tok.start[1], tok.string)
    return out


def add_noqa_comments(source: str, codes_by_row: Mapping[int, Iterable[str]]) -> NoqaAddition:
    """``source`` with a ``# noqa: CODE`` for each (row, code) of ``codes_by_row``, placed
    where :func:`build_noqa_map` reads it back: on the row itself, or on the last row of the
    multi-line string or backslash continuation the row belongs to. An existing directive
    keeps its codes and spelling and gets the new codes appended (``# noqa: GW101, GW201``);
    a bare ``# noqa`` already covers everything; another comment on the line is kept and the
    directive follows it. Line endings and the rest of the text are untouched."""
    result = NoqaAddition(source)
    wanted = {row: sorted({c.upper() for c in codes}) for row, codes in codes_by_row.items() if codes}
    if not wanted:
        return result
    redirects = noqa_target_rows(source)
    if redirects is None:
        result.skipped = [(row, code, "the file does not tokenize") for row, codes in sorted(wanted.items())
                          for code in codes]
        return result
    lines = io.StringIO(source).readlines()
    comments = _comments_by_row(source)
    by_target: Dict[int, List[str]] = {}
    for row, codes in sorted(wanted.items()):
        target = redirects.get(row, row)
        if not 1 <= target <= len(lines):
            result.skipped += [(row, code, "no such line") for code in codes]
            continue
        by_target.setdefault(target, [])
        for code in codes:
            if code not in by_target[target]:
                by_target[target].append(code)
    for target, codes in sorted(by_target.items()):
        line = lines[target - 1]
        m = _NEWLINE.search(line)
        ending = m.group(1) if m else ""
        body = line[: len(line) - len(ending)]
        comment = comments.get(target)
        existing: Optional[Codes] = None
        directive: Optional["re.Match[str]"] = None
        if comment is not None:
            col, text = comment
            for match in _pattern("_LINE_RE").finditer(body, col):
                found = _codes_of(match)
                if found is ALL:
                    existing, directive = ALL, None
                    break
                if found:
                    existing = found if existing is None else frozenset(existing | found)  # type: ignore[operator]
                    directive = match if directive is None else directive
        if existing is ALL:
            continue
        new = [c for c in codes if not (existing and _covers(existing, c))]
        if not new:
            continue
        if directive is not None:
            end = directive.end("codes")
            body = body[:end] + ", " + ", ".join(new) + body[end:]
        else:
            body = body.rstrip() + "  # noqa: " + ", ".join(new)
        lines[target - 1] = body + ending
        result.lines_changed += 1
        result.codes_added += len(new)
    result.text = "".join(lines)
    return result


__all__ = ["ALL", "NoqaAddition", "NoqaMap", "add_noqa_comments", "build_noqa_map", "file_noqa_codes",
           "filter_noqa", "noqa_codes_on_line", "noqa_target_rows"]
