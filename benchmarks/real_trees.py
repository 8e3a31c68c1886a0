#!/usr/bin/env python3
"""Run ``gradwarden check`` over real, correct libraries; list and judge every finding.

    python benchmarks/real_trees.py [--trees all|new|old|NAME,...] [-j N] [--json OUT]
                                    [--show-info] [--baseline-rev REV] [--precision OUT.md]

Real libraries train: an error or warning there is either a real hazard (on a path the
library rarely takes) or a false alarm. Every error and warning is printed as
``tree/path:line CODE (severity) message``, then the number of information notes per rule
(``--show-info`` prints each of them too). Each finding is looked up in the verdicts file,
``benchmarks/real_trees_known.txt`` (one line per finding: where, the rule, the verdict and why;
see its header): ``real`` (a hazard, with a reproduction under torch in
``benchmarks/precision/repro/``), ``arguable`` (information only: worth a look on this code),
``unreachable`` (the hazard is in the code, but no caller can take that path), ``false`` (the
finding is wrong: a defect of gradwarden, listed so that the table of an older engine counts it).
A finding without a verdict is printed as ``NEW``; the run exits 1 when an error or warning is
``NEW`` or ``false``. Crashes (an internal error on a file, exit code 2) are listed under PROBLEMS.

``--precision benchmarks/PRECISION.md`` writes the precision table (per library: findings by
severity and by verdict; per rule: the information notes and how many are worth reading; every
error/warning and every information note with its verdict); with ``--baseline-rev REV`` the
same trees are first checked with revision REV's engine (``git archive REV server``, run by
the same interpreter through ``PYTHONPATH``) and the table shows before and after, measured in
the same run. The reproductions of the ``real`` verdicts are run under torch (when this
interpreter has it) and the table says whether each one still shows its hazard.

One command regenerates the published table (about 15 minutes on 2 cores, less with a warm
result cache):

    .venv/bin/python benchmarks/real_trees.py --trees all -j 2 --baseline-rev d20e03c \\
        --precision benchmarks/PRECISION.md

Sources come from the package registry (``pip download --no-deps NAME==VERSION``) into
``benchmarks/.cache/trees/`` (git-ignored) and are reused by later runs. The versions are pinned
below so that a figure can be compared between runs. Three kinds of tree:

- ``pkg``: a wheel, only the top-level package named like the tree (the first ten trees, as
  they were first measured); a finding's path is ``tree/path-in-package``;
- ``wheel``: every ``.py`` file of the wheel (examples and tests included), its ``.dist-info``
  left out; a finding's path is ``tree/path-in-wheel``;
- ``sdist``: the source archive unpacked whole (notebooks, examples and tests included); a
  finding's path is ``tree/path-in-archive`` (its top folder ``name-version/`` left out).

Results are kept in gradwarden's result cache under ``benchmarks/.cache/results/`` (its key
includes the engine's sources, so an edited engine never reuses old results); ``--no-cache``
analyses every file again (for timings).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tarfile
import time
import zipfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from revisions import cached_server_of  # beside this script (benchmarks/)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CACHE = Path(os.environ.get("GRADWARDEN_TREES_CACHE", HERE / ".cache" / "trees"))
RESULTS = HERE / ".cache" / "results"
KNOWN = HERE / "real_trees_known.txt"
REPROS = HERE / "precision" / "repro"
VERDICTS = ("real", "arguable", "unreachable", "false")


@dataclass(frozen=True)
class Tree:
    pip: str  # the distribution's name on the registry
    version: str
    kind: str  # "pkg", "wheel" or "sdist" (see the module docstring)


TREES: Dict[str, Tree] = {
    # the first ten (package directory of the wheel only)
    "timm": Tree("timm", "1.0.31", "pkg"),
    "torchvision": Tree("torchvision", "0.29.1", "pkg"),
    "ultralytics": Tree("ultralytics", "8.4.190", "pkg"),
    "torchrl": Tree("torchrl", "0.14.1", "pkg"),
    "transformers": Tree("transformers", "5.23.0", "pkg"),
    "accelerate": Tree("accelerate", "1.15.0", "pkg"),
    "diffusers": Tree("diffusers", "0.42.1", "pkg"),
    "lightning": Tree("lightning", "2.6.6", "pkg"),
    "peft": Tree("peft", "0.21.2", "pkg"),
    "stable_baselines3": Tree("stable-baselines3", "2.9.2", "pkg"),
    # the 24 of issue 25 (whole wheels, or whole source archives)
    "avalanche": Tree("avalanche-lib", "0.6.0", "wheel"),
    "botorch": Tree("botorch", "0.18.1", "sdist"),
    "captum": Tree("captum", "0.9.0", "wheel"),
    "d3rlpy": Tree("d3rlpy", "2.8.1", "wheel"),
    "gpytorch": Tree("gpytorch", "1.15.2", "sdist"),
    "higher": Tree("higher", "0.2.1", "wheel"),
    "kornia": Tree("kornia", "0.9.0", "wheel"),
    "learn2learn": Tree("learn2learn", "0.2.0", "sdist"),
    "lightly": Tree("lightly", "1.6.0", "wheel"),
    "monai": Tree("monai", "1.6.1", "wheel"),
    "nflows": Tree("nflows", "0.14", "sdist"),
    "opacus": Tree("opacus", "1.6.0", "sdist"),
    "open_clip": Tree("open-clip-torch", "3.3.0", "wheel"),
    "pyro": Tree("pyro-ppl", "1.9.2", "wheel"),
    "pytorch_metric_learning": Tree("pytorch-metric-learning", "2.9.0", "wheel"),
    "sentence_transformers": Tree("sentence-transformers", "6.2.0", "wheel"),
    "speechbrain": Tree("speechbrain", "1.1.2", "wheel"),
    "tianshou": Tree("tianshou", "2.0.1", "wheel"),
    "torch_geometric": Tree("torch-geometric", "2.8.1", "wheel"),
    "torchdiffeq": Tree("torchdiffeq", "0.2.5", "wheel"),
    "torchgan": Tree("torchgan", "0.1.0", "wheel"),
    "torchmetrics": Tree("torchmetrics", "1.9.0", "wheel"),
    "trl": Tree("trl", "1.16.0", "wheel"),
    "zuko": Tree("zuko", "1.6.0", "wheel"),
}
OLD = tuple(n for n, t in TREES.items() if t.kind == "pkg")
NEW = tuple(n for n, t in TREES.items() if t.kind != "pkg")
DEFAULT = ("timm", "torchvision", "ultralytics", "torchrl", "transformers")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


# --------------------------------------------------------------------------- sources
def _download(tree: Tree, dl: Path) -> Path:
    """The wheel or source archive of ``tree`` in ``dl`` (``pip download --no-deps`` once)."""
    stem = f"{_norm(tree.pip)}-{tree.version}"
    sdist = tree.kind == "sdist"

    def found() -> List[Path]:
        out = []
        for p in dl.iterdir():
            n = _norm(p.name.split("-")[0]) + "-" + "-".join(p.name.split("-")[1:])
            if sdist and p.name.endswith((".tar.gz", ".zip")) and n.startswith(stem + "."):
                out.append(p)
            elif not sdist and p.name.endswith(".whl") and n.startswith(stem + "-"):
                out.append(p)
        return sorted(out)

    dl.mkdir(parents=True, exist_ok=True)
    if not found():
        spec = f"{tree.pip}=={tree.version}"
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(dl)]
        # An sdist's metadata is prepared by pip: versions read from git (setuptools-scm) are
        # given instead, since an archive has no git history.
        env = dict(os.environ, SETUPTOOLS_SCM_PRETEND_VERSION=tree.version)
        cmd += ["--no-binary", tree.pip] if sdist else ["--only-binary", ":all:"]
        log(f"$ pip download --no-deps {spec}{' (sdist)' if sdist else ''}")
        subprocess.run(cmd + [spec], check=True, env=env)
    files = found()
    if not files:
        raise SystemExit(f"no {'source archive' if sdist else 'wheel'} for {tree.pip}=={tree.version} in {dl}")
    return files[0]


def fetch(name: str) -> Path:
    """The folder that is checked for tree ``name`` (downloaded and unpacked once)."""
    tree = TREES[name]
    dest = CACHE / f"{name}-{tree.version}"
    ready = dest / ".ready"
    if not ready.exists():
        archive = _download(tree, CACHE / "downloads")
        dest.mkdir(parents=True, exist_ok=True)
        if tree.kind == "sdist":
            with tarfile.open(archive) as tar:
                members = [m for m in tar.getmembers() if (m.isfile() or m.isdir()) and not m.name.startswith("/")
                           and ".." not in Path(m.name).parts]
                tar.extractall(dest, members=members)
        else:
            with zipfile.ZipFile(archive) as zf:
                for member in zf.namelist():
                    top = member.split("/")[0]
                    if not member.endswith(".py") or ".." in member.split("/"):
                        continue
                    if tree.kind == "pkg" and top != name:
                        continue
                    if top.endswith((".dist-info", ".data")):
                        continue
                    zf.extract(member, dest)
        ready.write_text(f"{tree.pip}=={tree.version}")
    if tree.kind == "pkg":
        return dest / name
    if tree.kind == "sdist":
        tops = [p for p in dest.iterdir() if p.is_dir()]
        if len(tops) != 1:
            raise SystemExit(f"{dest}: expected one top folder in the source archive, found {tops}")
        return tops[0]
    return dest


def tree_files(root: Path) -> List[Path]:
    return sorted(p for p in root.rglob("*") if p.suffix in (".py", ".ipynb") and p.is_file())


# --------------------------------------------------------------------------- verdicts
@dataclass
class Verdict:
    verdict: str
    repro: Optional[str]
    reason: str


def load_known(path: Path = KNOWN) -> Dict[Tuple[str, int, str], Verdict]:
    """``tree/path:LINE CODE VERDICT [repro=FILE] reason`` lines of the verdicts file."""
    known: Dict[Tuple[str, int, str], Verdict] = {}
    if not path.exists():
        return known
    for n, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 3)
        if len(parts) < 3 or parts[2] not in VERDICTS:
            raise SystemExit(f"{path}:{n}: expected `tree/path:LINE CODE VERDICT [repro=FILE] reason`, "
                             f"VERDICT one of {', '.join(VERDICTS)}")
        loc, code, verdict = parts[:3]
        rest = parts[3] if len(parts) > 3 else ""
        repro = None
        if rest.startswith("repro="):
            repro, _, rest = rest.partition(" ")
            repro = repro[len("repro="):]
        where, _, row = loc.rpartition(":")
        known[(where, int(row), code)] = Verdict(verdict, repro, rest.strip())
    return known


# --------------------------------------------------------------------------- checking
def gradwarden_env(src: Optional[Path]) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRADWARDEN_") and k != "PYTHONPATH"}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


def check_tree(root: Path, jobs: int, env: Dict[str, str], cache: Optional[Path],
               timeout: float) -> Tuple[List[dict], float, float, int]:
    """Findings (json dicts), wall seconds, CPU seconds, exit code of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    cmd = [sys.executable, "-m", "gradwarden", "check", "--output-format", "json", "--exit-zero", "--no-progress",
           "-j", str(jobs), str(root)]
    cmd += ["--cache-dir", str(cache)] if cache else ["--no-cache"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
        stdout, stderr, rc = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        stdout, stderr, rc = "", f"[KILLED after {timeout:.0f} s] {exc.stderr or ''}", -9
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    try:
        data = json.loads(stdout or "[]")
    except json.JSONDecodeError:
        data = []
    if rc not in (0, 1):
        log(stderr[-3000:] if isinstance(stderr, str) else str(stderr)[-3000:])
    return data, wall, cpu, rc


def severity(d: dict) -> str:
    s = str(d.get("severity"))
    return "information" if s in ("info", "information") else s


def rel_path(name: str, root: Path, filename: str) -> str:
    path = Path(filename.split(":cell")[0] if ".ipynb:" in filename else filename)
    try:
        inner = path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        inner = path.as_posix()
    return f"{name}/{inner}"


@dataclass
class TreeRun:
    name: str
    files: int
    lines: int
    wall: float
    cpu: float
    rc: int
    findings: List[dict]  # each with "rel", "sev" and "verdict" (a Verdict or None) added
    problems: List[str]


def run_tree(name: str, root: Path, files: Sequence[Path], lines: int, args: argparse.Namespace,
             env: Dict[str, str], cache: Optional[Path], known: Dict[Tuple[str, int, str], Verdict]) -> TreeRun:
    data, wall, cpu, rc = check_tree(root, args.jobs, env, cache, args.timeout)
    findings, problems = [], []
    for d in data:
        if d.get("code") == "GW001":  # a file that does not parse (Python 2 examples): not a finding
            continue
        if d.get("code") == "GW000" or "internal error" in str(d.get("message", "")):
            problems.append(f"{d.get('filename')}: {str(d.get('message'))[:200]}")
            continue
        rel = rel_path(name, root, d["filename"])
        d = dict(d, rel=rel, sev=severity(d), verdict=known.get((rel, d["location"]["row"], d["code"])))
        findings.append(d)
    findings.sort(key=lambda d: (d["rel"], d["location"]["row"], d["code"]))
    if rc not in (0, 1):
        problems.append(f"gradwarden exited {rc}")
    return TreeRun(name, len(files), lines, wall, cpu, rc, findings, problems)


# --------------------------------------------------------------------------- reproductions
def run_repros(names: Sequence[str], timeout: float = 120.0) -> Dict[str, str]:
    """Each reproduction's outcome under this interpreter: "reproduced", "FAILED ..." or "no torch"."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return {n: "not run (no torch)" for n in names}
    out: Dict[str, str] = {}
    for n in sorted(set(names)):
        path = REPROS / n
        if not path.exists():
            out[n] = "MISSING"
            continue
        try:
            proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=timeout,
                                  cwd=str(REPROS))
            out[n] = "reproduced" if proc.returncode == 0 else f"FAILED (exit {proc.returncode}): " + \
                (proc.stdout + proc.stderr).strip().splitlines()[-1][:160] if (proc.stdout + proc.stderr).strip() \
                else f"FAILED (exit {proc.returncode})"
        except subprocess.TimeoutExpired:
            out[n] = "FAILED (timeout)"
    return out


# --------------------------------------------------------------------------- reports
STOPPED = "GW002"  # "analysis stopped early": a statement about the analysis, counted apart


def counts(run: TreeRun) -> Dict[str, int]:
    """Findings by severity and verdict; information notes without GW002 (``stopped``)."""
    c: Counter = Counter()
    for d in run.findings:
        if d["code"] == STOPPED:
            c["stopped"] += 1
            continue
        c[d["sev"]] += 1
        v = d["verdict"].verdict if d["verdict"] else "unjudged"
        c[f"{'ew' if d['sev'] in ('error', 'warning') else 'i'}:{v}"] += 1
    return c


def print_run(run: TreeRun, label: str, show_info: bool) -> int:
    """Print one tree's findings; returns the number of errors/warnings that are NEW or false."""
    tree = TREES[run.name]
    bad = 0
    print(f"\n== {run.name} ({tree.pip} {tree.version}, {tree.kind}){label}: {run.files} files, {run.lines} lines, "
          f"{run.cpu:.0f} s CPU")
    per_rule: Counter = Counter()
    for d in run.findings:
        v = d["verdict"]
        mark = v.verdict if v else "NEW"
        if d["sev"] in ("error", "warning"):
            bad += v is None or v.verdict == "false"
            print(f"  [{mark}] {d['rel']}:{d['location']['row']} {d['code']} ({d['sev']}) {d['message'][:200]}")
            if v and v.reason:
                print(f"          {v.reason[:200]}")
        else:
            per_rule[d["code"]] += 1
            if show_info:
                print(f"  [{mark}] {d['rel']}:{d['location']['row']} {d['code']} (information) {d['message'][:200]}")
    if per_rule:
        print("  information per rule: " + ", ".join(f"{c} {n}" for c, n in sorted(per_rule.items())))
    for p in run.problems:
        print(f"  PROBLEM {p}")
    return bad


def print_table(runs: List[TreeRun]) -> None:
    head = ("tree", "files", "lines", "cpu_s", "errors", "warnings", "info", "ew_real", "ew_unreachable",
            "ew_false", "ew_new", "info_worth", "info_false", "info_new", "stopped", "problems")
    rows = []
    for r in runs:
        c = counts(r)
        rows.append({"tree": r.name, "files": r.files, "lines": r.lines, "cpu_s": round(r.cpu, 1),
                     "errors": c["error"], "warnings": c["warning"], "info": c["information"],
                     "ew_real": c["ew:real"], "ew_unreachable": c["ew:unreachable"], "ew_false": c["ew:false"],
                     "ew_new": c["ew:unjudged"], "info_worth": c["i:real"] + c["i:arguable"],
                     "info_false": c["i:false"] + c["i:unreachable"], "info_new": c["i:unjudged"],
                     "stopped": c["stopped"], "problems": len(r.problems)})
    total = {h: sum(row[h] for row in rows) for h in head[1:]}
    total["cpu_s"] = round(total["cpu_s"], 1)
    rows.append(dict(total, tree="total"))
    widths = [max(len(h), *(len(str(r[h])) for r in rows)) for h in head]
    print()
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
    for r in rows:
        print("  ".join(str(r[h]).ljust(w) for h, w in zip(head, widths)))


def _pct(num: int, den: int) -> str:
    return f"{100 * num / den:.0f} %" if den else "n/a"


_COLS = ("E", "W", "real", "unr", "false", "info", "worth", "stopped")


def _cells(r: Optional[TreeRun]) -> Dict[str, int]:
    """One library's cells: errors, warnings, their verdicts, information notes (without
    GW002), how many of those are worth reading, and the GW002 notes."""
    if r is None:
        return dict.fromkeys(_COLS, 0)
    c = counts(r)
    return {"E": c["error"], "W": c["warning"], "real": c["ew:real"], "unr": c["ew:unreachable"],
            "false": c["ew:false"] + c["ew:unjudged"], "info": c["information"],
            "worth": c["i:real"] + c["i:arguable"], "stopped": c["stopped"]}


def _md(text: str, limit: int = 220) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text[:limit] + ("…" if len(text) > limit else "")


def precision_markdown(after: List[TreeRun], before: Optional[List[TreeRun]], base_rev: Optional[str],
                       head_rev: str, repro_status: Dict[str, str], command: str) -> str:
    """The text of benchmarks/PRECISION.md."""
    w: List[str] = []
    b_by = {r.name: r for r in before or []}
    tot = {k: sum(_cells(r)[k] for r in after) for k in _COLS}
    btot = {k: sum(_cells(r)[k] for r in before or []) for k in _COLS}
    files = sum(r.files for r in after)
    lines = sum(r.lines for r in after)
    w.append("# Precision on real libraries\n")
    w.append(f"gradwarden's findings on {len(after)} PyTorch libraries ({files:,} files, {lines:,} lines), each one "
             "judged by reading the library's code and, for the real ones, reproduced under torch. Regenerated by "
             "one command (what it downloads and how long it takes: "
             "[README.md](README.md#precision-on-real-libraries)):\n")
    w.append(f"    {command}\n")
    w.append(f"Engine measured: `{head_rev}`" + (f"; *before*: `{base_rev}`, the engine before issue 25's work, run "
                                                f"on the same trees in the same run." if base_rev else ".")
             + " Verdicts and their reasons: [`real_trees_known.txt`](real_trees_known.txt); reproductions: "
             "[`precision/repro/`](precision/repro/).\n")
    w.append("Verdicts:\n")
    w.append("- **real**: the hazard happens under torch on a path the code can take; its reproduction (the "
             "library's steps, reduced, run under torch) shows the error or the wrong values;")
    w.append("- **unreachable**: what the finding says is in the code, but no caller takes that path (a function "
             "nothing differentiates through, a branch taken only without gradients);")
    w.append("- **arguable** (information notes only): not provable from the code at hand, and worth a look there;")
    w.append("- **false**: the finding is wrong (a defect of gradwarden).\n")
    w.append("## Summary\n")
    ew, bew = tot["E"] + tot["W"], btot["E"] + btot["W"]
    line = (f"- **Errors and warnings: {ew}** ({tot['E']} errors, {tot['W']} warnings): {tot['real']} real, "
            f"{tot['unr']} unreachable, {tot['false']} false or not judged. **Precision {_pct(tot['real'], ew)}** "
            f"(real / reported)")
    if before is not None:
        line += (f"; before: {bew} ({btot['E']} errors, {btot['W']} warnings), {btot['real']} real, "
                 f"{btot['false']} false: {_pct(btot['real'], bew)}")
    w.append(line + ".")
    line = (f"- **Information notes: {tot['info']}**, of which {tot['worth']} real or worth a look "
            f"({_pct(tot['worth'], tot['info'])})")
    if before is not None:
        line += f"; before: {btot['info']}, of which {btot['worth']} ({_pct(btot['worth'], btot['info'])})"
    w.append(line + ".")
    line = f"- GW002 (\"analysis stopped early\", about the analysis itself, not the code): {tot['stopped']}"
    if before is not None:
        line += f" (before: {btot['stopped']})"
    w.append(line + "; each names the line where it stopped and what grew there.")
    problems = [(r.name, p) for r in after for p in r.problems]
    w.append(f"- Crashes or internal errors: {len(problems)}.\n")

    w.append("## Per library\n")
    w.append("E / W: errors / warnings; real, unr(eachable), false: their verdicts; info: information notes "
             "(GW002 apart), worth: how many of them are real or arguable; stopped: GW002 notes."
             + (" A cell that changed reads *now (before)*." if before is not None else "") + "\n")
    w.append("| library | files | lines | E | W | real | unr | false | info | worth | stopped |")
    w.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")

    def cell(a: int, b: Optional[int]) -> str:
        return str(a) if b is None or a == b else f"{a} ({b})"

    for r in after:
        t = TREES[r.name]
        a = _cells(r)
        b = _cells(b_by.get(r.name)) if before is not None else None
        w.append(f"| {t.pip} {t.version}{' (sdist)' if t.kind == 'sdist' else ''} | {r.files:,} | {r.lines:,} | "
                 + " | ".join(cell(a[k], b[k] if b else None) for k in _COLS) + " |")
    w.append(f"| **all {len(after)}** | **{files:,}** | **{lines:,}** | "
             + " | ".join(f"**{cell(tot[k], btot[k] if before is not None else None)}**" for k in _COLS) + " |\n")

    w.append("## Information notes per rule\n")
    w.append("A rule's information notes stay where at least half of them are real or worth a look on these trees; "
             "otherwise the rule is narrowed (GW201's notes on functions analysed alone are made for objectives "
             "only; GW404 needs a backward after the total was made; GW701 says nothing when an operand it cannot "
             "see may carry the graph).\n")
    per: Dict[str, Counter] = defaultdict(Counter)
    bper: Dict[str, Counter] = defaultdict(Counter)
    for runs, acc in ((after, per), (before or [], bper)):
        for r in runs:
            for d in r.findings:
                if d["sev"] == "information":
                    acc[d["code"]][d["verdict"].verdict if d["verdict"] else "unjudged"] += 1
    w.append("| rule | notes | real | arguable | unreachable | false | not judged | worth reading |"
             + (" before: notes, worth reading |" if before is not None else ""))
    w.append("|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if before is not None else ""))
    for code in sorted(set(per) | set(bper)):
        c = per.get(code, Counter())
        n = sum(c.values())
        row = (f"| {code}{' (analysis stopped)' if code == STOPPED else ''} | {n} | {c['real']} | {c['arguable']} | "
               f"{c['unreachable']} | {c['false']} | {c['unjudged']} | {_pct(c['real'] + c['arguable'], n)} |")
        if before is not None:
            bc = bper.get(code, Counter())
            bn = sum(bc.values())
            row += f" {bn}, {_pct(bc['real'] + bc['arguable'], bn)} |"
        w.append(row)
    w.append("")

    def listing(items: List[dict]) -> List[str]:
        out = ["| where | rule | verdict | message | why |", "|---|---|---|---|---|"]
        for d in items:
            v = d["verdict"]
            why = v.reason if v else ""
            if v and v.repro:
                why += f" Reproduction: [`{v.repro}`](precision/repro/{v.repro}) ({repro_status.get(v.repro, 'not run')})."
            out.append(f"| `{d['rel']}:{d['location']['row']}` | {d['code']} {d['sev']} | "
                       f"{v.verdict if v else 'NOT JUDGED'} | {_md(d['message'])} | {_md(why, 600)} |")
        return out

    ews = [d for r in after for d in r.findings if d["sev"] in ("error", "warning")]
    infos = [d for r in after for d in r.findings if d["sev"] == "information" and d["code"] != STOPPED]
    stops = [d for r in after for d in r.findings if d["code"] == STOPPED]
    w.append("## Every error and warning\n")
    w.extend(listing(ews) if ews else ["None."])
    w.append("")
    w.append("## Every information note\n")
    w.extend(listing(infos) if infos else ["None."])
    w.append("")
    w.append("## Every \"analysis stopped early\" note (GW002)\n")
    w.extend(listing(stops) if stops else ["None."])
    w.append("")
    if before is not None:
        now = {(d["rel"], d["location"]["row"], d["code"]) for r in after for d in r.findings}
        gone = [d for r in before for d in r.findings if (d["rel"], d["location"]["row"], d["code"]) not in now]
        w.append(f"## Findings of `{base_rev}` that are gone\n")
        w.extend(listing(gone) if gone else ["None."])
        w.append("")
    w.append("## Problems\n")
    w.append("\n".join(f"- {n}: {p}" for n, p in problems) if problems else
             "No crash and no internal error on any file.")
    w.append("")
    return "\n".join(w)


# --------------------------------------------------------------------------- main
def head_revision() -> str:
    rev = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], cwd=REPO, capture_output=True,
                         text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "server"], cwd=REPO,
                           capture_output=True, text=True).stdout.strip()
    return rev + ("+changes" if dirty else "")


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trees", default=",".join(DEFAULT),
                    help=f"'all', 'old' (the first ten), 'new' (the 24 of issue 25) or names from: {', '.join(TREES)}")
    ap.add_argument("-j", "--jobs", type=int, default=max(1, os.cpu_count() or 1))
    ap.add_argument("--json", help="write the findings and the table to this file")
    ap.add_argument("--show-info", action="store_true", help="print every information note too")
    ap.add_argument("--baseline-rev", help="also check the trees with this revision's engine (before/after)")
    ap.add_argument("--precision", help="write the precision table (markdown) to this file")
    ap.add_argument("--no-cache", action="store_true", help="analyse every file again (for timings)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds one check of one tree may take")
    ap.add_argument("--setup-only", action="store_true", help="download and unpack the trees, then stop")
    args = ap.parse_args(argv)
    groups = {"all": list(TREES), "old": list(OLD), "new": list(NEW)}
    names = groups.get(args.trees) or [t.strip() for t in args.trees.split(",") if t.strip()]
    unknown = [n for n in names if n not in TREES]
    if unknown:
        ap.error(f"unknown tree(s): {', '.join(unknown)}")
    known = load_known()
    roots = {n: fetch(n) for n in names}
    if args.setup_only:
        return 0
    base_src = cached_server_of(args.baseline_rev) if args.baseline_rev else None
    cache_after = None if args.no_cache else RESULTS / "head"
    cache_before = None if args.no_cache else RESULTS / f"base-{args.baseline_rev}"
    after: List[TreeRun] = []
    before: List[TreeRun] = []
    bad = 0
    for name in names:
        root = roots[name]
        files = tree_files(root)
        lines = sum(p.read_bytes().count(b"\n") for p in files)
        if base_src is not None:
            log(f"checking {name} with {args.baseline_rev}: {len(files)} files, {lines} lines")
            b = run_tree(name, root, files, lines, args, gradwarden_env(base_src), cache_before, known)
            before.append(b)
            print_run(b, f" [before: {args.baseline_rev}]", args.show_info)
        log(f"checking {name}: {len(files)} files, {lines} lines")
        a = run_tree(name, root, files, lines, args, gradwarden_env(None), cache_after, known)
        after.append(a)
        bad += print_run(a, " [after]" if base_src is not None else "", args.show_info)
    if before:
        print("\nbefore (" + args.baseline_rev + "):")
        print_table(before)
        print("\nafter (this checkout):")
    print_table(after)
    repro_names = [v.repro for v in known.values() if v.repro]
    status = run_repros(repro_names) if args.precision else {}
    for n, s in sorted(status.items()):
        if s != "reproduced":
            print(f"reproduction {n}: {s}")
            bad += 1
    if args.precision:
        cmd = "python benchmarks/real_trees.py " + " ".join(a for a in (argv if argv is not None else sys.argv[1:]))
        Path(args.precision).write_text(precision_markdown(after, before or None, args.baseline_rev,
                                                           head_revision(), status, cmd))
        log(f"wrote {args.precision}")
    if args.json:
        strip = lambda r: dict(vars(r), findings=[dict(d, verdict=vars(d["verdict"]) if d["verdict"] else None)
                                                 for d in r.findings])
        Path(args.json).write_text(json.dumps({"after": [strip(r) for r in after],
                                               "before": [strip(r) for r in before]}, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
