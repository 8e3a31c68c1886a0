"""Variant cases in ``tests/data/variants``: labels proven by execution, then the engine's score.

The variants are self-contained torch programs modelled on real reports (GitHub issues, forum
threads, popular model code), written to measure how the static engine generalises beyond the
shared cases. Each has the shared-case header (``# family/expect/line/fix``); every hazard
``X.py`` has an ``X_fixed.py`` twin labelled ``ok``; the ``G*`` files are safe look-alikes.

1. ``test_variant_headers``: header sanity (families, line numbers, twins).
2. ``test_variant_labels``: every label is proven by running the file under torch:
   ``error`` = exits non-zero with a RuntimeError (or the class named by ``# raises:``; the
   traceback passes through a cause line
   or the backward line), ``silent`` = exits 0 and prints MISMATCH, ``ok`` = exits 0 without
   MISMATCH. ``tests/torch_runner.py`` runs them (one torch import, a forked child per case, one
   per core) unless a recorded proof of the same file content, torch and runner agrees with the
   label (``tests/data/proofs.json``, suite ``variants``); a case whose warm outcome contradicts
   its label is re-run as a fresh ``python CASE.py`` and judged on that run alone.
   ``GRADWARDEN_CASE_RUN=fresh`` runs every case fresh.
3. ``test_variant_static_score``: the static engine (``analyze_source``) on every file, scored
   exactly like ``shared/tools/score.py``: a hit is an error/warning diagnostic on a cause line;
   a false alarm is an error/warning anywhere in an ``ok`` file (twins included) or on a line of
   a hazard file that is neither a cause line nor the backward line. Prints per-family recall
   and every miss / false alarm with its diagnostics; asserts recall >= 90% and <= 2 false alarms
   over the settled batches. A batch written before the engine work it asks for
   (:data:`PENDING_BATCHES`) is scored and printed apart and held to its recorded first-contact
   score (no fewer hits, no more false alarms) until that work lands and removes it from the list.
4. ``test_variant_score_matches_score_py``: the same numbers from ``score.py`` over the CLI.

Run ``python -m pytest tests/test_variants.py -s`` to see the reports.
"""
from __future__ import annotations

import re
import shlex
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import pytest

from case_support import REPO_ROOT, Case, parse_case, scorer_path
from torch_runner import Job, Outcome, prove

VARIANTS_DIR = Path(__file__).resolve().parent / "data" / "variants"
# Batches (tests/data/variants/BATCHES.md): numbers 31-59 (session 1; the engine was developed
# against them), 60-99 (session 2, a held-out check: 29/48 hazards found at first contact, 2 false
# alarms), 100-199 (batch 3, graph lifetime), H01-H33 / C,F,G 200-213 (batches 4 and 5, gradient
# flow: family H), H40-H66 / C204-C206, F202-F203, G214-G231 (batch 6, silent gradients) and H70-H81 /
# C207, G240-G243 (batch 7, silent gradients held out), H82-H93 /
# C208-C209, A101, B101, D123, E111, F204, G244-G248 (batch 8, held out after batch 7), H94-H105 / A102, B102, C210, D124, E112, F205,
# G249-G253 (batch 9, held out after batch 8), H106-H117 / A103, B103, C211, D125, E113, F206, G254-G258
# (batch 10, held out after batch 9: pending), H118-H127 / A104, B104, C212, D126, G259-G262 (batch 11, held out
# after batch 10: pending), H128-H137 / A105, B105, C213, D127, E114, G263-G266 (batch 12, held out after batch 11:
# pending), H138-H147 / A106, B106, D128, F207, G267-G270 (batch 13, held out after batch 12: pending), H148-H157 /
# A107, B107, D129, F208, G271-G274 (batch 14, held out after batch 13: pending), H158-H167 / A108, B108, D130,
# F209, G275-G278 (batch 15, held out after batch 14: pending). The bar
# for held-back cases is 90 %; this floor guards against regressions below it (measured: 93 % overall, 1 false alarm), and the report prints every miss.
MIN_RECALL = 0.90
MAX_FALSE_ALARMS = 2
MIN_HAZARDS_PER_FAMILY = 8  # families A..F
MIN_SAFE_LOOKALIKES = 15  # family G
CASE_TIMEOUT_S = 120
SUITE = "variants"  # its section of tests/data/proofs.json
RECALL_LINE = re.compile(r"^recall (\d+)% \((\d+)/(\d+)\) false_alarms (\d+) cases (\d+)$", re.M)


@dataclass(frozen=True)
class PendingBatch:
    """A batch whose engine work has not landed: its files (by the batch's numbers), and the first-contact
    score recorded in BATCHES.md that the engine must not fall below meanwhile."""

    name: str
    files: "re.Pattern[str]"
    first_contact_hits: int
    first_contact_alarms: int

    def holds(self, case: "Case") -> bool:
        return bool(self.files.match(case.path.name))


# Batch 6 (issue 24, silent gradients: H40-H66, C204-C206, F202-F203, G214-G231) was written and scored
# before the engine work of issue 24 (first contact 4 hits, 3 false alarms) and held here meanwhile; that
# work landed, and the floor applies to it. A batch written before its engine work goes here the same way.
# Batch 7 (H70-H81, C207, G240-G243: silent gradients written after the issue-24 engine work, from other
# programs than batch 6) was held here from its first contact (4/13 hits, 3 false alarms, engine a7ad3e6)
# through the stray-parameter work, GW725 and GW724 (9 hits, 2 false alarms); the overlap test over any
# later dim, hook objects, per-sample losses made in helpers, freezes by a helper and one finding per
# no_grad cause brought it to 13/13 with no false alarm (BATCHES.md), and the settled floor applies to it.
# Batch 8 (H82-H93, C208-C209, A101, B101, D123, E111, F204, G244-G248: written after batch 7 was tuned on,
# from programs no earlier batch uses) was held here from its first contact (9/19 hits, 3 false alarms, engine
# 812114a); hook dicts aliased or copied between calls, lambda hook stores, narrow windows sized from the shape,
# re-wraps in helpers, getattr defaults, modules attached after the optimizer, vector_to_parameters, GW738
# and the square root of an exact zero brought it to 19/19 with no false alarm (BATCHES.md), and the settled
# floor applies to it.
# Batch 9 (H94-H105, A102, B102, C210, D124, E112, F205, G249-G253: written after batches 7 and 8 were tuned
# on, from programs no earlier batch uses) was held here from its first contact (10/18 hits, 3 false alarms,
# engine ab6cc1b; BATCHES.md); vector_norm shapes and Python numbers made in a helper reported where they are
# made, a view of a view made under no_grad, zeroing calls that miss a second optimizer (GW725) and shift
# registers filled by a loop running towards the slots it reads (GW713) and a module's own method decorated
# @torch.no_grad() reported at its decorator (GW722) brought it to 15/18 with no false alarm; C210's
# relabelling (16/18), the zero diagonal of a pairwise self-difference under a division or sqrt (GW720,
# H99) and parameter groups whose filters over named_parameters() leave a parameter out (GW719 at the
# filter, H102) brought it to 18/18 with no false alarm (BATCHES.md), and the settled floor applies to it.
# Batch 10 (H106-H117, A103, B103, C211, D125, E113, F206, G254-G258: written after batches 7, 8 and 9 were
# tuned on, from programs no earlier batch uses) is held here at its first contact (9/18 hits, 2 false alarms,
# engine 870681f; BATCHES.md); straight-through estimators that detach both sides (GW718 at the estimator),
# forward pre-hooks, evaluation helpers that leave the model in eval mode, `p.grad = None` zeroing loops,
# weight_norm after the optimizer and the entropy of a -inf-masked softmax brought it to 15/18 with no
# false alarm.
# Batch 11 (H118-H127, A104, B104, C212, D126, G259-G262: written after batches 7-10 were tuned on, from
# programs no earlier batch uses) is held here at its first contact (11/14 hits, 1 false alarm, engine b0f36dd,
# with H127's label corrected before any engine change; BATCHES.md); GW721 waiting for a read of the slot after
# the overwrite, `m.training = False` read as a mode switch (GW724) and load_state_dict(assign=True) after the
# optimizer (GW719) brought it to 13/14 with no false alarm.
# Batch 12 (H128-H137, A105, B105, C213, D127, E114, G263-G266: written after batches 7-11 were tuned on, from
# programs no earlier batch uses) is held here at its first contact (5/15 hits, 0 false alarms, engine b25a600,
# with the labels of A105 and H136 corrected before any engine change; BATCHES.md); grad mode left off by a
# helper's set_grad_enabled(False) statement (GW701), acos/asin under a where guard at +-1 (GW720), sample()
# where rsample() was needed (GW722) and ParameterDict/ModuleDict items made after the optimizer (GW719)
# brought it to 9/15 with no false alarm.
# Batch 14 (H148-H157, A107, B107, D129, F208, G271-G274: written after batches 7-13 were tuned on, half of the
# H files known kinds in new spellings, half kinds no batch used) is held here at its first contact (8/14 hits,
# 0 false alarms, engine e42bb7e; BATCHES.md); parameters reached only through indices or a mask, ModuleDict.update
# after the optimizer, a custom backward's None for a parameter and losses re-wrapped by torch.tensor(...,
# requires_grad=True) (GW719) and a LambdaLR factor of zero at every step taken (new GW741) brought it to 13/14
# with no false alarm; a ModuleDict's items() read as its known
# children brought batch 13 to 11/14 (H140's dict comprehension of detached outputs, GW722), and the static GW733
# (a recurrent state detached at every step of the loop that builds it, H147) to 12/14.
# Batch 15 (H158-H167, A108, B108, D130, F209, G275-G278: written after batches 7-14 were tuned on, half of the
# H files known kinds in new spellings, half kinds no batch used) is held here at its first contact (9/14 hits,
# 2 findings on other lines, engine 5ccd3a7; BATCHES.md).
PENDING_BATCHES: Tuple[PendingBatch, ...] = (
    PendingBatch("10", re.compile(r"^(H(10[6-9]|11[0-7])|A103|B103|C211|D125|E113|F206|G25[4-8])_"), 15, 0),
    PendingBatch("11", re.compile(r"^(H(11[89]|12[0-7])|A104|B104|C212|D126|G2(59|6[0-2]))_"), 13, 0),
    PendingBatch("12", re.compile(r"^(H(12[89]|13[0-7])|A105|B105|C213|D127|E114|G26[3-6])_"), 11, 0),
    PendingBatch("13", re.compile(r"^(H(13[89]|14[0-7])|A106|B106|D128|F207|G2(6[7-9]|70))_"), 12, 0),
    PendingBatch("14", re.compile(r"^(H(14[89]|15[0-7])|A107|B107|D129|F208|G27[1-4])_"), 13, 0),
    PendingBatch("15", re.compile(r"^(H(15[89]|16[0-7])|A108|B108|D130|F209|G27[5-8])_"), 9, 2),
)


def load_variants() -> List[Case]:
    if not VARIANTS_DIR.is_dir():
        return []
    out = []
    for p in sorted(VARIANTS_DIR.rglob("*.py")):
        case = parse_case(p, VARIANTS_DIR)
        if case is not None:
            out.append(case)
    return out


@pytest.fixture(scope="module")
def variants() -> List[Case]:
    cases = load_variants()
    if not cases:
        pytest.fail(f"no variant case with an `# expect:` header under {VARIANTS_DIR}", pytrace=False)
    return cases


# --- 1. headers ------------------------------------------------------------------------


def test_variant_headers(variants: List[Case]) -> None:
    problems = []
    per_family: Dict[str, int] = defaultdict(int)
    names = {c.path.name for c in variants}
    for c in variants:
        n_lines = len(c.path.read_text(encoding="utf-8").splitlines())
        if c.expect not in ("error", "silent", "ok"):
            problems.append(f"{c}: unknown expect {c.expect!r}")
        if c.family not in tuple("ABCDEFGH"):
            problems.append(f"{c}: family {c.family!r} is not A..H")
        for key in ("source", "fix"):
            if not c.meta.get(key):
                problems.append(f"{c}: missing `# {key}:`")
        if not c.cause_lines:
            problems.append(f"{c}: missing `# line: N`")
        for n in sorted(c.cause_lines | c.neutral_lines):
            if not 1 <= n <= n_lines:
                problems.append(f"{c}: `# line:` names line {n}, file has {n_lines}")
        if c.is_hazard:
            per_family[c.family] += 1
            if c.family == "G":
                problems.append(f"{c}: family G (safe look-alike) must be `expect: ok`")
            twin = c.path.stem + "_fixed.py"
            if twin not in names:
                problems.append(f"{c}: hazard without its {twin} twin")
        elif c.path.name.endswith("_fixed.py"):
            if c.path.name.replace("_fixed.py", ".py") not in names:
                problems.append(f"{c}: fixed twin without its hazard file")
        else:
            if c.family != "G":
                problems.append(f"{c}: an ok file that is not a _fixed twin must be family G")
            per_family["G"] += 1
        if c.path.name.endswith("_fixed.py") and c.expect != "ok":
            problems.append(f"{c}: a _fixed twin must be `expect: ok`")
    for fam in "ABCDEF":
        if per_family[fam] < MIN_HAZARDS_PER_FAMILY:
            problems.append(f"family {fam}: {per_family[fam]} hazards, want >= {MIN_HAZARDS_PER_FAMILY}")
    if per_family["G"] < MIN_SAFE_LOOKALIKES:
        problems.append(f"family G: {per_family['G']} look-alikes, want >= {MIN_SAFE_LOOKALIKES}")
    assert not problems, "\n".join(problems)


# --- 2. labels by execution -------------------------------------------------------------


def label_problem(case: Case, res: Outcome) -> Optional[str]:
    """None when torch's behaviour matches the label, else what is wrong."""
    s = res.summary
    if s.get("rc") is None:
        return "timed out"
    last = s.get("exc", "")
    if case.expect == "error":
        # `# raises: ValueError` names another exception class (torch raises ValueError for
        # "can't optimize a non-leaf Tensor"); RuntimeError otherwise
        want = (case.meta.get("raises") or "RuntimeError").split()[0]
        if s["rc"] == 0:
            return f"exited 0, want a {want}"
        if not last.startswith(want):
            return f"the uncaught exception is not a {want}: {last!r}"
        frames = s.get("frames", [])
        if not set(frames) & (case.cause_lines | case.neutral_lines):
            return (f"raised, but no traceback frame of the case is on a cause/backward line "
                    f"(frames {frames}, cause {sorted(case.cause_lines)}, backward {sorted(case.neutral_lines)})")
        return None
    if s["rc"] != 0:
        return f"exit code {s['rc']}, want 0 ({last!r})"
    if case.expect == "silent":
        return None if s.get("mismatch") else "exited 0 without printing MISMATCH"
    if s.get("mismatch") or s.get("mismatch_err"):
        return "printed MISMATCH, want ok"
    return None


def test_variant_labels(variants: List[Case], tmp_path) -> None:
    jobs = [Job(c.rel, c.path, timeout=CASE_TIMEOUT_S) for c in variants]
    judges = {c.rel: (lambda o, c=c: label_problem(c, o) is None) for c in variants}
    results, prover = prove(jobs, None, SUITE, tmp_path, judges=judges)
    failures = []
    for case in variants:
        res = results[case.rel]
        problem = label_problem(case, res)
        if problem:
            failures.append(f"{case} (family {case.family}, expect {case.expect}): {problem}\n    {res.describe()}")
    counts = defaultdict(int)
    for c in variants:
        counts[c.expect] += 1
    print(f"\n{prover.summary_line('variant labels')} ({dict(counts)})")
    assert not failures, f"{len(failures)} label(s) not confirmed by torch:\n" + "\n".join(failures)


# --- 3. the static engine's score -------------------------------------------------------


def _loud(diag) -> bool:
    """score.py's ``loud``: severity error or warning (LSP numbers 1 and 2)."""
    sev = getattr(diag, "severity", 1)
    try:
        return int(sev) in (1, 2)
    except (TypeError, ValueError):
        return str(sev).lower() in ("error", "warning")


def _show(diags) -> str:
    if not diags:
        return "      (no error/warning diagnostic)"
    rows = []
    for d in sorted(diags, key=lambda d: (d.span.row, d.span.column)):
        sev = getattr(d.severity, "name", str(d.severity)).lower()
        rows.append(f"      line {d.span.row}: {d.code} [{sev}] {d.message}")
    return "\n".join(rows)


@dataclass
class Score:
    hits: int
    total: int
    alarms: int
    report: str

    @property
    def recall(self) -> float:
        return self.hits / self.total if self.total else 0.0


def score_variants(cases: List[Case], analyze: Callable) -> Score:
    fam: Dict[str, List[int]] = defaultdict(lambda: [0, 0])
    alarms = ok_files = ok_alarms = fixed_files = fixed_alarms = 0
    details: List[str] = []
    for c in cases:
        diags = [d for d in analyze(c.path.read_bytes(), str(c.path)) if _loud(d)]
        rows = {d.span.row for d in diags}
        src = c.path.read_text(encoding="utf-8").splitlines()

        def at(rows_) -> str:
            return "; ".join(f"{r}: `{src[r - 1].strip()}`" for r in sorted(rows_) if 0 < r <= len(src))

        if c.is_hazard:
            fam[c.family][1] += 1
            hit = bool(rows & c.cause_lines)
            fam[c.family][0] += hit
            extra = sorted(rows - c.cause_lines - c.neutral_lines)
            alarms += len(extra)
            if not hit:
                details.append(f"MISS {c.path.name} (family {c.family}, {c.expect}): want {at(c.cause_lines)}\n"
                               f"    {c.meta.get('source', '')}\n{_show(diags)}")
            if extra:
                details.append(f"EXTRA {c.path.name} (family {c.family}): false alarm on {at(extra)}\n{_show(diags)}")
        else:
            ok_files += 1
            if c.path.name.endswith("_fixed.py"):
                fixed_files += 1
                fixed_alarms += bool(diags)
            if diags:
                ok_alarms += 1
                alarms += len(diags)
                details.append(f"FALSE {c.path.name} (family {c.family}, ok): {at(rows)}\n"
                               f"    {c.meta.get('source', '')}\n{_show(diags)}")
    hits = sum(h for h, _ in fam.values())
    total = sum(t for _, t in fam.values())
    lines = [f"family {k}: {fam[k][0]}/{fam[k][1]}" for k in sorted(fam)]
    lines.append(f"fixed versions still flagged: {fixed_alarms}/{fixed_files}")
    lines.append(f"ok files with a false alarm: {ok_alarms}/{ok_files}")
    recall = 100.0 * hits / total if total else 0.0
    lines.append(f"recall {recall:.0f}% ({hits}/{total}) false_alarms {alarms} cases {len(cases)}")
    return Score(hits, total, alarms, "\n".join(lines + details))


def test_variant_static_score(variants: List[Case]) -> None:
    from gradwarden.engine.analyze import analyze_source  # late: an unfinished engine fails here only

    pending = {b.name: [c for c in variants if b.holds(c)] for b in PENDING_BATCHES}
    held = {c.rel for cases in pending.values() for c in cases}
    settled = [c for c in variants if c.rel not in held]
    score = score_variants(settled, analyze_source)
    print(f"\n=== static engine on {VARIANTS_DIR.relative_to(REPO_ROOT)} (settled batches) ===\n{score.report}")
    problems = []
    if not (score.recall >= MIN_RECALL and score.alarms <= MAX_FALSE_ALARMS):
        problems.append(f"settled batches: recall {score.hits}/{score.total} = {score.recall:.0%} (want >= "
                        f"{MIN_RECALL:.0%}), false alarms {score.alarms} (want <= {MAX_FALSE_ALARMS})\n{score.report}")
    for batch in PENDING_BATCHES:
        cases = pending[batch.name]
        if not cases:
            problems.append(f"pending batch {batch.name}: no file matches {batch.files.pattern}")
            continue
        s = score_variants(cases, analyze_source)
        print(f"\n=== pending batch {batch.name}: {len(cases)} files, first contact {batch.first_contact_hits} hits, "
              f"{batch.first_contact_alarms} false alarms ===\n{s.report}")
        if s.hits < batch.first_contact_hits or s.alarms > batch.first_contact_alarms:
            problems.append(f"pending batch {batch.name}: {s.hits}/{s.total} hits, {s.alarms} false alarms; its "
                            f"first contact was {batch.first_contact_hits} hits, {batch.first_contact_alarms} false "
                            f"alarms (a regression)\n{s.report}")
    assert not problems, "\n\n".join(problems)


# --- 4. parity with shared/tools/score.py -------------------------------------------------


def _parse_recall(text: str) -> Optional[Tuple[int, int, int, int]]:
    m = RECALL_LINE.search(text)
    return (int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5))) if m else None


def test_variant_score_matches_score_py(variants: List[Case]) -> None:
    """score.py over the CLI must report the same hits/total/false alarms as the in-process
    scoring above (skipped when the shared scorer is not beside the repository)."""
    scorer = scorer_path()
    if not scorer.is_file():
        pytest.skip(f"shared scorer not found at {scorer}")
    from gradwarden.engine.analyze import analyze_source

    ours = score_variants(variants, analyze_source)
    cmd = f"{shlex.quote(sys.executable)} -m gradwarden check --output-format json"
    proc = subprocess.run([sys.executable, str(scorer), str(VARIANTS_DIR), "--cmd", cmd, "--verbose"],
                          cwd=str(REPO_ROOT), capture_output=True, text=True, timeout=600)
    print(f"\n=== score.py over `{cmd}` on the variants ===\n{proc.stdout}")
    assert proc.returncode == 0, f"score.py failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr[-2000:]}"
    theirs = _parse_recall(proc.stdout)
    assert theirs is not None, f"score.py printed no recall line:\n{proc.stdout}"
    assert theirs == (ours.hits, ours.total, ours.alarms, len(variants)), (
        f"score.py says hits/total/false_alarms/cases = {theirs}, in-process scoring says "
        f"{(ours.hits, ours.total, ours.alarms, len(variants))}")
