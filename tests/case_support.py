"""Shared fixtures and helpers for the tests that use the labelled cases in ``shared/cases``.

The cases live outside the repository: in CI the repository is a fresh clone at some path X
and the cases are at ``X/../shared/cases``. ``GRADWARDEN_CASES`` overrides the location.
A missing cases directory is a test *failure* with a clear message, never a silent skip.

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


def parse_case(path: Path, root: Path) -> Optional[Case]:
    """A :class:`Case`, or None for a file without an ``expect`` header (score.py skips those)."""
    meta = read_header(path)
    expect_raw = str(meta.get("expect", "") or "")
    if not expect_raw:
        return None
    cause = frozenset(meta.pop("lines"))  # type: ignore[arg-type]
    neutral = frozenset(meta.pop("neutral"))  # type: ignore[arg-type]
    return Case(
        path=path,
        rel=path.relative_to(root).as_posix(),
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


def case_params(predicate=None) -> list:
    """``pytest.param`` per case (id ``real/A01_...``) for ``@pytest.mark.parametrize``.

    When the cases directory is missing this yields a single param ``None`` (id
    ``cases-dir-missing``) so that the test *fails* via :func:`require_case` instead of pytest
    silently skipping an empty parameter set.
    """
    if cases_dir_problem() is not None:
        return [pytest.param(None, id=MISSING_ID)]
    cases = [c for c in load_cases() if predicate is None or predicate(c)]
    if not cases:
        return [pytest.param(None, id="no-matching-cases")]
    return [pytest.param(c, id=c.id) for c in cases]


def require_case(case: Optional[Case]) -> Case:
    if case is None:
        problem = cases_dir_problem() or "no case matched this test's selection"
        pytest.fail(problem, pytrace=False)
    return case


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
