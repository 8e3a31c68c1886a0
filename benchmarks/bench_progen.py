"""The static engine against torch on random programs (tests/progen).

    .venv/bin/python benchmarks/bench_progen.py --n 2000 --seed 1 --family lifetime
    .venv/bin/python benchmarks/bench_progen.py --n 2000 --seed 1 --family flow --out /tmp/progen-flow
    .venv/bin/python benchmarks/bench_progen.py --n 2000 --seed 1 --family silent

Generates ``--n`` distinct programs of the family (``lifetime`` = issue 9's vocabulary,
``flow`` = issue 10's, ``silent`` = issue 24's, ``all`` = the three), runs each under torch (one
torch import, a forked child per program, one per core: tests/torch_runner.py) and under the
engine (``analyze_source``), and prints two agreement tables: per torch outcome class, the
programs that raise it (or run silently wrong), how many the engine flags, how many it misses,
and on which line (a cause line the generator planted, or the line torch raised at), and for
programs that run clean, the false alarms; then per generator class (family/pattern), the
hazards found, found on a planted line, missed, and the clean look-alikes flagged. Every disagreeing program (and every false warning) is written to
``--out/<verdict>/<pattern>/`` with torch's and the engine's outcome appended as comments, and
``--out/SUMMARY.md`` lists the smallest program per pattern.

No recorded outcomes are used by default (``--cache`` keeps torch's outcomes in
``benchmarks/.cache/progen-proofs.json``, to compare engines on the same programs: put another
engine first on ``PYTHONPATH``). Exit status 0 whatever the agreement: this is a measurement.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"
sys.path.insert(0, str(TESTS))

from progen import FAMILY_CHOICES, generate_set  # noqa: E402
from progen.oracle import (  # noqa: E402
    DISAGREEMENTS,
    annotated,
    describe,
    disagreement_kinds,
    run,
    smallest_per_pattern,
    write_disagreements,
)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="programs to generate (distinct)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--family", choices=FAMILY_CHOICES, default="all")
    ap.add_argument("--out", type=Path, default=None,
                    help="folder for the disagreeing programs (default benchmarks/.cache/progen/<family>-<seed>)")
    ap.add_argument("--cache", action="store_true",
                    help="reuse/record torch outcomes in benchmarks/.cache/progen-proofs.json (to compare "
                         "engines on the same programs without re-running torch)")
    ap.add_argument("--timeout", type=float, default=60, help="seconds per program under torch")
    ap.add_argument("--shrink", action="store_true",
                    help="shrink the smallest disagreeing program of each pattern/variant to a minimal "
                         "reproduction (greedy statement deletion, checked under torch and the engine)")
    args = ap.parse_args(argv)
    out = args.out or HERE / ".cache" / "progen" / f"{args.family}-{args.seed}"

    t0 = time.monotonic()
    programs = generate_set(args.n, args.seed, args.family)
    t_gen = time.monotonic() - t0
    with tempfile.TemporaryDirectory(prefix="progen-") as tmp:
        t1 = time.monotonic()
        report = run(programs, Path(tmp), suite="progen-bench" if args.cache else None,
                     complete=False, timeout=args.timeout, proofs_path=HERE / ".cache" / "progen-proofs.json")
        t_run = time.monotonic() - t1
    print(f"progen: {len(programs)} programs, family {args.family}, seed {args.seed} "
          f"(generated in {t_gen:.1f}s; torch + engine in {t_run:.1f}s; torch runs: {report.ran} run, "
          f"{report.reused} recorded, {len(report.reruns)} re-run fresh)")
    print()
    print(report.table())
    print()
    print("per generator class:")
    print(report.class_table())
    print()
    print("not in agreement, per pattern/variant:")
    print(report.patterns())
    kinds = DISAGREEMENTS + ("false-warning", "missed-warning", "missed-silent", "engine-crash", "unexpected",
                             "other-line")
    if out.exists():
        import shutil

        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    n = write_disagreements(report, out, kinds)
    small = smallest_per_pattern([r for r in report.records if r.verdict in kinds
                                  or (r.verdict == "agree" and r.line_ok is False)])
    lines = [f"# progen {args.family} seed {args.seed}: smallest program per pattern and verdict", ""]
    shrunk = {}
    if args.shrink:
        from progen.shrink import shrink, torch_runner_for

        with tempfile.TemporaryDirectory(prefix="progen-shrink-") as tmp:
            run_torch, close = torch_runner_for(Path(tmp))
            try:
                for r in small:
                    if r.verdict in disagreement_kinds(r.program.family):
                        text, kept, runs = shrink(r, run_torch)
                        shrunk[r.program.name] = (text, kept)
                        print(f"shrunk {r.program.name}: {len(r.program.text.splitlines())} -> "
                              f"{len(text.splitlines())} lines ({runs} torch runs)", flush=True)
            finally:
                close()
    for r in small:
        kind = "flagged on another line" if r.verdict == "agree" else r.verdict
        lines += [f"## {kind}: {r.program.pattern} / {r.program.variant} (torch: {r.torch.cls})", "",
                  describe(r), ""]
        if r.program.name in shrunk:
            text, kept = shrunk[r.program.name]
            lines += [f"minimal reproduction (planted line(s) {list(kept)} after shrinking):", "",
                      "```python", text.rstrip(), "```", ""]
        lines += ["```python", annotated(r).rstrip(), "```", ""]
    (out / "SUMMARY.md").write_text("\n".join(lines))
    wrong = report.intent_wrong
    if wrong:
        d = out / "intent-wrong"
        d.mkdir(exist_ok=True)
        for r in wrong:
            (d / f"{r.program.name}.py").write_text(annotated(r))
    print()
    print(f"{n} programs written to {out}/<verdict>/<pattern>/ (smallest per pattern: {out / 'SUMMARY.md'})"
          + (f"; {len(wrong)} where the generator's intent was wrong: {out / 'intent-wrong'}" if wrong else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
