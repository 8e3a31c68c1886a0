"""Bounded cost on any input: nested loops and branches, and one very large file.

One command (from the repository root):

    .venv/bin/python benchmarks/bench_bounded.py            # --depths 6,8,12,20,40 --mb 5

For each input it runs, in a fresh subprocess each (so that peak memory is that input's):

- ``ast.parse`` of the source alone (the baseline), and
- ``analyze_source`` (the whole static analysis, parse included; the package is imported
  before the clock starts),

and prints CPU seconds, peak resident memory (``ru_maxrss`` of the child), the ratio to the
baseline, the engine's work counters (statement visits, most paths held, joins; summed over
the interpreters of a file analysed in parts), the findings, how many GW002 notes there were
(an analysis stopped early, or the file analysed in parts) and, for a file analysed in parts
(over 1 M characters: engine/incremental/parts.py), in how many. Targets (issue 13): each nest in
<= 3 s, the 5 MB file in <= 20 s and <= 400 MB.

For a before/after comparison, run the same command in a checkout of the other revision in
the same session (each child imports the engine of the checkout the script is in).

Inputs (both generated here, deterministic; ``tests/test_bounded_cost.py`` uses the same):

- ``nest_source(depth)``: a training function whose body nests ``for``/``if``/``while`` levels
  ``depth`` deep, each level with a forward and a data-dependent ``if`` (the shape of the
  issue's 44-line, six-level function), called from the module's code (so it is analysed in
  context, with up to six paths per block);
- ``big_source(n_bytes)``: blocks of a module class, a training function (two nested loops, a
  data-dependent branch, a while loop) and an evaluation function, repeated to the size, with
  a ``__main__`` section that trains the first one.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

TARGET_NEST_S = 3.0
TARGET_BIG_S = 20.0
TARGET_BIG_MB = 400.0


def nest_source(depth: int, call: bool = True) -> str:
    lines = ["import sys", "import torch", "import torch.nn as nn", "", "",
             "def train(model, opt, loader, steps):", "    h = torch.zeros(4, requires_grad=True)", "    step = 0"]
    ind = "    "
    for i in range(depth):
        kind = ("for", "if", "while")[i % 3]
        if kind == "for":
            lines.append(f"{ind}for x{i} in loader:")
        elif kind == "if":
            lines.append(f"{ind}if h.sum() > {i}:")
        else:
            lines.append(f"{ind}while step < steps:")
        ind += "    "
        lines.append(f"{ind}y{i} = model(x{i - i % 3})")
        lines.append(f"{ind}if y{i}.mean() > 0:")
        lines.append(f"{ind}    h = h + y{i}")
        lines.append(f"{ind}else:")
        lines.append(f"{ind}    h = h * 2")
        if kind == "while":
            lines.append(f"{ind}step += 1")
    lines += [f"{ind}loss = h.sum()", f"{ind}loss.backward()", f"{ind}opt.step()", "    return h"]
    if call:
        lines += ["", "", "model = nn.Linear(4, 4)", "opt = torch.optim.SGD(model.parameters(), lr=0.1)",
                  "loader = [torch.randn(4) for _ in range(int(sys.argv[1]))]",
                  "train(model, opt, loader, int(sys.argv[2]))"]
    return "\n".join(lines) + "\n"


_BLOCK = '''

class Net{k}(nn.Module):
    def __init__(self, width={w}):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.act = nn.ReLU(inplace=True)
        self.fc2 = nn.Linear(width, 1)

    def forward(self, x):
        out = self.fc1(x)
        out = self.act(out)
        if out.sum() > {k}:
            out = out * 2
        else:
            out = out + 1
        return self.fc2(out)


def train{k}(model, opt, loader, epochs):
    total = 0
    for epoch in range(epochs):
        for x, y in loader:
            pred = model(x)
            loss = ((pred - y) ** 2).mean()
            if loss.item() > {k}:
                loss = loss * 0.5
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            while total > {w}:
                total = total / 2
    return total


def evaluate{k}(model, loader):
    with torch.no_grad():
        scores = []
        for x, y in loader:
            scores.append(model(x).sum())
        return sum(scores)
'''

_MAIN = '''

if __name__ == "__main__":
    model = Net0()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [(torch.randn(4, 4), torch.randn(4, 1)) for _ in range(3)]
    train0(model, opt, loader, 2)
    print(evaluate0(model, loader))
'''


def big_source(n_bytes: int) -> str:
    parts: List[str] = ["import torch\nimport torch.nn as nn\n"]
    size, k = 0, 0
    while size < n_bytes:
        block = _BLOCK.format(k=k, w=4 + k % 5)
        parts.append(block)
        size += len(block)
        k += 1
    parts.append(_MAIN)
    return "".join(parts)


# --------------------------------------------------------------------------- measuring
_CHILD = r'''
import ast, json, resource, sys, time
path, mode = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8").read()
out = {}
if mode == "parse":
    t0 = time.process_time()
    tree = ast.parse(text)
else:
    try:
        from gradwarden.engine.interp import interpreter  # imported before the clock starts
        import gradwarden.engine.assembly  # noqa: F401 (the interpreter's roles)
    except ImportError:  # a revision from before the engine's rooms
        from gradwarden.engine import interpreter
    import gradwarden.engine.analyze, gradwarden.rules.dispatch  # noqa: E401
    t0 = time.process_time()
    work = []  # the counters of each interpreter (a file analysed in parts has one per part)
    real_run = interpreter.Interpreter.run
    def run(self):
        try:
            return real_run(self)
        finally:
            work.append(getattr(self, "work", None) or getattr(self, "steps", 0))  # never the interpreter: it holds its tree
    interpreter.Interpreter.run = run
    from gradwarden.engine.analyze import analyze_source
    diags = analyze_source(text, path)
    # an engine without the counters (an older revision, for a before/after run) shows its
    # statement count only, or nothing
    counters = [w for w in work if not isinstance(w, int)]
    out.update(statements=sum(w.statements for w in counters) if counters else sum(work),
               peak_paths=max((w.peak_paths for w in counters), default=0),
               joins=sum(w.joins for w in counters), interpreters=len(work),
               codes=sorted(d.code for d in diags), stopped=sum(d.code == "GW002" for d in diags),
               parts=sum(d.code == "GW002" and d.message.startswith("analysed in parts") for d in diags))
out["cpu_s"] = time.process_time() - t0
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
'''


def measure(path: Path, mode: str, timeout: float) -> Dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1] / "server") + os.pathsep + env.get("PYTHONPATH", "")
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, str(path), mode], capture_output=True, text=True,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"killed after {timeout:.0f} s"}
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(label: str, path: Path, timeout: float, target_s: float, target_mb: float = 0.0) -> bool:
    base = measure(path, "parse", timeout)
    got = measure(path, "engine", timeout)
    size = path.stat().st_size
    lines = path.read_text(encoding="utf-8").count("\n")
    if "error" in got or "error" in base:
        print(f"{label:<12} {size / 1e6:6.2f} MB {lines:7d} lines  FAILED: {got.get('error') or base.get('error')}")
        return False
    ok = got["cpu_s"] <= target_s and (not target_mb or got["peak_mb"] <= target_mb)
    codes = ",".join(sorted(set(got["codes"]))) or "-"
    mem_target = f" (target <= {target_mb:.0f} MB)" if target_mb else ""
    print(f"{label:<12} {size / 1e6:6.2f} MB {lines:7d} lines | ast.parse {base['cpu_s']:6.2f} s "
          f"{base['peak_mb']:6.0f} MB | gradwarden {got['cpu_s']:6.2f} s {got['peak_mb']:6.0f} MB "
          f"= {got['cpu_s'] / max(base['cpu_s'], 1e-3):5.1f}x time, {got['peak_mb'] / max(base['peak_mb'], 1):4.1f}x memory "
          f"| statements {got['statements']:,} peak paths {got['peak_paths']} joins {got['joins']:,} "
          f"| findings {codes} GW002 {got['stopped']} (in parts: {got.get('interpreters', 1) if got.get('parts') else 'no'}) | target <= {target_s:.0f} s{mem_target}: "
          f"{'ok' if ok else 'MISSED'}")
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--depths", default="6,8,12,20,40")
    ap.add_argument("--mb", type=float, default=5.0, help="size of the large file (0: skip it)")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--keep", type=Path, default=None, help="write the generated inputs here")
    args = ap.parse_args()
    work = args.keep or Path(os.environ.get("TMPDIR", "/tmp")) / "gw_bench_bounded"
    work.mkdir(parents=True, exist_ok=True)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores (CPU seconds of one process; "
          "peak = max resident set of the child)")
    ok = True
    for depth in [int(d) for d in args.depths.split(",") if d]:
        path = work / f"nest_{depth}.py"
        path.write_text(nest_source(depth), encoding="utf-8")
        ok &= report(f"nest {depth}", path, args.timeout, TARGET_NEST_S)
    if args.mb > 0:
        path = work / f"big_{args.mb:g}mb.py"
        path.write_text(big_source(int(args.mb * 1e6)), encoding="utf-8")
        ok &= report(f"file {args.mb:g} MB", path, args.timeout, TARGET_BIG_S, TARGET_BIG_MB)
    print("all targets met" if ok else "some targets missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
