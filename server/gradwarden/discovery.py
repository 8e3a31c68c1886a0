"""Finding the files to check: globs, a small .gitignore matcher, and the directory walk.

Conventions follow ruff: folders are searched recursively for ``*.py`` (and ``*.ipynb`` when
asked: the CLI does); the default exclusions
(``.git``, ``.venv``, ``build``, ...) and the ``exclude``/``extend-exclude`` globs apply to what
the walk finds, never to a path named on the command line (a named file is always checked);
``.gitignore`` files are respected unless ``respect-gitignore = false``.

This module depends on nothing else in gradwarden, so config.py (and the language server)
can use its glob matcher.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, List, Optional, Pattern, Sequence, Tuple

DEFAULT_EXCLUDE: Tuple[str, ...] = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".hg",
    ".mypy_cache",
    ".nox",
    ".pytest_cache",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    "__pycache__",
    "__pypackages__",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)

PYTHON_SUFFIXES: Tuple[str, ...] = (".py",)
NOTEBOOK_SUFFIXES: Tuple[str, ...] = (".ipynb",)  # walked into when include_notebooks (the CLI)


# --------------------------------------------------------------------------- globs
def translate_glob(pattern: str) -> str:
    """Translate a gitignore-style glob into a regular expression (no anchors).

    ``*`` and ``?`` never match ``/``; ``[...]`` is a character class (``[!...]``/``[^...]``
    negate it); ``\\x`` is a literal ``x``; ``**`` as a whole path segment matches any number of
    segments: a leading ``**/`` matches in every directory, a trailing ``/**`` everything
    inside, ``a/**/b`` zero or more directories between. Other runs of stars act like ``*``.
    """
    out: List[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            if j - i >= 2:
                at_start = i == 0 or pattern[i - 1] == "/"
                at_end = j == n or pattern[j] == "/"
                if at_start and at_end:
                    if j == n:
                        out.append(".*")
                    else:
                        out.append("(?:.*/)?")
                        j += 1  # the slash belongs to the `**/` token
                    i = j
                    continue
            out.append("[^/]*")
            i = j
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:  # unclosed: a literal bracket
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                chars = "".join("\\" + ch if ch in "\\^[]" else ch for ch in body)
                out.append("[^/" + chars + "]" if negate else "[" + chars + "]")
                i = j
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 1
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def compile_glob(pattern: str) -> Pattern[str]:
    return re.compile(translate_glob(pattern), re.DOTALL)


@dataclass(frozen=True)
class PathGlob:
    """An ``exclude``-style glob (ruff semantics), anchored at ``base``.

    A pattern without ``/`` matches the name of a file or folder anywhere (``build``,
    ``*_pb2.py``); a pattern with ``/`` matches the path relative to ``base`` (the folder of the
    config file that named it, or the working directory for command-line patterns).
    """

    pattern: str
    base: Path
    # Compiled on first use (``regex``): a check of named files never walks a folder, so it
    # never matches the default exclusions.
    _regex: Optional[Pattern[str]] = field(compare=False, repr=False, default=None)

    @classmethod
    def make(cls, pattern: str, base: Path) -> "PathGlob":
        return cls(pattern, Path(os.path.abspath(base)))

    @property
    def regex(self) -> Pattern[str]:
        if self._regex is None:
            pat = self.pattern.strip()
            if pat.startswith("./"):
                pat = pat[2:]
            pat = pat.rstrip("/") or pat
            object.__setattr__(self, "_regex", compile_glob(pat.lstrip("/") if "/" in pat else pat))
        return self._regex  # type: ignore[return-value]

    @property
    def is_name_pattern(self) -> bool:
        p = self.pattern.strip()
        if p.startswith("./"):
            return False
        return "/" not in p.rstrip("/")

    def matches(self, path: Path) -> bool:
        """``path`` absolute (or relative to the working directory)."""
        if self.is_name_pattern:
            return self.regex.fullmatch(path.name) is not None
        rel = _relative_posix(Path(os.path.abspath(path)), self.base)
        return rel is not None and self.regex.fullmatch(rel) is not None


def _relative_posix(path: Path, base: Path) -> Optional[str]:
    try:
        rel = path.relative_to(base)
    except ValueError:
        return None
    return rel.as_posix()


# --------------------------------------------------------------------------- .gitignore
@dataclass(frozen=True)
class IgnoreRule:
    pattern: str  # the line as written
    regex: Pattern[str]
    negate: bool
    dir_only: bool
    anchored: bool  # matched against the path relative to the .gitignore's folder


def parse_gitignore_line(line: str) -> Optional[IgnoreRule]:
    raw = line.rstrip("\n").rstrip("\r")
    if not raw or raw.startswith("#"):
        return None
    text = raw
    # Trailing spaces are dropped unless escaped with a backslash.
    while text.endswith(" ") and not text.endswith("\\ "):
        text = text[:-1]
    if not text:
        return None
    negate = False
    if text.startswith("!"):
        negate = True
        text = text[1:]
    dir_only = False
    if text.endswith("/") and not text.endswith("\\/"):
        dir_only = True
        text = text.rstrip("/")
    if not text:
        return None
    anchored = "/" in text
    if text.startswith("/"):
        text = text[1:]
    return IgnoreRule(raw, compile_glob(text), negate, dir_only, anchored)


class GitIgnore:
    """The rules of one .gitignore file (or .git/info/exclude), relative to ``base``."""

    def __init__(self, base: Path, rules: Sequence[IgnoreRule]) -> None:
        self.base = Path(os.path.abspath(base))
        self.rules = tuple(rules)

    @classmethod
    def from_text(cls, base: Path, text: str) -> "GitIgnore":
        rules = [r for r in (parse_gitignore_line(ln) for ln in text.splitlines()) if r]
        return cls(base, rules)

    @classmethod
    def from_file(cls, path: Path, base: Optional[Path] = None) -> Optional["GitIgnore"]:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        ignore = cls.from_text(base if base is not None else path.parent, text)
        return ignore if ignore.rules else None

    def match(self, path: Path, is_dir: bool) -> Optional[bool]:
        """True: ignored; False: re-included by a ``!`` rule; None: no rule matches."""
        rel = _relative_posix(Path(os.path.abspath(path)), self.base)
        if rel is None or rel in ("", "."):
            return None
        name = rel.rsplit("/", 1)[-1]
        for rule in reversed(self.rules):  # the last matching rule wins
            if rule.dir_only and not is_dir:
                continue
            subject = rel if rule.anchored else name
            if rule.regex.fullmatch(subject):
                return not rule.negate
        return None


class IgnoreStack:
    """The .gitignore files in force for one folder, outermost first."""

    def __init__(self, ignores: Sequence[GitIgnore] = ()) -> None:
        self.ignores = tuple(ignores)

    def push(self, ignore: Optional[GitIgnore]) -> "IgnoreStack":
        return IgnoreStack(self.ignores + (ignore,)) if ignore else self

    def is_ignored(self, path: Path, is_dir: bool) -> bool:
        for ignore in reversed(self.ignores):  # deeper files take precedence
            verdict = ignore.match(path, is_dir)
            if verdict is not None:
                return verdict
        return False


def find_git_root(start: Path) -> Optional[Path]:
    for folder in [start, *start.parents]:
        if (folder / ".git").exists():
            return folder
    return None


def ignores_above(folder: Path) -> IgnoreStack:
    """The .gitignore files that apply to ``folder``'s content from its ancestors, up to the
    repository root (and the repository's .git/info/exclude). Outside a git repository only the
    folder's own .gitignore files count (as git itself does)."""
    folder = Path(os.path.abspath(folder))
    root = find_git_root(folder)
    if root is None:
        return IgnoreStack()
    stack = IgnoreStack().push(GitIgnore.from_file(root / ".git" / "info" / "exclude", base=root))
    chain = [folder, *folder.parents]
    above = chain[1 : chain.index(root) + 1] if root != folder else []
    for parent in reversed(above):
        stack = stack.push(GitIgnore.from_file(parent / ".gitignore"))
    return stack


# --------------------------------------------------------------------------- the walk
@dataclass
class Discovered:
    files: List[Path] = field(default_factory=list)  # in a deterministic (sorted) order
    missing: List[str] = field(default_factory=list)  # named paths that do not exist


def is_python_file(path: Path) -> bool:
    return path.suffix in PYTHON_SUFFIXES


def discover(
    paths: Iterable[Path],
    *,
    exclude: Sequence[PathGlob] = (),
    respect_gitignore: bool = True,
    include_notebooks: bool = False,
) -> Discovered:
    """Expand ``paths`` into the files to check.

    Named files are kept whatever their name or the exclusions; named folders are walked
    (their own name is not tested against the exclusions either). Symlinked folders are not
    followed; duplicates are dropped. The result is sorted. ``include_notebooks``: the walk
    also finds ``*.ipynb`` (``extend-exclude = ["*.ipynb"]`` turns that off again).
    """
    suffixes = PYTHON_SUFFIXES + (NOTEBOOK_SUFFIXES if include_notebooks else ())
    out = Discovered()
    seen = set()
    found: List[Path] = []

    def add(path: Path) -> None:
        key = os.path.normcase(os.path.abspath(path))
        if key not in seen:
            seen.add(key)
            found.append(path)

    def excluded(path: Path) -> bool:
        return any(g.matches(path) for g in exclude)

    def walk(folder: Path, stack: IgnoreStack) -> None:
        if respect_gitignore:
            stack = stack.push(GitIgnore.from_file(folder / ".gitignore"))
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            path = folder / entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = not is_dir and entry.is_file()
            except OSError:
                continue
            if not (is_dir or is_file):
                continue
            if excluded(path):
                continue
            if respect_gitignore and stack.is_ignored(path, is_dir):
                continue
            if is_dir:
                walk(path, stack)
            elif path.suffix in suffixes:
                add(path)

    for path in paths:
        if path.is_dir():
            start = ignores_above(path) if respect_gitignore else IgnoreStack()
            walk(path, start)
        elif path.exists():
            add(path)
        else:
            out.missing.append(str(path))
    out.files = sorted(found, key=lambda p: display_path(p))
    return out


def display_path(path: Path, cwd: Optional[Path] = None) -> str:
    """How a path is shown (and passed to the engine as the filename): relative to the working
    directory when inside it, else absolute (ruff's rule)."""
    absolute = Path(os.path.abspath(path))
    base = Path(os.path.abspath(cwd if cwd is not None else os.getcwd()))
    try:
        return str(absolute.relative_to(base))
    except ValueError:
        return str(absolute)
