#!/usr/bin/env python3
"""Could the text report's ``[*]`` be read from the finding instead of planned? Over the
corpora (the labelled cases, every revealed batch, the variants, the examples, every rule's
VALID/INVALID snippets), each diagnostic that carries a fix suggestion gets two flags:

- **planned**: what ``check`` prints today (``fixability.index_fixes``: the ``--fix`` run, then
  the ``--unsafe-fixes`` run, each fix realised with libcst on the text and kept only when
  the re-analysis no longer reports its finding);
- **from the finding**: ``[*]`` (safe) when the finding offers a safe fix, ``[*]`` with
  ``--unsafe-fixes`` when it offers only unsafe ones (its first fix's declared kind).

Printed per fix kind: the findings, how many flags differ, and why (the realiser declined the
fix on this text, or the fix was realised but reverted because the re-analysis still reported
the finding, or the safe run failed where the unsafe one fixed it).

    python benchmarks/fix_flags.py [--show N]
"""
from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "server"))

from gradwarden.config import default_settings  # noqa: E402
from gradwarden.engine.front.source import decode_source  # noqa: E402
from gradwarden.fixability import index_fixes  # noqa: E402
from gradwarden.fixes import candidate_fixes, choose_fix  # noqa: E402
from gradwarden.rules import all_rules  # noqa: E402
from gradwarden.runner import diagnose  # noqa: E402


def corpus_files(scratch: Path):
    shared = REPO.parent / "shared"
    for root in [shared / "cases", *sorted((shared / "revealed").glob("*")), REPO / "tests/data/variants",
                 REPO / "examples"]:
        yield from sorted(root.rglob("*.py"))
    for rule in all_rules():
        for kind in ("INVALID", "VALID"):
            for i, snippet in enumerate(getattr(rule, kind)):
                path = scratch / f"{rule.code}_{kind.lower()}_{i}.py"
                path.write_text(textwrap.dedent(snippet).strip("\n") + "\n", encoding="utf-8")
                yield path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--show", type=int, default=5, help="differing findings to print")
    args = ap.parse_args()
    settings = default_settings()
    total = collections.Counter()
    why = collections.defaultdict(collections.Counter)
    shown = []
    with tempfile.TemporaryDirectory(prefix="gw-fix-flags-") as tmp:
        for path in corpus_files(Path(tmp)):
            text = decode_source(path.read_bytes())[0]
            try:
                diags = diagnose(text, str(path), settings)
            except Exception:  # noqa: BLE001 - a file the engine cannot analyse has no flags
                continue
            if not any(d.fixes for d in diags):
                continue
            index = index_fixes(diags, lambda _name: text, lambda t, name: diagnose(t, name, settings), edits=False)
            for d in diags:
                if not d.fixes:
                    continue
                chosen = index.choice(d)
                planned = None if chosen is None else ("safe" if chosen.safe else "unsafe")
                declared = "safe" if candidate_fixes(d, False) else "unsafe"
                kind = candidate_fixes(d, True)[0].kind
                total[kind] += 1
                if planned == declared:
                    continue
                if choose_fix(text, d, True) is None:
                    reason = "realiser declined"
                elif planned is None:
                    reason = "reverted by re-analysis"
                else:
                    reason = f"{declared} declared, {planned} planned"
                why[kind][reason] += 1
                if len(shown) < args.show:
                    shown.append(f"  {path.name}:{d.span.row} {d.code} {kind}: {reason}")
    differ = sum(sum(c.values()) for c in why.values())
    print(f"{sum(total.values())} findings with a fix suggestion; the flag read from the finding differs "
          f"from the planned one on {differ}")
    print(f"{'first fix kind':<24}{'findings':>9}{'differ':>8}  why")
    for kind, n in sorted(total.items(), key=lambda kv: (-sum(why[kv[0]].values()), -kv[1])):
        reasons = ", ".join(f"{r} {c}" for r, c in why[kind].most_common())
        print(f"{kind:<24}{n:>9}{sum(why[kind].values()):>8}  {reasons}")
    if shown:
        print("first differences:")
        print("\n".join(shown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
