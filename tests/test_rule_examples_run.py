"""The rules' VALID/INVALID examples are documentation and tests: here they are run under torch.

- every VALID example runs without an exception (a clean snippet that crashes for another
  reason would teach the wrong lesson);
- every INVALID example of an error-severity rule raises a RuntimeError from torch (error =
  "will raise"); warning/information examples are silent hazards and run to the end.

One process imports torch once and forks a child per example (exec of the snippet).
"""
from __future__ import annotations

import inspect
import json
import subprocess
import sys
from typing import Dict, List, Tuple

import pytest

from gradwarden.engine.diagnostic import Severity
from gradwarden.rules.catalog import RULES

pytest.importorskip("torch")

_RUNNER = r"""
import json, os, sys, io
import torch  # once, before forking
snippets = json.loads(sys.stdin.read())
out = []
for code in snippets:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        sys.stdout = io.StringIO()
        try:
            exec(compile(code, "<example>", "exec"), {"__name__": "__main__"})
            res = ["ok", ""]
        except BaseException as exc:
            res = [type(exc).__name__, str(exc).splitlines()[0] if str(exc) else ""]
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
    out.append(json.loads(data) if data else ["crashed", ""])
print(json.dumps(out))
"""


def _examples() -> List[Tuple[str, str, int, Severity, str]]:
    found = []
    for rule in RULES:
        for kind in ("INVALID", "VALID"):
            for i, snippet in enumerate(getattr(rule, kind, ())):
                found.append((rule.code, kind, i, rule.severity, inspect.cleandoc(snippet) + "\n"))
    return found


@pytest.fixture(scope="module")
def outcomes() -> Dict[Tuple[str, str, int], Tuple[str, str]]:
    examples = _examples()
    proc = subprocess.run([sys.executable, "-c", _RUNNER], input=json.dumps([e[4] for e in examples]),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    return {(c, k, i): tuple(r) for (c, k, i, _, _), r in zip(examples, results)}


@pytest.mark.parametrize("code,kind,index,severity", [e[:4] for e in _examples()],
                         ids=[f"{e[0]}-{e[1]}-{e[2]}" for e in _examples()])
def test_example_behaves_as_documented(outcomes, code, kind, index, severity):
    outcome, message = outcomes[(code, kind, index)]
    if kind == "VALID" or severity is not Severity.ERROR:
        assert outcome == "ok", f"{code} {kind}[{index}] raised {outcome}: {message}"
    else:
        assert outcome == "RuntimeError", f"{code} INVALID[{index}] should raise under torch; got {outcome} {message}"
