"""Single-file programs whose expected findings are marked in their text: a line ending in ``# <-``
is where a finding must be reported; the tests of the silent-gradient kinds
(test_silent_batch7_kinds.py ... test_silent_batch11_kinds.py) compare those lines with what the
engine reports at error or warning severity, and run the same programs under torch."""
import subprocess
import sys
import textwrap
from typing import List, Tuple

from gradwarden.engine.analyze import analyze_source
from gradwarden.engine.diagnostic import Severity


def findings(src: str) -> List[Tuple[int, str, Severity]]:
    """(row, code, severity) of every error or warning the engine reports on ``src``."""
    return [(d.row, d.code, d.severity) for d in analyze_source(textwrap.dedent(src), "case.py")
            if d.severity <= Severity.WARNING]


def marked(src: str) -> List[int]:
    """The rows of ``src`` marked ``# <-``."""
    return [n for n, line in enumerate(textwrap.dedent(src).splitlines(), 1) if line.rstrip().endswith("# <-")]


def codes(src: str) -> List[Tuple[int, str]]:
    """(row, code) of every error or warning the engine reports on ``src``."""
    return [(row, code) for row, code, _ in findings(src)]


def unmark(src: str) -> str:
    """``src`` without its ``# <-`` marks."""
    return src.replace("  # <-", "")


def run_under_torch(src: str, probe: str = "") -> subprocess.CompletedProcess:
    """Run ``src`` (plus a probe that prints what it measured) under torch, in a fresh interpreter."""
    code = textwrap.dedent(src) + textwrap.dedent(probe)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
