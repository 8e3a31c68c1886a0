"""The VS Code package's size and file count, against a baseline git revision, in one run.

    .venv/bin/python benchmarks/vsix_size.py [--baseline REV] [--target linux-x64]

Builds the .vsix of the baseline revision (a temporary `git worktree` of REV, default: the
commit before the lean bundle, 256cb4b) and of the working tree, both with
`npm run package -- --target TARGET` on this machine, then prints for each: bytes, files in the
package, bytes unpacked, the bundled libraries' files, and the ratios current/baseline, with the
targets of issue 14 (at most 12 MB and 2,000 files for linux-x64). Needs Node 20+/npm and
network access to PyPI and npm (the baseline's third-party libraries are installed afresh: a few
minutes).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BASELINE = "256cb4b"  # main before the lean bundle (24.6 MB, 8,274 files)


def build(repo: Path, target: str, log: Path) -> Path:
    if not (repo / "node_modules").is_dir():
        if (ROOT / "node_modules").is_dir() and repo != ROOT:
            os.symlink(ROOT / "node_modules", repo / "node_modules")
        else:
            subprocess.run(["npm", "ci", "--no-fund", "--no-audit"], cwd=repo, check=True, stdout=subprocess.DEVNULL)
    env = dict(os.environ, PYTHON=sys.executable)
    with log.open("w") as fh:
        proc = subprocess.run(["npm", "run", "package", "--", "--target", target], cwd=repo, env=env,
                              stdout=fh, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        raise SystemExit(f"npm run package failed in {repo} (exit {proc.returncode}); log: {log}")
    return next((repo / "vscode-client" / "dist").glob(f"*-{target}.vsix"))


def measure(vsix: Path) -> dict:
    with zipfile.ZipFile(vsix) as zf:
        files = [i for i in zf.infolist() if not i.is_dir()]
    libs = [i for i in files if "/bundled/libs/" in i.filename]
    return {"bytes": vsix.stat().st_size, "files": len(files), "unpacked": sum(i.file_size for i in files),
            "lib_files": len(libs)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", default=DEFAULT_BASELINE)
    ap.add_argument("--target", default="linux-x64")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gw-vsix-bench-"))
    base_tree = tmp / "baseline"
    subprocess.run(["git", "worktree", "add", "--detach", str(base_tree), args.baseline], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        results = {
            f"baseline {args.baseline}": measure(build(base_tree, args.target, tmp / "baseline.log")),
            "current": measure(build(ROOT, args.target, tmp / "current.log")),
        }
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(base_tree)], cwd=ROOT)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'package (' + args.target + ')':<28}{'bytes':>12}{'files':>8}{'unpacked':>12}{'lib files':>11}")
    for name, m in results.items():
        print(f"{name:<28}{m['bytes']:>12,}{m['files']:>8,}{m['unpacked']:>12,}{m['lib_files']:>11,}")
    base, cur = results[f"baseline {args.baseline}"], results["current"]
    print(f"current/baseline: size {cur['bytes'] / base['bytes']:.2f}x, files {cur['files'] / base['files']:.2f}x, "
          f"unpacked {cur['unpacked'] / base['unpacked']:.2f}x")
    ok = cur["bytes"] <= 12_000_000 and cur["files"] <= 2000
    print(f"target <= 12,000,000 bytes and <= 2,000 files: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
