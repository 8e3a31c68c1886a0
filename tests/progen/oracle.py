"""torch is the oracle: run generated programs under torch and under the static engine, compare.

torch's outcome of a program is classified by its message (:data:`ERROR_CLASSES`): the class,
the line it raised at (the last traceback frame in the program), and the warnings torch printed
(``.grad`` of a non-leaf). Silent hazards carry a self-check that prints ``MISMATCH``.

The engine's outcome is ``analyze_source(text, filename)``: an error-severity diagnostic
predicts a raise; error or warning are "loud" (score.py's definition of a finding).

Verdicts (:func:`verdict`):

- ``agree``: raised and an error diagnostic; or clean and nothing loud; or warned/silent and
  something loud;
- ``missed``: raised, no error diagnostic (``warning_only`` says whether a warning was given);
- ``false-error``: ran clean, an error diagnostic (the engine predicts a raise that does not come);
- ``false-warning``: ran clean, a warning diagnostic (no error);
- ``missed-warning`` / ``missed-silent``: torch warned / the self-check failed, nothing loud;
- ``unexpected``: the program failed for a reason outside the vocabulary (a generator bug) or
  timed out: not scored.

"error vs clean" disagreements are ``missed`` and ``false-error``; the tests require none. For the
``silent`` family (issue 24), whose hazards mostly raise nothing, ``missed-silent`` and
``false-warning`` are disagreements too (:data:`SILENT_DISAGREEMENTS`, :func:`disagreement_kinds`).
"""
from __future__ import annotations

import os

import sys
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from .builder import Program

# (class, exception type, a piece of torch's message); first match wins.
ERROR_CLASSES: Sequence[Tuple[str, str, str]] = (
    ("freed-graph", "RuntimeError", "Trying to backward through the graph a second time"),
    ("version-counter", "RuntimeError", "has been modified by an inplace operation"),
    ("leaf-view-inplace", "RuntimeError", "a view of a leaf Variable that requires grad is being used in an in-place"),
    ("leaf-inplace", "RuntimeError", "a leaf Variable that requires grad is being used in an in-place"),
    ("no-grad-fn", "RuntimeError", "does not require grad and does not have a grad_fn"),
    ("non-scalar-backward", "RuntimeError", "grad can be implicitly created only for scalar outputs"),
    ("nonleaf-requires-grad", "RuntimeError", "you can only change requires_grad flags of leaf variables"),
    ("optimize-nonleaf", "ValueError", "can't optimize a non-leaf Tensor"),
    ("unused-input", "RuntimeError", "appears to not have been used in the graph"),
    ("nograd-view-inplace", "RuntimeError", "A view was created in no_grad mode and is being modified inplace"),
    ("detach-view-inplace", "RuntimeError", "Can't detach views in-place"),
    ("overlap-write", "RuntimeError", "some elements of the input tensor and the written-to tensor refer to a single"),
    ("expanded-write", "RuntimeError", "more than one element of the written-to tensor refers to a single memory"),
    ("multi-output-view", "RuntimeError", "is a view and is being modified inplace"),
    ("view-of-modified-base", "RuntimeError", "its base or another view of its base has been modified inplace"),
)
WARNING_CLASSES: Sequence[Tuple[str, str]] = (
    ("nonleaf-grad", "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"),
)
# A TypeError right after reading the None .grad of a non-leaf (``w -= lr * w.grad``).
NONE_GRAD = "none-grad"


@dataclass
class TorchResult:
    cls: str  # an ERROR_CLASSES class, none-grad, clean, warn:<class>, silent, other:<type>, timeout
    line: Optional[int]  # where it raised (last frame in the program), or the first warning's line
    message: str  # the exception line or the warning text
    warnings: Tuple[str, ...] = ()

    @property
    def raised(self) -> bool:
        return self.cls in RAISING

    @property
    def scored(self) -> bool:
        return not (self.cls.startswith("other:") or self.cls == "timeout")


RAISING = {c for c, _, _ in ERROR_CLASSES} | {NONE_GRAD}


def classify(summary: dict) -> TorchResult:
    """torch's outcome (a ``torch_runner`` summary) as a class."""
    warns = tuple(sorted({cls for cls, text in WARNING_CLASSES
                          for w in summary.get("warnings", []) if text in w[2]}))
    warn_line = next((w[0] for w in summary.get("warnings", []) if w[0] and
                      any(text in w[2] for _, text in WARNING_CLASSES)), None)
    rc = summary.get("rc")
    if rc is None:
        return TorchResult("timeout", None, "timed out", warns)
    frames = summary.get("frames") or []
    exc = summary.get("exc") or ""
    if rc != 0:
        line = frames[-1] if frames else None
        etype = exc.split(":", 1)[0].strip().rsplit(".", 1)[-1]
        for cls, typ, text in ERROR_CLASSES:
            if etype == typ and text in exc:
                return TorchResult(cls, line, exc, warns)
        if etype == "TypeError" and "NoneType" in exc and "nonleaf-grad" in warns:
            return TorchResult(NONE_GRAD, line, exc, warns)
        return TorchResult(f"other:{etype or '?'}", line, exc, warns)
    if summary.get("mismatch"):
        return TorchResult("silent", None, "printed MISMATCH", warns)
    if warns:
        return TorchResult(f"warn:{warns[0]}", warn_line, "warned", warns)
    return TorchResult("clean", None, "", warns)


def intent_matches(intent: str, result: TorchResult) -> bool:
    return intent == result.cls


# --- the engine --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Diag:
    code: str
    severity: int  # 1 error, 2 warning, 3 information, 4 hint
    row: int
    message: str


def _analyze(args: Tuple[str, str]) -> Tuple[List[Diag], str]:
    text, filename = args
    try:
        from gradwarden.engine.analyze import analyze_source

        diags = analyze_source(text, filename)
    except Exception as exc:  # noqa: BLE001 - an engine crash is a finding, reported as such
        return [], f"{type(exc).__name__}: {exc}"
    return [Diag(d.code, int(d.severity), d.span.row, d.message) for d in diags], ""


def analyze_all(programs: Sequence[Tuple[str, str]], jobs: Optional[int] = None) -> List[Tuple[List[Diag], str]]:
    """The engine on ``(text, filename)`` pairs, in worker processes (one per core)."""
    jobs = jobs or max(1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 2, 8))
    if jobs == 1 or len(programs) < 8:
        return [_analyze(p) for p in programs]
    import multiprocessing

    ctx = multiprocessing.get_context("fork") if hasattr(os, "fork") else None
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        return list(pool.map(_analyze, programs, chunksize=8))


# --- comparing ---------------------------------------------------------------------------------


@dataclass
class Record:
    program: Program
    path: Path
    torch: TorchResult
    diags: List[Diag]
    engine_crash: str = ""
    verdict: str = ""
    line_ok: Optional[bool] = None  # raised and flagged: an error diagnostic on a cause line or the raise line
    at_cause: Optional[bool] = None  # ... on a planted cause line

    @property
    def errors(self) -> List[Diag]:
        return [d for d in self.diags if d.severity == 1]

    @property
    def loud(self) -> List[Diag]:
        return [d for d in self.diags if d.severity in (1, 2)]


DISAGREEMENTS = ("missed", "false-error")
# the silent family's hazards are warnings by nature: a silent program with nothing loud, or a clean one
# with a warning, disagrees with the run as much as a missed raise
SILENT_DISAGREEMENTS = DISAGREEMENTS + ("missed-silent", "false-warning")


def disagreement_kinds(family: str) -> Tuple[str, ...]:
    return SILENT_DISAGREEMENTS if family == "silent" else DISAGREEMENTS


def verdict(rec: Record) -> str:
    t = rec.torch
    if not t.scored:
        return "unexpected"
    if rec.engine_crash:
        return "engine-crash"
    if t.raised:
        if not rec.errors:
            return "missed"
        rows = {d.row for d in rec.errors}
        rec.at_cause = bool(rows & set(rec.program.cause_lines))
        rec.line_ok = rec.at_cause or (t.line in rows)
        return "agree"
    if t.cls == "clean":
        if rec.errors:
            return "false-error"
        if rec.loud:
            return "false-warning"
        return "agree"
    # warned or silent: something loud expected
    if rec.loud:
        rows = {d.row for d in rec.loud}
        rec.at_cause = bool(rows & set(rec.program.cause_lines))
        rec.line_ok = rec.at_cause or (t.line in rows if t.line else False)
        return "agree"
    return "missed-warning" if t.cls.startswith("warn:") else "missed-silent"


@dataclass
class Report:
    records: List[Record]
    reused: int = 0
    ran: int = 0
    reruns: List[str] = field(default_factory=list)

    def by_verdict(self, *kinds: str) -> List[Record]:
        return [r for r in self.records if r.verdict in kinds]

    @property
    def disagreements(self) -> List[Record]:
        """Every record that disagrees with torch under its family's definition (:func:`disagreement_kinds`)."""
        return [r for r in self.records if r.verdict in disagreement_kinds(r.program.family)]

    @property
    def intent_wrong(self) -> List[Record]:
        return [r for r in self.records if not intent_matches(r.program.intent, r.torch)]

    def table(self) -> str:
        rows = []
        per: Dict[str, List[Record]] = defaultdict(list)
        for r in self.records:
            per[r.torch.cls].append(r)
        head = (f"{'torch outcome':<26}{'programs':>9}{'flagged':>9}{'warn only':>10}{'missed':>8}"
                f"{'line ok':>9}{'at cause':>9}")
        rows.append(head)
        rows.append("-" * len(head))
        raising = sorted(c for c in per if c in RAISING)
        for cls in raising:
            rs = per[cls]
            flagged = [r for r in rs if r.verdict == "agree"]
            warn_only = [r for r in rs if r.verdict == "missed" and r.loud]
            missed = [r for r in rs if r.verdict == "missed"]
            rows.append(f"{'raises ' + cls:<26}{len(rs):>9}{len(flagged):>9}{len(warn_only):>10}{len(missed):>8}"
                        f"{sum(bool(r.line_ok) for r in flagged):>9}{sum(bool(r.at_cause) for r in flagged):>9}")
        for cls in sorted(c for c in per if c.startswith("warn:") or c == "silent"):
            rs = per[cls]
            flagged = [r for r in rs if r.verdict == "agree"]
            rows.append(f"{cls:<26}{len(rs):>9}{len(flagged):>9}{'':>10}{len(rs) - len(flagged):>8}"
                        f"{sum(bool(r.line_ok) for r in flagged):>9}{sum(bool(r.at_cause) for r in flagged):>9}")
        rows.append("")
        clean = per.get("clean", [])
        fe = sum(r.verdict == "false-error" for r in clean)
        fw = sum(r.verdict == "false-warning" for r in clean)
        rows.append(f"{'runs clean':<26}{len(clean):>9}  false alarms: {fe} error, {fw} warning only")
        other = [r for r in self.records if not r.torch.scored]
        crashes = self.by_verdict("engine-crash")
        if other:
            kinds = Counter(r.torch.cls for r in other)
            rows.append(f"not scored (outside the vocabulary: generator bug or time-out): {len(other)} {dict(kinds)}")
        if crashes:
            rows.append(f"engine crashed: {len(crashes)}")
        raised = [r for r in self.records if r.torch.raised]
        flagged = [r for r in raised if r.verdict == "agree"]
        rows.append("")
        rows.append(f"error vs clean: {len(raised)} raise, {len(flagged)} flagged "
                    f"({100.0 * len(flagged) / len(raised) if raised else 100.0:.1f}%), "
                    f"{len(self.by_verdict('missed'))} missed; {len(clean)} clean, {fe} flagged as errors; "
                    f"disagreements {len(self.by_verdict(*DISAGREEMENTS))}")
        silent = [r for r in self.records if r.program.family == "silent"]
        if silent:
            ms = sum(r.verdict == "missed-silent" for r in silent)
            fw = sum(r.verdict == "false-warning" for r in silent)
            rows.append(f"silent family: {sum(r.torch.cls == 'silent' for r in silent)} silent, {ms} with nothing "
                        f"loud; {fw} clean with a warning; disagreements (raise, silent and false alarms) "
                        f"{sum(r.verdict in SILENT_DISAGREEMENTS for r in silent)}")
        wrong = self.intent_wrong
        rows.append(f"oracle check: the generator's intent differs from torch's outcome in {len(wrong)} of "
                    f"{len(self.records)} programs"
                    + (": " + ", ".join(f"{k} x{v}" for k, v in Counter(
                        f"{r.program.pattern}/{r.program.variant}: meant {r.program.intent}, got {r.torch.cls}"
                        for r in wrong).most_common(12)) if wrong else ""))
        return "\n".join(rows)

    def class_table(self) -> str:
        """Per generator class (family/pattern): the programs the generator meant as hazards and as clean
        look-alikes, what torch did, and how the engine fared: hazards found (an error for a raise,
        anything loud for a silent one) and found on a planted line, missed, clean programs flagged."""
        per: Dict[Tuple[str, str], List[Record]] = defaultdict(list)
        for r in self.records:
            per[(r.program.family, r.program.pattern)].append(r)
        head = (f"{'class':<30}{'programs':>9}{'hazards':>8}{'found':>7}{'at line':>8}{'missed':>7}"
                f"{'clean':>7}{'flagged':>8}  torch outcomes")
        rows = [head, "-" * (len(head) + 16)]
        tot = Counter()
        for (fam, pat), rs in sorted(per.items()):
            hazards = [r for r in rs if r.torch.scored and r.torch.cls != "clean"]
            clean = [r for r in rs if r.torch.cls == "clean"]
            found = [r for r in hazards if r.verdict == "agree"]
            at_line = sum(bool(r.line_ok) for r in found)
            missed = len(hazards) - len(found)
            flagged = sum(r.verdict in ("false-error", "false-warning") for r in clean)
            outcomes = ", ".join(f"{k} {v}" for k, v in sorted(Counter(r.torch.cls for r in rs).items()))
            rows.append(f"{fam + '/' + pat:<30}{len(rs):>9}{len(hazards):>8}{len(found):>7}{at_line:>8}{missed:>7}"
                        f"{len(clean):>7}{flagged:>8}  {outcomes}")
            tot.update(programs=len(rs), hazards=len(hazards), found=len(found), at_line=at_line, missed=missed,
                       clean=len(clean), flagged=flagged)
        rows.append(f"{'total':<30}{tot['programs']:>9}{tot['hazards']:>8}{tot['found']:>7}{tot['at_line']:>8}"
                    f"{tot['missed']:>7}{tot['clean']:>7}{tot['flagged']:>8}")
        return "\n".join(rows)

    def patterns(self) -> str:
        """Per pattern/variant: disagreements, false warnings, and programs flagged on another line."""
        c = Counter((r.verdict, r.program.family, r.program.pattern, r.program.variant, r.torch.cls)
                    for r in self.records if r.verdict not in ("agree",))
        # agreeing on "raises", but no error diagnostic on a planted line or on torch's raise line
        c.update(("flagged, other line", r.program.family, r.program.pattern, r.program.variant, r.torch.cls)
                 for r in self.records if r.verdict == "agree" and r.line_ok is False)
        lines = [f"  {n:>4}  {v:<20} {fam}/{pat}/{var}  (torch: {cls})" for (v, fam, pat, var, cls), n in
                 sorted(c.items(), key=lambda kv: (kv[0][0], -kv[1], kv[0][2]))]
        return "\n".join(lines) if lines else "  (none)"


def describe(rec: Record) -> str:
    t = rec.torch
    where = f" at line {t.line}" if t.line else ""
    engine = "; ".join(f"{d.code}[{'EWIH'[d.severity - 1]}]@{d.row}" for d in sorted(rec.diags, key=lambda d: d.row))
    return (f"{rec.program.name} ({rec.program.frame} frame): torch {t.cls}{where}"
            f" ({t.message[:120]}); engine: {engine or 'nothing'}; planted at {list(rec.program.cause_lines)}"
            + (f"; engine crashed: {rec.engine_crash}" if rec.engine_crash else ""))


def annotated(rec: Record) -> str:
    """The program with what happened appended as comments (line numbers unchanged)."""
    t = rec.torch
    lines = [
        "",
        f"# --- progen: {rec.program.name} (family {rec.program.family}, pattern {rec.program.pattern}, "
        f"variant {rec.program.variant}, frame {rec.program.frame}, seed {rec.program.seed})",
        f"# verdict: {rec.verdict}; intent: {rec.program.intent}; planted at lines {list(rec.program.cause_lines)}",
        f"# torch: {t.cls}" + (f" at line {t.line}" if t.line else "") + (f": {t.message[:300]}" if t.message else ""),
    ]
    for d in sorted(rec.diags, key=lambda d: d.row):
        lines.append(f"# engine: line {d.row} {d.code} [{('error', 'warning', 'information', 'hint')[d.severity - 1]}] "
                     f"{d.message[:200]}")
    if not rec.diags:
        lines.append("# engine: no diagnostic")
    return rec.program.text + "\n".join(lines) + "\n"


def write_disagreements(report: Report, folder: Path, kinds: Iterable[str]) -> int:
    """Every record whose verdict is in ``kinds`` as ``folder/<verdict>/<pattern>/<name>.py``
    (``other-line``: flagged as raising, but on neither a planted line nor torch's raise line)."""
    n = 0
    for rec in report.records:
        kind = "other-line" if rec.verdict == "agree" and rec.line_ok is False else rec.verdict
        if kind not in kinds:
            continue
        d = folder / kind / rec.program.pattern
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{rec.program.name}.py").write_text(annotated(rec))
        n += 1
    return n


# --- the pipeline ------------------------------------------------------------------------------


def run(programs: Sequence[Program], workdir: Path, suite: Optional[str] = None, complete: bool = True,
        timeout: float = 60, proofs_path: Optional[Path] = None) -> Report:
    """Write the programs, run them under torch (``torch_runner.prove``: warm, parallel; a warm
    outcome that differs from the generator's intent is re-run fresh and decided by that run;
    recorded proofs of ``suite`` reused), analyze them with the engine, compare."""
    here = Path(__file__).resolve().parents[1]
    if str(here) not in sys.path:
        sys.path.insert(0, str(here))
    from torch_runner import Job, prove

    src = workdir / "programs"
    src.mkdir(parents=True, exist_ok=True)
    paths: Dict[str, Path] = {}
    for p in programs:
        path = src / f"{p.name}.py"
        path.write_text(p.text)
        paths[p.name] = path
    jobs = [Job(p.name, paths[p.name], timeout=timeout) for p in programs]
    judges = {p.name: (lambda o, p=p: intent_matches(p.intent, classify(o.summary))) for p in programs}
    results, prover = prove(jobs, None, suite, workdir, judges=judges, complete=complete, proofs_path=proofs_path)
    engine = analyze_all([(p.text, str(paths[p.name])) for p in programs])
    records = []
    for p, (diags, crash) in zip(programs, engine):
        rec = Record(p, paths[p.name], classify(results[p.name].summary), diags, crash)
        rec.verdict = verdict(rec)
        records.append(rec)
    return Report(records, reused=len(jobs) - len(prover.ran), ran=len(prover.ran), reruns=list(prover.reruns))


def smallest_per_pattern(records: Sequence[Record]) -> List[Record]:
    """One record per (verdict, pattern, variant, torch class): the one with the fewest lines."""
    best: Dict[Tuple[str, str, str, str], Record] = {}
    for r in records:
        key = (r.verdict, r.program.pattern, r.program.variant, r.torch.cls)
        if key not in best or len(r.program.text.splitlines()) < len(best[key].program.text.splitlines()):
            best[key] = r
    return [best[k] for k in sorted(best)]


