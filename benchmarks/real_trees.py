#!/usr/bin/env python3
"""Run ``gradwarden check`` over real, correct libraries and list every error and warning.

    python benchmarks/real_trees.py [--trees timm,transformers,...] [--jobs N] [--json OUT]

Real libraries train: an error or warning there is either a real hazard (on a path the
library rarely takes) or a false alarm. Every such finding is printed as ``file:line code
message`` so that each one can be justified or removed; findings already justified (reproduced
under torch) are listed, with the reason, in ``benchmarks/real_trees_known.txt`` and marked
``known`` instead of ``NEW``. Crashes (an internal error on a file, exit code 2) are listed
under PROBLEMS. The run ends with a table: files, lines, CPU seconds, errors, warnings,
information notes, new findings and problems per tree.

Sources come from the package registry (``pip download --no-deps NAME==VERSION``, wheels
unpacked) into ``benchmarks/.cache/trees/`` (git-ignored) and are reused by later runs. The
versions are pinned below so that a figure can be compared between runs.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import zipfile
from collections import Counter
from pathlib import Path
from typing import Dict, List, Tuple

HERE = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("GRADWARDEN_TREES_CACHE", HERE / ".cache" / "trees"))
KNOWN = HERE / "real_trees_known.txt"

TREES: Dict[str, str] = {  # name -> pinned version (the top-level package dir in the wheel = name)
    "timm": "1.0.31",
    "torchvision": "0.29.1",
    "ultralytics": "8.4.190",
    "torchrl": "0.14.1",
    "transformers": "5.23.0",
    "accelerate": "1.15.0",
    "diffusers": "0.42.1",
    "lightning": "2.6.6",
    "peft": "0.21.2",
    "stable_baselines3": "2.9.2",
}
PIP_NAMES = {"stable_baselines3": "stable-baselines3"}
DEFAULT = ("timm", "torchvision", "ultralytics", "torchrl", "transformers")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def fetch(name: str, version: str) -> Path:
    """The unpacked package directory of ``name==version`` (downloaded once)."""
    dest = CACHE / f"{name}-{version}"
    ready = dest / ".ready"
    if ready.exists():
        return dest / name
    dl = CACHE / "downloads"
    dl.mkdir(parents=True, exist_ok=True)
    spec = f"{PIP_NAMES.get(name, name)}=={version}"
    wheels = [p for p in dl.glob("*.whl") if p.name.lower().replace("-", "_").startswith(
        f"{name.lower()}_{version}".replace("-", "_") + "-") or p.name.lower().startswith(f"{name.lower()}-{version}-")]
    if not wheels:
        log(f"$ pip download --no-deps {spec}")
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:",
                        spec, "-d", str(dl)], check=True)
        wheels = [p for p in dl.glob("*.whl") if p.name.lower().startswith(f"{name.lower()}-{version}-")]
    if not wheels:
        raise SystemExit(f"no wheel for {spec} in {dl}")
    dest.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheels[0]) as zf:
        for member in zf.namelist():
            if member.endswith(".py") and member.split("/")[0] == name:
                zf.extract(member, dest)
    ready.write_text(spec)
    return dest / name


def load_known() -> Dict[Tuple[str, int, str], str]:
    """``tree/relative/path.py:LINE CODE  reason`` lines of real_trees_known.txt."""
    known: Dict[Tuple[str, int, str], str] = {}
    if not KNOWN.exists():
        return known
    for line in KNOWN.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        loc, code, *reason = line.split(None, 2)
        path, _, row = loc.rpartition(":")
        known[(path, int(row), code)] = reason[0] if reason else ""
    return known


def check_tree(root: Path, jobs: int) -> Tuple[List[dict], float, float, int]:
    """Findings (json dicts), wall seconds, CPU seconds, exit code of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "gradwarden", "check", "--output-format", "json", "--no-cache",
                           "--exit-zero", "-j", str(jobs), str(root)], capture_output=True, text=True)
    if proc.returncode != 0 and "--no-cache" in proc.stderr:  # an older gradwarden without a cache
        proc = subprocess.run([sys.executable, "-m", "gradwarden", "check", "--output-format", "json",
                               "--exit-zero", "-j", str(jobs), str(root)], capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    try:
        data = json.loads(proc.stdout or "[]")
    except json.JSONDecodeError:
        data = []
    if proc.returncode not in (0, 1):
        log(proc.stderr[-3000:])
    return data, wall, cpu, proc.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trees", default=",".join(DEFAULT), help=f"comma-separated, from {', '.join(TREES)} or 'all'")
    ap.add_argument("--jobs", type=int, default=max(1, os.cpu_count() or 1))
    ap.add_argument("--json", help="write the findings and the table to this file")
    args = ap.parse_args()
    names = list(TREES) if args.trees == "all" else [t.strip() for t in args.trees.split(",") if t.strip()]
    unknown = [n for n in names if n not in TREES]
    if unknown:
        ap.error(f"unknown tree(s): {', '.join(unknown)}")
    known = load_known()
    rows = []
    report = {"trees": {}, "findings": []}
    new_total = 0
    for name in names:
        root = fetch(name, TREES[name])
        files = sorted(root.rglob("*.py"))
        lines = sum(p.read_bytes().count(b"\n") for p in files)
        log(f"checking {name} {TREES[name]}: {len(files)} files, {lines} lines")
        data, wall, cpu, rc = check_tree(root, args.jobs)
        sev = Counter(str(d.get("severity")) for d in data)
        problems = [d for d in data if d.get("code") in ("GW000",) or "internal error" in d.get("message", "")]
        new = 0
        print(f"\n== {name} {TREES[name]}")
        for d in sorted(data, key=lambda d: (d["filename"], d["location"]["row"])):
            if d.get("severity") not in ("error", "warning") or d.get("code") == "GW001":
                continue
            rel = f"{name}/" + Path(d["filename"]).resolve().relative_to(root.resolve()).as_posix()
            why = known.get((rel, d["location"]["row"], d["code"]))
            mark = "known" if why is not None else "NEW"
            new += why is None
            print(f"  [{mark}] {rel}:{d['location']['row']} {d['code']} ({d['severity']}) {d['message'][:160]}")
            if why:
                print(f"          justified: {why}")
            report["findings"].append(dict(d, tree=name, rel=rel, known=why is not None))
        for d in problems:
            print(f"  PROBLEM {d['filename']}: {d['message'][:200]}")
        if rc not in (0, 1):
            print(f"  PROBLEM: gradwarden exited {rc}")
        new_total += new
        row = {"tree": f"{name} {TREES[name]}", "files": len(files), "lines": lines, "wall_s": round(wall, 1),
               "cpu_s": round(cpu, 1), "errors": sev.get("error", 0), "warnings": sev.get("warning", 0),
               "info": sev.get("information", 0) + sev.get("info", 0), "new": new,
               "problems": len(problems) + (rc not in (0, 1))}
        rows.append(row)
        report["trees"][name] = row
    print()
    head = ("tree", "files", "lines", "wall_s", "cpu_s", "errors", "warnings", "info", "new", "problems")
    widths = [max(len(h), *(len(str(r[h])) for r in rows)) for h in head]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
    for r in rows:
        print("  ".join(str(r[h]).ljust(w) for h, w in zip(head, widths)))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 1 if new_total else 0


if __name__ == "__main__":
    sys.exit(main())
