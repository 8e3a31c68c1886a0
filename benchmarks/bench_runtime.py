"""Benchmark of the runtime bridge: a small CNN trained for N steps, three ways, same run.

    .venv/bin/python benchmarks/bench_runtime.py [--steps N] [--batch B] [--threads T] [--repeat R]
    .venv/bin/python benchmarks/bench_runtime.py --against /tmp/base/server   # another revision too
    .venv/bin/python benchmarks/bench_runtime.py --examples

    .venv/bin/python benchmarks/bench_runtime.py --cases ../shared/revealed/cases-2026-11-21

``--cases DIR``: the bridge on every labelled case of DIR (``# expect:``/``# line:`` headers,
as ``shared/tools/score.py`` reads them): version-counter errors whose write line is the
case's line, the other error and silent cases found at the case's line (the line a finding is
shown at or one of its sites), and correct files with a finding (false alarms); "shown at it"
counts the cases whose finding is shown at the case's line. Prints the misses; exit status 1
when a correct file has one.

``--examples``: every correct program of ``tests/runtime_examples`` (pytorch/examples made tiny
and offline, LSTMCell/GRU/LSTM loops, spawn, torch.compile ...) run plainly and under
``gradwarden debug``: the exit status and stdout must be equal and the run must find nothing;
prints each program's whole-process wall time both ways and the ratio (start-up and
``import torch`` included, so it is the cost a user sees). Exit status 1 when one disagrees.

1. plain: ``python train.py``
2. bridge: ``gradwarden debug train.py`` (saved-tensor hooks, dispatch mode, coverage)
3. anomaly: ``python train.py`` with ``torch.autograd.set_detect_anomaly(True)``

``--against DIR`` adds a fourth variant, the bridge of another revision (``DIR`` is its ``server/``
folder, e.g. ``git archive REV server | tar -x -C /tmp/base``), run through its own command line:
before/after numbers measured in the same run.

Each variant runs in its own process and times its own training loop (after two warm-up steps),
so interpreter start-up and ``import torch`` are left out; the best of ``--repeat`` runs counts.
Prints the per-step times (wall clock and process CPU time) and the ratios; the target is
bridge <= 1.5x plain and faster than anomaly mode, judged on CPU time (steadier than the wall
clock on a shared machine). Exit status 1 when the target is missed (``--check``).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

TRAIN = textwrap.dedent(
    """
    import json, os, sys, time
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    steps, batch, threads, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    if os.environ.get("BENCH_ANOMALY") == "1":
        torch.autograd.set_detect_anomaly(True)
    if threads > 0:
        torch.set_num_threads(threads)
    torch.manual_seed(0)


    class SmallCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(16)
            self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
            self.bn2 = nn.BatchNorm2d(32)
            self.drop = nn.Dropout(0.1)
            self.fc1 = nn.Linear(32 * 7 * 7, 64)
            self.fc2 = nn.Linear(64, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
            x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
            x = self.drop(F.relu(self.fc1(x.flatten(1))))
            return self.fc2(x)


    model = SmallCNN()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    xs = torch.randn(8, batch, 1, 28, 28)
    ys = torch.randint(0, 10, (8, batch))


    def step(i):
        opt.zero_grad()
        loss = F.cross_entropy(model(xs[i % 8]), ys[i % 8])
        loss.backward()
        opt.step()
        return loss


    for i in range(2):
        step(i)
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(steps):
        loss = step(i)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    with open(out, "w") as fh:
        json.dump({"per_step": elapsed / steps, "cpu_per_step": cpu / steps, "loss": float(loss)}, fh)
    """
)


def run_variant(kind: str, script: Path, args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "timing.json"
        argv = [str(args.steps), str(args.batch), str(args.threads), str(out)]
        env = dict(os.environ)
        env.pop("BENCH_ANOMALY", None)
        if kind == "anomaly":
            env["BENCH_ANOMALY"] = "1"
        if kind == "against":
            env["PYTHONPATH"] = os.pathsep.join([str(args.against)] + [p for p in [env.get("PYTHONPATH")] if p])
            subprocess.run([args.python, "-m", "gradwarden", "debug", "-q", "--no-static", "--device", "cpu",
                            str(script), *argv], check=True, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        elif kind == "bridge":
            from gradwarden.runtime import DebugOptions, Target, run_debug

            result = run_debug(Target.script(str(script), argv),
                               DebugOptions(python=args.python, output="discard", device="cpu", static=False,
                                            env={k: v for k, v in env.items() if k == "BENCH_ANOMALY"}))
            if result.status != "ok":
                raise SystemExit(f"bridge run failed: {result.message} {result.error or ''}")
            if result.runtime_findings:
                raise SystemExit(f"bridge reported findings on a correct script: {result.runtime_findings}")
        else:
            subprocess.run([args.python, str(script), *argv], check=True, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return json.loads(out.read_text())


def run_examples() -> int:
    """Plain vs debug on every correct example; returns the number of programs that disagree."""
    import time

    sys.path.insert(0, str(ROOT / "tests"))
    from runtime_examples.compare import CORRECT, EXAMPLES, debug, plain

    print("correct programs, plain vs gradwarden debug (whole process, wall clock, one run each)")
    print(f"  {'program':28s} {'plain s':>8s} {'debug s':>8s} {'ratio':>6s}  agree")
    bad = 0
    total_plain = total_debug = 0.0
    for name, args in CORRECT:
        t0 = time.perf_counter()
        p = plain(EXAMPLES / name, args)
        t1 = time.perf_counter()
        d = debug(EXAMPLES / name, args)
        t2 = time.perf_counter()
        agree = p.returncode == 0 and d.returncode == p.returncode and d.stdout == p.stdout and not d.findings
        bad += not agree
        total_plain += t1 - t0
        total_debug += t2 - t1
        why = "" if agree else f"  rc {p.returncode}/{d.returncode}, stdout {'same' if d.stdout == p.stdout else 'DIFFERS'}, " \
                               f"findings {[f['code'] for f in d.findings]}"
        print(f"  {name:28s} {t1 - t0:8.1f} {t2 - t1:8.1f} {(t2 - t1) / (t1 - t0):5.2f}x  {'yes' if agree else 'NO'}{why}")
    print(f"  {'total':28s} {total_plain:8.1f} {total_debug:8.1f} {total_debug / total_plain:5.2f}x  "
          f"{len(CORRECT) - bad}/{len(CORRECT)} agree")
    return bad


def score_cases(folder: Path, static: bool = False, match: str = "", table: bool = False,
                only_ok: bool = False) -> int:
    """The bridge over labelled cases; returns the number of false alarms. With ``static``, the
    static diagnostics are confirmed too, and the hazards whose diagnostic at the case's line
    the run confirmed are counted. ``match``: only the files whose name matches this regular
    expression (a batch's numbers); ``only_ok``: only the correct files. ``table`` (implies
    ``static``): one row per hazard, confirmed / runtime only / static only / neither, and the
    share the run found (confirmed + runtime only)."""
    import re
    from concurrent.futures import ThreadPoolExecutor

    sys.path.insert(0, str(ROOT / "tests"))
    from case_support import load_cases
    from gradwarden.runtime import DebugOptions, DebugSession, Target
    from gradwarden.runtime.session import Zygote

    cases = load_cases(folder.resolve())
    if match:
        cases = [c for c in cases if re.search(match, c.path.name)]
    if only_ok:
        cases = [c for c in cases if c.expect == "ok"]
    static = static or table
    with Zygote() as zygote:
        def one(case):
            session = DebugSession(Target.script(str(case.path), cwd=str(case.path.parent)),
                                   DebugOptions(output="discard", timeout=300, static=static), zygote=zygote)
            session.start()
            return case, session.wait()

        with ThreadPoolExecutor(2) as pool:
            runs = list(pool.map(one, cases))
    tallies = {"version-counter": [0, 0, 0], "other error": [0, 0, 0], "silent": [0, 0, 0]}
    false_alarms = []
    misses = []
    for case, result in runs:
        found = result.runtime_findings
        if case.expect == "ok":
            if found:
                false_alarms.append((case.rel, [(f.code, f.row) for f in found]))
            continue
        versions = [f for f in found if f.kind == "version-counter"]
        if case.expect == "error" and versions:
            group = "version-counter"
            hit = all(f.write_site is not None and f.write_site.row in case.cause_lines for f in versions)
        else:
            group = "other error" if case.expect == "error" else "silent"
            hit = any(f.row in case.cause_lines or any(site.row in case.cause_lines for _, site in f.sites())
                      for f in found)
        tallies[group][0] += hit
        tallies[group][1] += 1
        # stricter: the line the finding is shown at (its row) is the case's line
        tallies[group][2] += any(f.row in case.cause_lines for f in (versions or found))
        if not hit:
            misses.append((case.rel, case.expect, sorted(case.cause_lines), [(f.code, f.row) for f in found]))
    print(f"bridge on {len(cases)} labelled cases of {folder}")
    for group, (hit, n, shown) in tallies.items():
        print(f"  {group:16s} {hit}/{n} found at the case's line" + (f" ({100 * hit / n:.0f}%)" if n else "")
              + f"; {shown}/{n} shown at it")
    n_ok = sum(1 for c, _ in runs if c.expect == "ok")
    print(f"  correct files    {len(false_alarms)} of {n_ok} with a finding")
    if static:
        for expect in ("error", "silent"):
            group = [(c, r) for c, r in runs if c.expect == expect]
            confirmed = [c.rel for c, r in group if any(
                f.source == "static" and f.status == "confirmed" and f.row in c.cause_lines for f in r.findings)]
            print(f"  {expect:6s} hazards  {len(confirmed)}/{len(group)} with the static diagnostic at the case's line "
                  f"confirmed by the run" + (f": {', '.join(sorted(Path(x).stem.split('_')[0] for x in confirmed))}"
                                             if expect == "silent" else ""))
    if table:
        print_table(runs)
    for rel, expect, lines, got in misses:
        print(f"  missed {rel} ({expect}, line {lines}): {got}")
    for rel, got in false_alarms:
        print(f"  FALSE ALARM {rel}: {got}")
    return len(false_alarms)


def hazard_verdict(case, result) -> str:
    """confirmed (a static diagnostic at the case's line that the run confirmed), runtime only (a
    finding of the run alone at the case's line: shown there or with a site there), static only (a
    static diagnostic at the line the run did not confirm), or neither."""
    lines = case.cause_lines
    if any(f.source == "static" and f.status == "confirmed" and f.row in lines for f in result.findings):
        return "confirmed"
    if any(f.row in lines or any(site.row in lines for _, site in f.sites()) for f in result.runtime_findings):
        return "runtime only"
    if any(f.source == "static" and f.row in lines for f in result.findings):
        return "static only"
    return "neither"


def print_table(runs) -> None:
    """One row per hazard with its verdict and the codes at its line, then the counts per
    family and expectation, and the share the run found."""
    verdicts = ("confirmed", "runtime only", "static only", "neither")
    rows = [(c, r, hazard_verdict(c, r)) for c, r in runs if c.expect != "ok"]
    print("\n  hazard                                   expect  verdict       static@line / run@line")
    for case, result, verdict in rows:
        static = sorted({f.code for f in result.findings if f.source == "static" and f.row in case.cause_lines})
        run = sorted({f.code for f in result.runtime_findings if f.row in case.cause_lines
                      or any(site.row in case.cause_lines for _, site in f.sites())})
        print(f"  {Path(case.rel).stem[:40]:40s} {case.expect:6s}  {verdict:12s}  "
              f"{','.join(static) or '-'} / {','.join(run) or '-'}")
    groups: dict = {}
    for case, _, verdict in rows:
        for key in (f"family {case.family}", f"{case.expect}", "all"):
            groups.setdefault(key, {v: 0 for v in verdicts})[verdict] += 1
    print("\n  " + f"{'':12s}" + "".join(f"{v:>14s}" for v in verdicts) + "   run found")
    for key in sorted(groups, key=lambda k: (k == "all", k)):
        counts = groups[key]
        n = sum(counts.values())
        found = counts["confirmed"] + counts["runtime only"]
        print(f"  {key:12s}" + "".join(f"{counts[v]:14d}" for v in verdicts)
              + f"   {found}/{n} ({100 * found / n:.0f}%)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads (default 1: steadier timings on a shared machine; 0: torch's default)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--check", action="store_true", help="exit 1 when the target is missed")
    ap.add_argument("--examples", action="store_true",
                    help="run the correct example programs plainly and under the bridge instead")
    ap.add_argument("--cases", metavar="DIR", type=Path, help="score the bridge on the labelled cases of DIR instead")
    ap.add_argument("--static", action="store_true",
                    help="with --cases: confirm the static diagnostics too, and count the confirmed hazards")
    ap.add_argument("--match", metavar="REGEX", default="",
                    help="with --cases: only the files whose name matches (e.g. a batch: '^(H(4|5|6)\\d|C20[4-6]|F20[23]|G2[1-3]\\d)_')")
    ap.add_argument("--table", action="store_true",
                    help="with --cases: one row per hazard (confirmed / runtime only / static only / neither) "
                         "and the share the run found; implies --static")
    ap.add_argument("--only-ok", action="store_true", help="with --cases: only the correct files (false alarms)")
    ap.add_argument("--against", metavar="DIR", type=Path,
                    help="also time the bridge of another revision (DIR: its server/ folder)")
    args = ap.parse_args(argv)
    if args.cases:
        return 1 if score_cases(args.cases, args.static, args.match, args.table, args.only_ok) else 0
    if args.examples:
        return 1 if run_examples() else 0
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "train_cnn.py"
        script.write_text(TRAIN)
        wall: dict = {}
        cpu: dict = {}
        kinds = ("plain", "bridge", "anomaly") + (("against",) if args.against else ())
        for _ in range(args.repeat):  # interleaved, so that a busy moment hurts every variant
            for kind in kinds:
                t = run_variant(kind, script, args)
                wall[kind] = min(wall.get(kind, t["per_step"]), t["per_step"])
                cpu[kind] = min(cpu.get(kind, t["cpu_per_step"]), t["cpu_per_step"])
    threads = args.threads or "default"
    print(f"small CNN (2 conv + BN, 2 linear), batch {args.batch}, {args.steps} steps, torch threads {threads}, "
          f"best of {args.repeat} interleaved runs; ms per training step")
    print(f"  {'':8s} {'wall':>9s} {'ratio':>7s} {'cpu':>9s} {'ratio':>7s}")
    for kind in kinds:
        print(f"  {kind:8s} {wall[kind] * 1e3:9.2f} {wall[kind] / wall['plain']:6.2f}x "
              f"{cpu[kind] * 1e3:9.2f} {cpu[kind] / cpu['plain']:6.2f}x")
    rw, rc = wall["bridge"] / wall["plain"], cpu["bridge"] / cpu["plain"]
    print(f"bridge/plain = {rw:.2f} wall, {rc:.2f} cpu (target <= 1.50); "
          f"bridge/anomaly = {wall['bridge'] / wall['anomaly']:.2f} wall, {cpu['bridge'] / cpu['anomaly']:.2f} cpu "
          f"(target < 1)")
    if args.against:
        print(f"against = the bridge of {args.against}; bridge/against = {wall['bridge'] / wall['against']:.2f} wall, "
              f"{cpu['bridge'] / cpu['against']:.2f} cpu")
    # judged on CPU time: on a shared machine the wall clock mostly measures the neighbours
    ok = rc <= 1.5 and cpu["bridge"] < cpu["anomaly"]
    print("target met" if ok else "target MISSED")
    return 0 if (ok or not args.check) else 1


if __name__ == "__main__":
    raise SystemExit(main())
