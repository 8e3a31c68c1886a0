"""The static engine on the revealed batches (``../shared/revealed/<batch>/``), scored as
``shared/tools/score.py`` scores them.

A revealed batch was held back to measure the engine on code it had never seen, then opened.
The bar (issue "graph lifetime in real programs"): at least 95 % of the hazards found at a
cause line, at most one extra finding, and no correct file (``ok``, the ``_fixed`` twins
included) flagged. Where the batches live: ``$GRADWARDEN_REVEALED`` or ``<repo>/../shared/revealed``;
a missing folder is a failure, not a skip.
"""
from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path
from typing import List

import pytest

from case_support import REPO_ROOT, Case, load_cases

MIN_RECALL = 0.95
MAX_EXTRA = 1


def revealed_root() -> Path:
    override = os.environ.get("GRADWARDEN_REVEALED")
    return Path(override).expanduser().resolve() if override else REPO_ROOT.parent / "shared" / "revealed"


def _batches() -> List[Path]:
    root = revealed_root()
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


@pytest.mark.parametrize("batch", _batches() or [None], ids=lambda p: p.name if p else "revealed-missing")
def test_revealed_batch_static_score(batch) -> None:
    if batch is None:
        pytest.fail(f"no revealed batch under {revealed_root()} (set $GRADWARDEN_REVEALED)", pytrace=False)
    from gradwarden.engine.analyze import analyze_source
    from gradwarden.engine.diagnostic import Severity

    cases: List[Case] = load_cases(batch)
    assert cases, f"no case with an `# expect:` header under {batch}"
    fam = defaultdict(lambda: [0, 0])
    extra, flagged_ok, report = 0, [], []
    for c in cases:
        loud = [d for d in analyze_source(c.path.read_bytes(), str(c.path)) if d.severity <= Severity.WARNING]
        rows = {d.span.row for d in loud}
        if c.is_hazard:
            fam[c.family][1] += 1
            hit = bool(rows & c.cause_lines)
            fam[c.family][0] += hit
            more = sorted(rows - c.cause_lines - c.neutral_lines)
            extra += len(more)
            if not hit or more:
                report.append(f"{'MISS' if not hit else 'EXTRA'} {c.path.name}: want {sorted(c.cause_lines)} "
                              f"got {sorted(rows)}")
        elif loud:
            flagged_ok.append(c.path.name)
            report.append(f"FALSE {c.path.name}: {sorted((d.span.row, d.code) for d in loud)}")
    hits = sum(h for h, _ in fam.values())
    total = sum(t for _, t in fam.values())
    summary = " ".join(f"{k}:{h}/{t}" for k, (h, t) in sorted(fam.items()))
    text = f"{batch.name}: {hits}/{total} hazards found ({summary}), {extra} extra, " \
           f"{len(flagged_ok)} correct files flagged\n" + "\n".join(report)
    print("\n" + text)
    assert hits >= MIN_RECALL * total and extra <= MAX_EXTRA and not flagged_ok, text
