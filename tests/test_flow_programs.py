"""Random programs (tests/flowprog.py) labelled by running them under torch, checked against
the gradient-flow rules: every error class torch raises is flagged in >= 95% of the programs
that raise it, a warning torch emits (``.grad`` of a non-leaf) or a wrong result the program
detects itself (MISMATCH) is flagged too, and no program that runs cleanly is flagged.
"""
from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from typing import Dict, List, Tuple

import pytest

from flowprog import programs
from gradwarden.engine.analyze import analyze_source
from gradwarden.engine.diagnostic import Severity
from gradwarden.rules.messages import classify

pytest.importorskip("torch")

SEED, COUNT = 7, 28 * 12
RECALL = 0.95

_RUNNER = r"""
import io, json, os, sys, warnings
import torch  # once, before forking
torch.set_num_threads(1)  # a forked child must not wait on the parent's thread pool
# warm up once what every child would otherwise initialise lazily (seconds each: optimizers)
_m = torch.nn.Linear(2, 2)
for _opt in (torch.optim.SGD(_m.parameters(), lr=0.1), torch.optim.Adam(_m.parameters(), lr=0.1)):
    _m(torch.randn(3, 2)).sum().backward()
    _opt.step()
    _opt.zero_grad()
torch.autograd.grad(_m(torch.randn(3, 2)).sum(), list(_m.parameters()))
torch.nn.functional.cross_entropy(torch.randn(3, 2), torch.tensor([0, 1, 0]))
srcs = json.loads(sys.stdin.read())
out = []
for code in srcs:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        buf = io.StringIO()
        sys.stdout = buf
        res = {"exc": "", "msg": "", "warn": [], "mismatch": False}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                exec(compile(code, "<program>", "exec"), {"__name__": "__main__"})
            except BaseException as exc:
                res["exc"] = type(exc).__name__
                res["msg"] = (str(exc).splitlines() or [""])[0]
        res["warn"] = [str(x.message).splitlines()[0] for x in caught if str(x.message)]
        res["mismatch"] = "MISMATCH" in buf.getvalue()
        os.write(w, json.dumps(res).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    out.append(json.loads(data) if data else {"exc": "crashed", "msg": "", "warn": [], "mismatch": False})
print(json.dumps(out))
"""


def _label(res: Dict) -> Tuple[str, Tuple[str, ...]]:
    """(class, the codes that predict it): the torch error, else a torch warning we know,
    else the program's own MISMATCH, else "clean" (or "other" for an unrelated failure)."""
    if res["exc"]:
        m = classify(res["msg"], res["exc"])
        return (m.kind, m.codes) if m is not None else ("other", ())
    for w in res["warn"]:
        m = classify(w, "UserWarning")
        if m is not None:
            return m.kind, m.codes
    if res["mismatch"]:
        return "mismatch", ("GW710",)
    return "clean", ()


@pytest.fixture(scope="module")
def labelled() -> List[Tuple[str, str, str, str, Tuple[str, ...]]]:
    progs = programs(SEED, COUNT)
    proc = subprocess.run([sys.executable, "-c", _RUNNER], input=json.dumps([p[2] for p in progs]),
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    out = []
    for (name, construct, src), res in zip(progs, results):
        cls, codes = _label(res)
        out.append((name, construct, src, cls, codes))
    return out


def _loud(src: str) -> List:
    return [d for d in analyze_source(src, "program.py") if d.severity <= Severity.WARNING]


def _found(src: str) -> List:
    """Findings of any severity: a program whose error depends on a size the code does not
    state (a batch read from the environment) is found with information severity."""
    return analyze_source(src, "program.py")


def test_every_error_class_is_flagged(labelled):
    by_class: Dict[str, List[bool]] = defaultdict(list)
    misses = []
    for name, construct, src, cls, codes in labelled:
        if cls in ("clean", "other"):
            continue
        found = {d.code for d in _found(src)}
        hit = bool(found & set(codes))
        by_class[cls].append(hit)
        if not hit:
            misses.append((name, cls, sorted(found)))
    report = {cls: f"{sum(h)}/{len(h)}" for cls, h in sorted(by_class.items())}
    print("\nrecall per class:", report)
    assert len(by_class) >= 8, report  # the generator reaches the classes it is meant to
    low = {cls: r for cls, r in report.items() if sum(by_class[cls]) < RECALL * len(by_class[cls])}
    assert not low, (low, misses[:10])


def test_no_clean_program_is_flagged(labelled):
    clean = [(name, src) for name, _, src, cls, _ in labelled if cls == "clean"]
    assert len(clean) >= COUNT // 4
    flagged = [(name, [(d.row, d.code) for d in _loud(src)]) for name, src in clean if _loud(src)]
    assert not flagged, flagged[:10]
