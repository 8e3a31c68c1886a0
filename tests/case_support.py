"""Shared fixtures and helpers for the tests that use the labelled cases in ``shared/cases``.

The cases live outside the repository: in CI the repository is a fresh clone at some path X
and the cases are at ``X/../shared/cases``. ``GRADWARDEN_CASES`` overrides the location.
A missing cases directory is a test *failure* with a clear message, never a silent skip.
The revealed batches (``X/../shared/revealed/*/``, override ``GRADWARDEN_REVEALED``) are
labelled the same way; their cases have ids ``revealed/<batch>/<file>``.

The header of a case is parsed exactly as ``shared/tools/score.py`` parses it (its first 15
lines, ``# key: value`` comments); ``test_case_labels.py`` checks that both parsers agree.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, FrozenSet, List, Optional

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
CASES_ENV = "GRADWARDEN_CASES"
REVEALED_ENV = "GRADWARDEN_REVEALED"
HAZARD_EXPECTS = ("error", "silent")
KNOWN_EXPECTS = ("error", "silent", "ok")

_HEADER = re.compile(r"^#\s*(\w+)\s*:\s*(.*)$")  # same pattern as score.py


def default_cases_dir() -> Path:
    return REPO_ROOT.parent / "shared" / "cases"


def cases_dir_path() -> Path:
    """Where the cases should be (not checked)."""
    override = os.environ.get(CASES_ENV)
    return Path(override).expanduser().resolve() if override else default_cases_dir()


def cases_dir_problem() -> Optional[str]:
    """None when the cases directory is usable, else a message saying what is wrong."""
    path = cases_dir_path()
    how = f"${CASES_ENV}" if os.environ.get(CASES_ENV) else f"<repo>/../shared/cases (set ${CASES_ENV} to override)"
    if not path.is_dir():
        return f"labelled cases directory not found: {path} (looked at {how})"
    if not any(path.rglob("*.py")):
        return f"labelled cases directory has no .py files: {path} (looked at {how})"
    return None


def revealed_dir_path() -> Path:
    """Where the revealed batches should be (not checked): one folder per batch."""
    override = os.environ.get(REVEALED_ENV)
    return Path(override).expanduser().resolve() if override else REPO_ROOT.parent / "shared" / "revealed"


def revealed_dir_problem() -> Optional[str]:
    path = revealed_dir_path()
    how = f"${REVEALED_ENV}" if os.environ.get(REVEALED_ENV) else (
        f"<repo>/../shared/revealed (set ${REVEALED_ENV} to override)")
    if not path.is_dir():
        return f"revealed cases directory not found: {path} (looked at {how})"
    if not any(path.glob("*/*.py")):
        return f"revealed cases directory has no batch folder with .py files: {path} (looked at {how})"
    return None


def load_revealed(root: Optional[Path] = None) -> List["Case"]:
    """Every case of every revealed batch (``<root>/<batch>/*.py``), ids ``revealed/<batch>/...``."""
    root = root or revealed_dir_path()
    if not root.is_dir():
        return []
    out = []
    for p in sorted(root.glob("*/*.py")):
        case = parse_case(p, root, prefix="revealed/")
        if case is not None:
            out.append(case)
    return out


def scorer_path() -> Path:
    """``shared/tools/score.py``: the cases directory's parent's ``tools/score.py``."""
    return cases_dir_path().parent / "tools" / "score.py"


@dataclass(frozen=True)
class Case:
    path: Path
    rel: str  # e.g. "real/A01_manual_sgd_word_lm.py"
    meta: Dict[str, str] = field(hash=False, compare=False)
    expect: str = ""  # first word of `# expect:` (error | silent | ok)
    family: str = ""  # first letter of `# family:` (A..G), "?" when absent
    cause_lines: FrozenSet[int] = frozenset()  # the numbers before "(" in `# line:`
    neutral_lines: FrozenSet[int] = frozenset()  # the numbers after "(": the backward line

    @property
    def is_hazard(self) -> bool:
        return self.expect in HAZARD_EXPECTS

    @property
    def id(self) -> str:
        return self.rel[:-3] if self.rel.endswith(".py") else self.rel

    def __str__(self) -> str:  # used in assertion messages
        return self.rel


def read_header(path: Path) -> Dict[str, object]:
    """Parse a case header the way score.py's ``read_header`` does.

    Returns the raw ``key -> value`` pairs (keys lower-cased) plus ``lines`` (cause lines) and
    ``neutral`` (the backward line(s)) as sets of ints.
    """
    meta: Dict[str, object] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines()[:15]:
        m = _HEADER.match(line.strip())
        if m:
            meta[m.group(1).lower()] = m.group(2).strip()
    spec = str(meta.get("line", ""))
    cause, _, rest = spec.partition("(")
    meta["lines"] = {int(x) for x in re.findall(r"\d+", cause)}
    meta["neutral"] = {int(x) for x in re.findall(r"\d+", rest)}
    return meta


def parse_case(path: Path, root: Path, prefix: str = "") -> Optional[Case]:
    """A :class:`Case`, or None for a file without an ``expect`` header (score.py skips those).
    Its ``rel`` is ``prefix`` + the path relative to ``root``."""
    meta = read_header(path)
    expect_raw = str(meta.get("expect", "") or "")
    if not expect_raw:
        return None
    cause = frozenset(meta.pop("lines"))  # type: ignore[arg-type]
    neutral = frozenset(meta.pop("neutral"))  # type: ignore[arg-type]
    return Case(
        path=path,
        rel=prefix + path.relative_to(root).as_posix(),
        meta={k: str(v) for k, v in meta.items()},
        expect=expect_raw.split()[0].lower(),
        family=(str(meta.get("family", "?")) or "?")[:1],
        cause_lines=cause,
        neutral_lines=neutral,
    )


def load_cases(root: Optional[Path] = None) -> List[Case]:
    """Every case under the cases directory, in score.py's order (sorted paths)."""
    root = root or cases_dir_path()
    if not root.is_dir():
        return []
    out = []
    for p in sorted(root.rglob("*.py")):
        case = parse_case(p, root)
        if case is not None:
            out.append(case)
    return out


MISSING_ID = "cases-dir-missing"


REVEALED_MISSING_ID = "revealed-dir-missing"


def case_params(predicate=None, revealed: bool = False) -> list:
    """``pytest.param`` per case (id ``real/A01_...``) for ``@pytest.mark.parametrize``;
    ``revealed=True`` appends the revealed batches' cases (ids ``revealed/<batch>/...``).

    When the cases directory is missing this yields a single param ``None`` (id
    ``cases-dir-missing``) so that the test *fails* via :func:`require_case` instead of pytest
    silently skipping an empty parameter set; likewise ``revealed-dir-missing``.
    """
    params = []
    if cases_dir_problem() is not None:
        params.append(pytest.param(None, id=MISSING_ID))
    else:
        params += [pytest.param(c, id=c.id) for c in load_cases() if predicate is None or predicate(c)]
    if revealed:
        if revealed_dir_problem() is not None:
            params.append(pytest.param(None, id=REVEALED_MISSING_ID))
        else:
            params += [pytest.param(c, id=c.id) for c in load_revealed() if predicate is None or predicate(c)]
    if not params:
        return [pytest.param(None, id="no-matching-cases")]
    return params


def require_case(case: Optional[Case]) -> Case:
    if case is None:
        problem = cases_dir_problem() or revealed_dir_problem() or "no case matched this test's selection"
        pytest.fail(problem, pytrace=False)
    return case


# --- what a label means when the program runs (torch_runner.Outcome) -----------------------

WANT = {
    "error": "a non-zero exit with a RuntimeError in stderr",
    "silent": "exit 0 with MISMATCH printed",
    "ok": "exit 0 without MISMATCH",
}


def label_holds(expect: str, outcome) -> bool:
    """error = non-zero exit with ``RuntimeError`` in stderr; silent = exit 0 with ``MISMATCH``
    in stdout; ok = exit 0 without ``MISMATCH`` in stdout or stderr. A time-out holds nothing."""
    s = outcome.summary
    if s.get("rc") is None:
        return False
    if expect == "error":
        return s["rc"] != 0 and bool(s.get("runtime_error"))
    if expect == "silent":
        return s["rc"] == 0 and bool(s.get("mismatch"))
    return s["rc"] == 0 and not s.get("mismatch") and not s.get("mismatch_err")


@pytest.fixture(scope="session")
def cases_dir() -> Path:
    """The labelled cases directory; fails (does not skip) when it is missing."""
    problem = cases_dir_problem()
    if problem:
        pytest.fail(problem, pytrace=False)
    return cases_dir_path()


@pytest.fixture(scope="session")
def all_cases(cases_dir: Path) -> List[Case]:
    cases = load_cases(cases_dir)
    if not cases:
        pytest.fail(f"no case with an `# expect:` header under {cases_dir}", pytrace=False)
    return cases
