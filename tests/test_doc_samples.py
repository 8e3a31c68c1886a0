"""The command samples of the README and the docs are real runs.

Every fenced ```text / ```console block of the files in DOCS whose lines start with
``$ gradwarden ...`` is run (from the repository root, no colour), and its output must be
what the block shows. A line ``...`` stands for any number of lines (an elided part); durations
(``9.0 s``) and the exit-code comment ``# exit code N`` are compared as written, durations
loosely. To regenerate the blocks from real runs after a change:

    GRADWARDEN_UPDATE_DOC_SAMPLES=1 .venv/bin/python -m pytest tests/test_doc_samples.py

(elisions are kept where they were: the lines before a ``...`` are refreshed, the tail after
the last one too).
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ["README.md", "docs/ci.md", "docs/fixes.md"]
ELLIPSIS = "..."
UPDATE = os.environ.get("GRADWARDEN_UPDATE_DOC_SAMPLES") == "1"
_FENCE = re.compile(r"^```(text|console)\s*$")
_DURATION = re.compile(r"\d+(\.\d+)? s\b")
_EXIT = re.compile(r"^# exit code (\d+)$")


@dataclass
class Sample:
    doc: str
    start: int  # index of the `$ ` line in the file's lines
    end: int  # index after the sample's last line
    command: str
    expected: List[str]

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.start + 1}:{self.command[:60]}"


def samples(doc: str) -> List[Sample]:
    lines = (ROOT / doc).read_text(encoding="utf-8").splitlines()
    out: List[Sample] = []
    i = 0
    while i < len(lines):
        if not _FENCE.match(lines[i]):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j] != "```":
            j += 1
        k = i + 1
        while k < j:
            if lines[k].startswith("$ gradwarden "):
                m = k + 1
                while m < j and not lines[m].startswith("$ "):
                    m += 1
                out.append(Sample(doc, k, m, lines[k][2:], lines[k + 1 : m]))
                k = m
            else:
                k += 1
        i = j + 1
    return out


ALL = [s for doc in DOCS if (ROOT / doc).is_file() for s in samples(doc)]


def run(command: str) -> Tuple[int, List[str]]:
    argv = shlex.split(command)
    assert argv[0] == "gradwarden"
    env = dict(os.environ, NO_COLOR="1", COLUMNS="100", PYTHONUNBUFFERED="1")
    proc = subprocess.run([sys.executable, "-m", "gradwarden", *argv[1:]], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    return proc.returncode, proc.stdout.splitlines()


def _norm(line: str) -> str:
    return _DURATION.sub("N s", line.rstrip())


def matches(expected: List[str], actual: List[str]) -> bool:
    """``...`` lines match any run of lines; the other lines match in order, exactly."""
    parts: List[List[str]] = [[]]
    for line in expected:
        if line.strip() == ELLIPSIS:
            parts.append([])
        else:
            parts[-1].append(_norm(line))
    act = [_norm(a) for a in actual]
    if len(parts) == 1:
        return act == parts[0]
    head, *middle, tail = parts
    if act[: len(head)] != head or (tail and act[len(act) - len(tail):] != tail) or len(act) < len(head) + len(tail):
        return False
    pos, stop = len(head), len(act) - len(tail)
    for part in middle:
        found = next((i for i in range(pos, stop - len(part) + 1) if act[i : i + len(part)] == part), None)
        if found is None:
            return False
        pos = found + len(part)
    return True


def refreshed(expected: List[str], actual: List[str]) -> List[str]:
    """The block rewritten from a real run, keeping its elisions: as many head lines as before
    the first ``...``, as many tail lines as after the last one (middle parts are dropped)."""
    idx = [i for i, line in enumerate(expected) if line.strip() == ELLIPSIS]
    if not idx:
        return actual
    n_head, n_tail = idx[0], len(expected) - idx[-1] - 1
    tail = actual[len(actual) - n_tail:] if n_tail else []
    return actual[:n_head] + [ELLIPSIS] + tail


def _split_exit(expected: List[str]) -> Tuple[List[str], Optional[int]]:
    if expected and _EXIT.match(expected[-1]):
        return expected[:-1], int(_EXIT.match(expected[-1]).group(1))
    return expected, None


@pytest.mark.parametrize("sample", ALL, ids=[s.id for s in ALL])
def test_sample_is_a_real_run(sample: Sample):
    expected, want_rc = _split_exit(sample.expected)
    rc, actual = run(sample.command)
    if UPDATE and not matches(expected, actual):
        _rewrite(sample, refreshed(expected, actual) + ([f"# exit code {rc}"] if want_rc is not None else []))
        return
    assert matches(expected, actual), (
        f"{sample.doc} line {sample.start + 1}: `{sample.command}` printed\n" + "\n".join(actual))
    if want_rc is not None:
        assert rc == want_rc, f"`{sample.command}` exited {rc}, the doc says {want_rc}"


def _rewrite(sample: Sample, new: List[str]) -> None:
    path = ROOT / sample.doc
    lines = path.read_text(encoding="utf-8").splitlines()
    # find the sample again (an earlier rewrite in the same file may have moved it)
    start = lines.index("$ " + sample.command)
    end = start + 1
    while end < len(lines) and not lines[end].startswith("$ ") and lines[end] != "```":
        end += 1
    lines[start + 1 : end] = new
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_there_are_samples():
    docs = {s.doc for s in ALL}
    assert {"README.md", "docs/ci.md"} <= docs, docs
    assert any(s.command.startswith("gradwarden check examples/") for s in ALL)


def test_matching_is_strict():
    assert matches(["a", ELLIPSIS, "c"], ["a", "b", "b", "c"])
    assert not matches(["a", ELLIPSIS, "c"], ["a", "b", "d"])
    assert not matches(["a", "c"], ["a", "b", "c"])
    assert matches(["took 1.0 s"], ["took 12.5 s"])
    assert refreshed(["x", ELLIPSIS, "z"], ["1", "2", "3", "4"]) == ["1", ELLIPSIS, "4"]
