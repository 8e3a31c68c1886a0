#!/usr/bin/env python3
"""Cost on code the engine was not tuned on: a cold ``check`` against ``ast.parse`` on real
libraries, and deep nests from a generator of its own (a measurement, not a test).

    python benchmarks/bench_cost.py [--trees timm,kornia,monai,torch_geometric] [--rounds 3]
                                    [--depths 6,8,12,16,20,24,30,40] [--seeds 1,2,3]
                                    [--baseline-rev REV] [--instr] [--format text|json]
                                    [--no-trees] [--no-nests] [--phases]

**Trees** (benchmarks/real_trees.py knows their pins and downloads them into its cache;
``GRADWARDEN_TREES_CACHE`` points elsewhere, e.g. a cache another checkout already filled).
For each tree, in fresh processes, rounds interleaved, the fastest round kept per measure:

- ``ast.parse``: CPU of a process parsing every ``.py`` file of the tree (read beforehand;
  only the parse is timed);
- ``check``: ``gradwarden check TREE --no-cache --output-format FORMAT`` (its default jobs; ``--jobs ,1``: a table for the default and one for a single process), CPU
  of the process *and every worker it forked* (``os.wait4`` of the check: the pool's workers
  are its reaped children, so their CPU is in its figure);

and the ratio (target: ``check`` <= 3x ``ast.parse``). ``--baseline-rev REV`` measures the same
``check`` with revision REV's ``server/`` (``git archive``, run by the same interpreter through
``PYTHONPATH``) in the same rounds. ``--instr`` adds instruction counts (callgrind, as
benchmarks/instr_timm.py measures them, workers counted from their fork): the steady figure
on a noisy shared machine, but about fifty times slower than the program (minutes per tree).
``--phases`` adds, per tree, where an in-process analysis of every file goes (the working
tree's code, one core, the tree as project root as ``check`` makes it): the parse of the files
and of the project modules they import, the trigger pre-pass, the module code, the project
modules' code, the definitions analysed alone, jedi's look-ups, the rest; each phase charged
for its own time only.

**Nests** (``nest_program(depth, seed)``): a training function whose body nests ``depth``
levels drawn from ``for``/``while``/``if``/``try``/``with``, with comprehensions, nested
functions, inlined helpers and early exits (``break``, ``continue``, ``return``, ``raise``),
seeded; it is not benchmarks/bench_bounded.py's generator (one fixed for/if/while pattern).
Each program is analysed in a fresh process (``analyze_source``; the engine imported before
the clock starts); printed: CPU seconds, statement visits, most paths held, and GW002 notes
(target: each <= 3 s). A **runaway** row (``runaway_program``: a training step whose inlined
calls really multiply, 6**7 runs of the innermost helper however the paths are joined)
checks that the budget (engine/interp/budget.py) still stops it, with one GW002, in bounded
time.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from revisions import server_of  # beside this script (benchmarks/)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TARGET_RATIO = 3.0
TARGET_NEST_S = 3.0
DEFAULT_TREES = ("timm", "kornia", "monai", "torch_geometric")

# A process that parses every file of a tree; prints its parse CPU seconds.
_PARSE = r"""
import ast, sys, time
from pathlib import Path
srcs = [(str(p), p.read_bytes()) for p in sorted(Path(sys.argv[1]).rglob("*.py")) if p.is_file()]
t0 = time.process_time()
for name, data in srcs:
    try:
        ast.parse(data, filename=name)
    except (SyntaxError, ValueError):
        pass
print(time.process_time() - t0, len(srcs))
"""

# A process that analyses one generated program; prints JSON.
_NEST = r"""
import json, sys, time
from gradwarden.engine.analyze import analyze_source, preload
try:
    from gradwarden.engine.interp import interpreter
except ImportError:  # a revision from before the engine's rooms
    from gradwarden.engine import interpreter
preload()
path = sys.argv[1]
text = open(path, encoding="utf-8").read()
work = []
real_run = interpreter.Interpreter.run
def run(self):
    try:
        return real_run(self)
    finally:
        work.append(getattr(self, "work", None))
interpreter.Interpreter.run = run
t0 = time.process_time()
diags = analyze_source(text, path)
cpu = time.process_time() - t0
counters = [w for w in work if w is not None and not isinstance(w, int)]
print(json.dumps({"cpu_s": cpu, "statements": sum(w.statements for w in counters),
                  "peak_paths": max((w.peak_paths for w in counters), default=0),
                  "codes": sorted(d.code for d in diags),
                  "stopped": [d.message for d in diags if d.code == "GW002"]}))
"""


# A process that analyses every file of a tree in-process, one core, as ``check --jobs 1`` does
# (the tree is the project root hint), and splits its CPU by phase, each phase charged only
# for its own time (a project module run inside a definition analysed alone is the project
# modules'). Prints JSON.
_PHASES = r"""
import ast, contextlib, json, sys, time
from pathlib import Path
from gradwarden.engine import analyze as _analyze_module, entry
from gradwarden.engine.analyze import analyze_source, preload
from gradwarden.engine.front import imports, triggers
from gradwarden.rules import dispatch
from gradwarden.engine.interp import interpreter, projects, unreached
preload()
clock = time.process_time
spent, stack, mark = {}, ["rest"], [clock()]
def charge():
    now = clock()
    spent[stack[-1]] = spent.get(stack[-1], 0.0) + now - mark[0]
    mark[0] = now
def phase(owner, name, label):
    real = getattr(owner, name)
    def timed(*a, **k):
        charge()
        # a parse inside a project module's load is that load's; an annotation's, its caller's
        stack.append(stack[-1] if label == "parse: the files" and (
            stack[-1] == "parse: project modules" or k.get("mode") == "eval") else label)
        try:
            return real(*a, **k)
        finally:
            charge(); stack.pop()
    setattr(owner, name, timed)
phase(ast, "parse", "parse: the files")
phase(imports, "_parsed", "parse: project modules")
phase(triggers.Triggers, "__init__", "trigger pre-pass")
phase(interpreter.Interpreter, "__init__", "set-up and diagnostics")
phase(dispatch, "events_to_diagnostics", "set-up and diagnostics")
phase(interpreter.Interpreter, "run", "module code")
phase(projects.ProjectImports, "run_module", "project modules' code")
phase(unreached.Unreached, "analyse_unreached", "definitions alone")
phase(imports.ImportResolver, "_jedi", "jedi look-ups")
phase(_analyze_module, "_collect_between_files", "collector")
tree = Path(sys.argv[1])
imports.set_root_hints([str(tree)])
srcs = [(str(p), p.read_bytes()) for p in sorted(tree.rglob("*.py")) if p.is_file()]
mark[0] = clock()
# as check's loop over files (its import answers kept for the run where the engine has them)
with entry.fewer_collections(), getattr(entry, "files_fixed", contextlib.nullcontext)():
    for name, data in srcs:
        analyze_source(data, name)
charge()
print(json.dumps(spent))
"""


def phases_table(names: Sequence[str]) -> None:
    """Where ``check --jobs 1``'s analysis of each tree goes (this tree's code only)."""
    order = ["parse: the files", "parse: project modules", "trigger pre-pass", "set-up and diagnostics",
             "module code", "project modules' code", "definitions alone", "jedi look-ups", "collector", "rest"]
    print("\nin-process analysis of every file (one core, this tree's code), CPU seconds by phase "
          "(each phase its own time; x: multiple of ast.parse of the tree's files)")
    print(f"{'tree':<18}{'ast.parse':>10}" + "".join(f"{n:>24}" for n in order) + f"{'all':>8}")
    for name in names:
        tree = tree_path(name)
        parse = parse_cpu(tree)
        out = subprocess.run([sys.executable, "-c", _PHASES, str(tree)], check=True, capture_output=True,
                             text=True, env=_env(REPO / "server"), cwd=REPO)
        spent = json.loads(out.stdout.strip().splitlines()[-1])
        total = sum(spent.values())
        cells = "".join(f"{f'{spent.get(n, 0.0):.2f} s {spent.get(n, 0.0) / parse:.2f}x':>24}" for n in order)
        print(f"{name:<18}{parse:>8.2f} s" + cells + f"{total:>6.2f} s", flush=True)


def _env(server: Path) -> Dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(server))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _compile(server: Path) -> None:
    """Bytecode first (as for an installed package), so no run pays for compiling."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(server / "gradwarden")], check=True,
                   env=_env(server))


# --------------------------------------------------------------------------- trees
def parse_cpu(tree: Path) -> float:
    out = subprocess.run([sys.executable, "-c", _PARSE, str(tree)], check=True, capture_output=True, text=True)
    return float(out.stdout.split()[0])


def check_cpu(server: Path, tree: Path, fmt: str, jobs: str = "") -> float:
    """CPU seconds of ``gradwarden check`` with every process it forked (``jobs``: its
    ``--jobs``, "" for its default)."""
    return check_cost(server, tree, fmt, jobs)[0]


def check_cost(server: Path, tree: Path, fmt: str, jobs: str = "") -> Tuple[float, float]:
    """(CPU seconds, wall seconds) of ``gradwarden check`` with every process it forked."""
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "gradwarden", "check", str(tree), "--no-cache",
                             "--output-format", fmt] + (["--jobs", jobs] if jobs else []), cwd=REPO, env=_env(server),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):  # 1: findings
        raise RuntimeError(f"check of {tree} exited {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, time.monotonic() - started


def tree_path(name: str) -> Path:
    sys.path.insert(0, str(HERE))
    import real_trees  # noqa: E402 (the pins and the cache)

    if name not in real_trees.TREES:
        raise SystemExit(f"unknown tree {name!r} (benchmarks/real_trees.py knows: {', '.join(real_trees.TREES)})")
    return real_trees.fetch(name)


def trees_table(names: Sequence[str], servers: Dict[str, Path], rounds: int, fmt: str, instr: bool,
                jobs: str = "") -> bool:
    ok = True
    cols = list(servers)
    said = f"--jobs {jobs}" if jobs else "its default jobs"
    print(f"\ncold check --no-cache --output-format {fmt} ({said}; CPU of the check and its workers) "
          f"against ast.parse (CPU), fastest of {rounds} interleaved rounds; wall: the same runs' wall "
          f"times (the fastest first)")
    head = f"{'tree':<18}{'files':>6}{'MB':>6}{'ast.parse':>11}" + "".join(f"{'check ' + c:>34}" for c in cols)
    print(head)
    for name in names:
        tree = tree_path(name)
        files = [p for p in tree.rglob("*.py") if p.is_file()]
        mb = sum(p.stat().st_size for p in files) / 1e6
        parse: List[float] = []
        checks: Dict[str, List[float]] = {c: [] for c in cols}
        walls: Dict[str, List[float]] = {c: [] for c in cols}
        for r in range(rounds):
            parse.append(parse_cpu(tree))
            for c in (cols if r % 2 == 0 else cols[::-1]):  # alternate the order: no revision always second
                cpu_s, wall_s = check_cost(servers[c], tree, fmt, jobs)
                checks[c].append(cpu_s)
                walls[c].append(wall_s)
        p = min(parse)
        cells = []
        for c in cols:
            cpu = min(checks[c])
            cells.append(f"{cpu:8.2f} s = {cpu / p:4.2f}x (runs {'/'.join(f'{x:.1f}' for x in checks[c])}; "
                         f"wall {'/'.join(f'{x:.1f}' for x in sorted(walls[c]))})")
        print(f"{name:<18}{len(files):>6}{mb:>6.1f}{p:>9.2f} s" + "".join(f"{x:>48}" for x in cells), flush=True)
        ratio = min(checks[cols[-1]]) / p
        ok &= name not in DEFAULT_TREES or ratio <= TARGET_RATIO or bool(jobs)  # judged at the default
        if instr:
            import instr_timm  # noqa: E402 (benchmarks/ is on sys.path: tree_path put it there)

            for c in cols:
                with tempfile.TemporaryDirectory(prefix="gw-cost-instr-") as tmp:
                    got = instr_timm.measure(servers[c], tree, fmt, Path(tmp))
                print(f"{'':<18}instructions, {c}: ast.parse {got['ast.parse'] / 1e9:.2f} G, check "
                      f"{got['check'] / 1e9:.2f} G = {got['check'] / got['ast.parse']:.2f}x (parent "
                      f"{got['check: parent'] / 1e9:.2f} G, workers {got['check: workers'] / 1e9:.2f} G, other "
                      f"children {got['check: other children'] / 1e9:.2f} G, processes left out for want "
                      f"of a count: {got['left out (no count)']}), "
                      f"analyze_source in-process {got['analyze_source'] / got['ast.parse']:.2f}x", flush=True)
    judged = [n for n in names if n in DEFAULT_TREES]
    if jobs:  # the target is judged on the default jobs only
        print(f"(--jobs {jobs}: not judged; the target is judged on check's default jobs)")
        return ok
    verdict = ("met" if ok else "NOT met") if judged else "not judged (none of them measured)"
    print(f"target: check <= {TARGET_RATIO:.0f}x ast.parse on {', '.join(DEFAULT_TREES)}: {verdict} ({cols[-1]})")
    return ok


# --------------------------------------------------------------------------- nests
class _Gen:
    """One nest, written level by level with a seeded choice of construct per level."""

    KINDS = ("for", "while", "if", "try", "with", "for", "if")

    def __init__(self, depth: int, seed: int) -> None:
        self.rng = random.Random(seed * 1009 + depth)
        self.depth = depth
        self.lines: List[str] = []
        self.tensors = ["h", "w"]
        self.n = 0

    def fresh(self) -> str:
        self.n += 1
        return f"v{self.n}"

    def emit(self, ind: int, text: str) -> None:
        self.lines.append("    " * ind + text)

    def work(self, ind: int) -> None:
        """A few statements of ordinary training work at this level."""
        r = self.rng
        for _ in range(r.randint(1, 3)):
            t = r.choice(self.tensors)
            v = self.fresh()
            choice = r.randrange(7)
            if choice == 0:
                self.emit(ind, f"{v} = model({t})")
            elif choice == 1:
                self.emit(ind, f"{v} = [{t} * k for k in range({r.randint(2, 4)})]")
                self.emit(ind, f"{v} = torch.stack({v}).sum(0)")
            elif choice == 2:
                self.emit(ind, f"{v} = helper({t}, {r.randint(1, 5)})")
            elif choice == 3:
                self.emit(ind, f"{v} = {{n: p.grad for n, p in model.named_parameters() if p.grad is not None}}")
                continue  # a dict of gradients, not a tensor
            elif choice == 4:
                self.emit(ind, f"{v} = torch.relu({t}) + {t}.mean()")
            elif choice == 5:
                inner = self.fresh()
                self.emit(ind, f"def {inner}(z):")
                self.emit(ind + 1, f"return z.tanh() * {r.randint(1, 3)}")
                self.emit(ind, f"{v} = {inner}({t})")
            else:
                self.emit(ind, f"{v} = {t}.detach().clone()")
            self.tensors.append(v)
        if len(self.tensors) > 6:
            self.tensors = self.tensors[:2] + self.tensors[-3:]

    def exit_stmt(self, ind: int, in_loop: bool) -> None:
        r = self.rng.randrange(5)
        cond = f"{self.rng.choice(self.tensors)}.sum() > {self.rng.randint(0, 9)}"
        if r == 0 and in_loop:
            self.emit(ind, f"if {cond}:")
            self.emit(ind + 1, "break")
        elif r == 1 and in_loop:
            self.emit(ind, f"if {cond}:")
            self.emit(ind + 1, "continue")
        elif r == 2:
            self.emit(ind, f"if {cond}:")
            self.emit(ind + 1, f"return {self.rng.choice(self.tensors)}")
        elif r == 3:
            self.emit(ind, f"if not torch.isfinite({self.rng.choice(self.tensors)}).all():")
            self.emit(ind + 1, "raise RuntimeError('diverged')")

    def level(self, i: int, ind: int, in_loop: bool) -> None:
        if i == self.depth:
            t = self.rng.choice(self.tensors)
            self.emit(ind, f"loss = ({t} - target).pow(2).mean()")
            self.emit(ind, "opt.zero_grad()")
            self.emit(ind, "loss.backward()")
            self.emit(ind, "opt.step()")
            self.emit(ind, "h = h.detach().requires_grad_()")  # truncated backpropagation: a clean loop
            return
        kind = self.rng.choice(self.KINDS)
        self.work(ind)
        self.exit_stmt(ind, in_loop)
        if kind == "for":
            src = self.rng.choice(["loader", "range(steps)", "zip(loader, loader)", "enumerate(loader)"])
            self.emit(ind, f"for item{i} in {src}:")
            self.level(i + 1, ind + 1, True)
        elif kind == "while":
            self.emit(ind, f"while count{i % 3} < steps:")
            self.emit(ind + 1, f"count{i % 3} += 1")
            self.level(i + 1, ind + 1, True)
        elif kind == "if":
            self.emit(ind, f"if {self.rng.choice(self.tensors)}.mean() > {self.rng.randint(0, 5)}:")
            self.level(i + 1, ind + 1, in_loop)
            self.emit(ind, "else:")
            self.emit(ind + 1, f"h = h * {self.rng.randint(2, 5)}")
        elif kind == "try":
            self.emit(ind, "try:")
            self.level(i + 1, ind + 1, in_loop)
            self.emit(ind, "except RuntimeError:")
            self.emit(ind + 1, "h = h.detach()")
        else:
            ctx = self.rng.choice(["torch.enable_grad()", "torch.autocast('cpu')", "open(log_path, 'a') as fh"])
            self.emit(ind, f"with {ctx}:")
            self.level(i + 1, ind + 1, in_loop)

    def program(self) -> str:
        self.lines = ["import torch", "import torch.nn as nn", "", "",
                      "def helper(x, k):",
                      "    out = x",
                      "    for _ in range(k):",
                      "        if out.norm() > k:",
                      "            out = out / 2",
                      "        else:",
                      "            out = out + 1",
                      "    return out", "", "",
                      "def train(model, opt, loader, target, steps, log_path):",
                      "    h = torch.zeros(4, requires_grad=True)",
                      "    w = torch.ones(4, requires_grad=True)",
                      "    count0 = count1 = count2 = 0"]
        self.level(0, 1, False)
        self.emit(1, "return h")
        self.lines += ["", "", "if __name__ == '__main__':",
                       "    model = nn.Linear(4, 4)",
                       "    opt = torch.optim.SGD(model.parameters(), lr=0.1)",
                       "    loader = [torch.randn(4) for _ in range(3)]",
                       "    train(model, opt, loader, torch.zeros(4), 2, 'log.txt')"]
        return "\n".join(self.lines) + "\n"


def nest_program(depth: int, seed: int) -> str:
    return _Gen(depth, seed).program()


def runaway_program(levels: int = 8) -> str:
    """A training step whose work really is exponential: each of ``levels`` helpers calls the
    next one six times, so inlining the first one means 6**(levels - 1) runs of the last,
    however paths are joined or loops run. The budget must stop it, with one GW002."""
    lines = ["import torch", "", ""]
    for k in range(levels):
        nxt = f"level{k + 1}" if k + 1 < levels else None
        lines += [f"def level{k}(x):"]
        if nxt is None:
            lines += ["    return x * 2 + 1", "", ""]
            continue
        lines += [f"    return {nxt}(x) + {nxt}(x * 2) + {nxt}(x - 1) + {nxt}(x / 2) + {nxt}(x + 1) + {nxt}(-x)",
                  "", ""]
    lines += ["def train(model, loader, opt):",
              "    for batch in loader:",
              "        out = level0(model(batch))",
              "        loss = out.mean()",
              "        opt.zero_grad()",
              "        loss.backward()",
              "        opt.step()", "", "",
              "if __name__ == '__main__':",
              "    model = torch.nn.Linear(4, 4)",
              "    opt = torch.optim.SGD(model.parameters(), lr=0.1)",
              "    train(model, [torch.randn(2, 4) for _ in range(3)], opt)"]
    return "\n".join(lines) + "\n"


def analyse_child(server: Path, path: Path, timeout: float) -> Dict:
    try:
        done = subprocess.run([sys.executable, "-c", _NEST, str(path)], capture_output=True, text=True,
                              timeout=timeout, env=_env(server), cwd=path.parent)
    except subprocess.TimeoutExpired:
        return {"error": f"killed after {timeout:.0f} s"}
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def nests_table(depths: Sequence[int], seeds: Sequence[int], servers: Dict[str, Path], work: Path,
                timeout: float) -> bool:
    ok = True
    cols = list(servers)
    print(f"\nnests (independent generator: for/while/if/try/with, comprehensions, nested functions, early "
          f"exits), analyze_source CPU in a fresh process; target <= {TARGET_NEST_S:.0f} s each")
    print(f"{'input':<22}{'lines':>6}" + "".join(f"{c:>46}" for c in cols))
    inputs = [(f"nest {d} seed {s}", nest_program(d, s)) for d in depths for s in seeds]
    inputs.append(("runaway (budget)", runaway_program()))
    for label, text in inputs:
        path = work / (label.replace(" ", "_").replace("(", "").replace(")", "") + ".py")
        path.write_text(text, encoding="utf-8")
        cells = []
        for c in cols:
            got = analyse_child(servers[c], path, timeout)
            if "error" in got:
                cells.append(f"FAILED: {got['error']}"[:44])
                if c == cols[-1]:
                    ok = False
                continue
            stop = "GW002" if got["stopped"] else "-"
            cells.append(f"{got['cpu_s']:6.2f} s {got['statements']:>7,} st {got['peak_paths']:>3} paths {stop:>6}")
            if c == cols[-1]:
                ok &= got["cpu_s"] <= TARGET_NEST_S
                if label.startswith("runaway"):
                    ok &= len(got["stopped"]) == 1  # the budget must still stop it, once
        print(f"{label:<22}{text.count(chr(10)):>6}" + "".join(f"{x:>46}" for x in cells), flush=True)
    print(f"target: each nest <= {TARGET_NEST_S:.0f} s and the runaway stopped by one GW002: "
          f"{'met' if ok else 'NOT met'} ({cols[-1]})")
    return ok


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trees", default=",".join(DEFAULT_TREES), help="real_trees.py names, comma-separated")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per tree (the fastest is kept)")
    ap.add_argument("--format", default="text", help="check's --output-format (default: text, as a user runs it)")
    ap.add_argument("--baseline-rev", help="also measure this git revision's code, in the same rounds")
    ap.add_argument("--jobs", default="", help="check's --jobs, comma-separated: one table each (\"\": its "
                    "default, the one judged; e.g. --jobs ,1 for the default and one process)")
    ap.add_argument("--instr", action="store_true", help="add instruction counts (valgrind; minutes per tree)")
    ap.add_argument("--depths", default="6,8,12,16,20,24,30,40")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--timeout", type=float, default=120.0, help="per nest analysis")
    ap.add_argument("--no-trees", action="store_true")
    ap.add_argument("--no-nests", action="store_true")
    ap.add_argument("--keep", type=Path, help="write the generated nests here")
    ap.add_argument("--phases", action="store_true",
                    help="also split an in-process analysis of each tree by phase (this tree's code)")
    args = ap.parse_args(argv)
    if args.instr and shutil.which("valgrind") is None:
        print("--instr needs valgrind (apt-get install valgrind)", file=sys.stderr)
        return 2
    ok = True
    with tempfile.TemporaryDirectory(prefix="gw-cost-") as tmp:
        servers: Dict[str, Path] = {}
        if args.baseline_rev:
            base = Path(tmp) / "base"
            base.mkdir()
            servers[args.baseline_rev] = server_of(args.baseline_rev, base)
        servers["this tree"] = REPO / "server"
        for server in servers.values():
            _compile(server)
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average "
              f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        if not args.no_trees:
            names = [n for n in args.trees.split(",") if n]
            for jobs in args.jobs.split(","):
                ok &= trees_table(names, servers, max(1, args.rounds), args.format, args.instr and not jobs,
                                  jobs.strip())
            if args.phases:
                phases_table(names)
        if not args.no_nests:
            work = args.keep or Path(tmp) / "nests"
            work.mkdir(parents=True, exist_ok=True)
            ok &= nests_table([int(d) for d in args.depths.split(",") if d],
                              [int(s) for s in args.seeds.split(",") if s], servers, work, args.timeout)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
