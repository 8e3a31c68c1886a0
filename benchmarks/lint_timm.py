#!/usr/bin/env python3
"""Benchmark gradwarden against TorchFix (and a bare ``ast.parse``) on the timm source.

    python benchmarks/lint_timm.py [--json OUT] [--repeat N] [--rounds N] [--jobs N]

Everything it fetches goes under ``benchmarks/.cache/`` (git-ignored) and is reused:

1. ``pip download --no-deps timm==1.0.31`` and unpack it (wheel or sdist);
2. a separate venv ``benchmarks/.cache/torchfix-venv`` with ``torchfix==0.7.0`` (never torch:
   its requirements are read from its metadata first; a torch requirement would be dropped
   and the rest installed with ``--no-deps``);
3. on the same list of timm ``.py`` files, times
   (a) ``ast.parse`` of every file, in-process (the baseline),
   (b) ``gradwarden check --output-format json`` (a subprocess, wall and CPU time: with
       ``--no-cache``, then with an empty result cache (cold) and again on the unchanged tree
       (warm; target <= 0.25x cold)) and ``analyze_source`` per file in-process,
   (c) ``torchfix`` (a subprocess, wall and CPU time);
4. prints files, lines, times, lines/s, the ratios (targets: gradwarden >= 25x faster than
   torchfix; in-process gradwarden within 3x of ast.parse, CPU, also measured file by file: each
   file parsed then analysed, the fastest of ``--rounds`` rounds, which the host's drifting
   speed cannot skew) and every error-level gradwarden
   finding on timm (each one a false alarm to justify or remove).

An engine crash on a file is reported, not fatal. ``--setup-only`` stops after steps 1-2.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import re
import resource
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import traceback
import venv
import zipfile
from collections import Counter
from email.parser import Parser
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CACHE = HERE / ".cache"
DOWNLOADS = CACHE / "downloads"
TIMM_VERSION = "1.0.31"
TORCHFIX_VERSION = "0.7.0"
TIMM_DIR = CACHE / f"timm-{TIMM_VERSION}"
VENV_DIR = CACHE / "torchfix-venv"
READY = ".gradwarden-bench-ready"

TARGET_VS_TORCHFIX = 25.0  # gradwarden at least this many times faster than torchfix
TARGET_VS_AST = 3.0  # in-process gradwarden at most this many times ast.parse
TARGET_WARM_VS_COLD = 0.25  # a re-run over the unchanged tree, with the result cache


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run(cmd: Sequence[str], **kw) -> subprocess.CompletedProcess:
    log("$ " + " ".join(str(c) for c in cmd))
    return subprocess.run([str(c) for c in cmd], **kw)


# --------------------------------------------------------------------------- setup


def venv_bin(name: str) -> Path:
    sub = "Scripts" if os.name == "nt" else "bin"
    exe = name + (".exe" if os.name == "nt" else "")
    return VENV_DIR / sub / exe


def ensure_venv() -> Path:
    """The torchfix venv, created (with pip) when missing. Returns its python."""
    py = venv_bin("python")
    if not py.exists():
        log(f"creating venv {VENV_DIR}")
        shutil.rmtree(VENV_DIR, ignore_errors=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(str(VENV_DIR))
    return py


def pip_download(py: Path, spec: str, dest: Path) -> Path:
    """``pip download --no-deps spec`` into ``dest`` unless a matching file is already there."""
    name, _, version = spec.partition("==")
    dest.mkdir(parents=True, exist_ok=True)

    def found() -> Optional[Path]:
        norm = re.sub(r"[-_.]+", "_", name).lower()
        for p in sorted(dest.iterdir()):
            stem = re.sub(r"[-_.]+", "_", p.name).lower()
            if stem.startswith(f"{norm}_{version.replace('.', '_')}") and (
                p.name.endswith(".whl") or p.name.endswith(".tar.gz") or p.name.endswith(".zip")
            ):
                return p
        return None

    have = found()
    if have:
        return have
    out = run([py, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", spec, "-d", dest])
    if out.returncode != 0:
        raise SystemExit(f"pip download {spec} failed (exit {out.returncode})")
    have = found()
    if not have:
        raise SystemExit(f"pip download {spec} left no file in {dest}")
    return have


def ensure_timm(py: Path) -> Path:
    """The unpacked timm package folder (``.../timm``)."""
    pkg = TIMM_DIR / "timm"
    if (TIMM_DIR / READY).exists() and pkg.is_dir():
        return pkg
    archive = pip_download(py, f"timm=={TIMM_VERSION}", DOWNLOADS)
    log(f"unpacking {archive.name}")
    shutil.rmtree(TIMM_DIR, ignore_errors=True)
    TIMM_DIR.mkdir(parents=True)
    if archive.name.endswith(".whl") or archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            z.extractall(TIMM_DIR)
    else:
        with tarfile.open(archive) as t:
            try:
                t.extractall(TIMM_DIR, filter="data")
            except TypeError:  # Python without extraction filters
                t.extractall(TIMM_DIR)
        inner = [p for p in TIMM_DIR.iterdir() if p.is_dir()]
        if len(inner) == 1 and (inner[0] / "timm").is_dir():  # sdist: timm-1.0.31/timm
            for p in inner[0].iterdir():
                p.rename(TIMM_DIR / p.name)
    if not pkg.is_dir():
        raise SystemExit(f"{archive.name} has no timm/ package")
    (TIMM_DIR / READY).write_text(archive.name + "\n")
    return pkg


def wheel_requirements(archive: Path) -> List[str]:
    """The unconditional ``Requires-Dist`` of a wheel (extras dropped)."""
    with zipfile.ZipFile(archive) as z:
        meta_name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(z.read(meta_name).decode("utf-8", "replace"))
    reqs = []
    for req in meta.get_all("Requires-Dist") or []:
        if "extra ==" in req.replace("extra==", "extra =="):
            continue
        reqs.append(req.strip())
    return reqs


def _req_name(req: str) -> str:
    return re.split(r"[\s<>=!~;\[(]", req, maxsplit=1)[0].lower().replace("_", "-")


def has_torch(py: Path) -> bool:
    out = subprocess.run([str(py), "-c", "import importlib.util as u; print(u.find_spec('torch') is not None)"],
                         capture_output=True, text=True)
    return out.stdout.strip() == "True"


def ensure_torchfix() -> Path:
    """The ``torchfix`` executable of the benchmark venv, installed without torch."""
    py = ensure_venv()
    exe = venv_bin("torchfix")
    marker = VENV_DIR / READY
    if exe.exists() and marker.exists() and marker.read_text().strip() == TORCHFIX_VERSION:
        return exe
    wheel = pip_download(py, f"torchfix=={TORCHFIX_VERSION}", DOWNLOADS)
    pip = [py, "-m", "pip", "install", "--disable-pip-version-check"]
    if wheel.name.endswith(".whl"):
        reqs = wheel_requirements(wheel)
        torch_reqs = [r for r in reqs if _req_name(r) in ("torch", "pytorch", "torchvision", "torchaudio")]
        if torch_reqs:
            log(f"torchfix requires {torch_reqs}: installing it with --no-deps plus its other requirements")
            others = [r for r in reqs if r not in torch_reqs]
            if others:
                if run(pip + others).returncode != 0:
                    raise SystemExit("installing torchfix's requirements failed")
            cmd = pip + ["--no-deps", wheel]
        else:
            log(f"torchfix {TORCHFIX_VERSION} requires {reqs} (no torch)")
            cmd = pip + [wheel]
    else:  # an sdist: no metadata to read cheaply, never let it resolve torch
        cmd = pip + ["--no-deps", wheel]
    if run(cmd).returncode != 0:
        raise SystemExit("installing torchfix failed")
    if has_torch(py):
        raise SystemExit(f"torch ended up in {VENV_DIR}: delete it, this benchmark must not install torch")
    if not exe.exists():
        raise SystemExit(f"no torchfix executable at {exe}")
    ver = subprocess.run([str(exe), "--version"], capture_output=True, text=True)
    log(f"torchfix --version: {ver.stdout.strip() or ver.stderr.strip()}")
    marker.write_text(TORCHFIX_VERSION + "\n")
    return exe


# --------------------------------------------------------------------------- measuring


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed_subprocess(cmd: Sequence[str], cwd: Path, env: Optional[Dict[str, str]] = None,
                     timeout: Optional[float] = None) -> Tuple[subprocess.CompletedProcess, float, float]:
    """Run and time a command; past ``timeout`` it is killed and reported with exit code -9."""
    cpu0 = children_cpu()
    t0 = time.perf_counter()
    proc = subprocess.Popen([str(c) for c in cmd], cwd=str(cwd), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, errors="replace",
                            start_new_session=True)  # its own process group: a timeout kills its workers too
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        stdout, stderr = proc.communicate()
        rc = -9
        stderr += f"\n[killed after {timeout:g}s]"
    out = subprocess.CompletedProcess(proc.args, rc, stdout, stderr)
    wall = time.perf_counter() - t0
    return out, wall, children_cpu() - cpu0


def gradwarden_python() -> Tuple[str, Dict[str, str]]:
    """An interpreter that can import gradwarden (this one, else with server/ on the path)."""
    env = dict(os.environ)
    try:
        import gradwarden  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(REPO / "server"))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "server"), env.get("PYTHONPATH")]))
    # An installed gradwarden has its bytecode; without it each run compiles every module.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for var in ("GRADWARDEN_NO_CACHE", "GRADWARDEN_CACHE_DIR"):
        env.pop(var, None)
    return sys.executable, env


def time_ast(sources: Dict[str, bytes], repeat: int) -> Tuple[float, float, List[str]]:
    """(best wall seconds, best CPU seconds, errors) of parsing every file."""
    best = best_cpu = float("inf")
    errors: List[str] = []
    for _ in range(repeat):
        errors = []
        t0, c0 = time.perf_counter(), time.process_time()
        for name, data in sources.items():
            try:
                ast.parse(data, filename=name)
            except (SyntaxError, ValueError) as exc:
                errors.append(f"{name}: {exc}")
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return best, best_cpu, errors


def time_interleaved(sources: Dict[str, bytes], rounds: int, root: Optional[Path] = None) -> Tuple[float, float]:
    """CPU seconds of ``ast.parse`` and of ``analyze_source``, each file parsed and analysed
    back to back, summed over the files of each one's fastest round. The machine's speed
    drifts by a tenth or more between seconds on a shared host: two totals measured a minute
    apart differ by that much, two figures taken within the same tenth of a second do not.
    The parse cache that imports fill (engine/front/imports.py) is emptied at each round, so each
    round is a first run."""
    from gradwarden.engine.analyze import analyze_source

    try:
        from gradwarden.engine.front import imports
    except ImportError:  # a revision from before the engine's rooms
        from gradwarden.engine import imports

    parse = {name: float("inf") for name in sources}
    analyse = dict(parse)
    for _ in range(rounds):
        imports._PARSED.clear()
        for name, data in sources.items():
            c0 = time.process_time()
            try:
                ast.parse(data, filename=name)
            except (SyntaxError, ValueError):
                pass
            c1 = time.process_time()
            try:
                analyze_source(data, str(root / name) if root else name)
            except Exception:  # reported by time_analyze
                pass
            c2 = time.process_time()
            parse[name] = min(parse[name], c1 - c0)
            analyse[name] = min(analyse[name], c2 - c1)
    return sum(parse.values()), sum(analyse.values())


class FileTimeout(Exception):
    pass


def _alarm(_signum, _frame):
    raise FileTimeout()


def time_analyze(sources: Dict[str, bytes], repeat: int, file_timeout: float, root: Optional[Path] = None):
    """In-process ``analyze_source`` per file: (best total seconds, best total CPU seconds,
    per-file seconds, diagnostics, crashes). Each file is named by its path under ``root``
    (when given), so that the analysis follows the package's imports as ``gradwarden check``
    does. A crash (an exception out of the engine) or a file over ``file_timeout`` seconds
    (SIGALRM, POSIX) is recorded and the run goes on."""
    try:
        from gradwarden.engine.analyze import analyze_source
    except Exception as exc:  # the engine cannot even be imported
        return None, None, {}, {}, [f"cannot import gradwarden.engine.analyze: {type(exc).__name__}: {exc}"]
    use_alarm = file_timeout > 0 and hasattr(signal, "setitimer")
    if use_alarm:
        old = signal.signal(signal.SIGALRM, _alarm)
    best = best_cpu = float("inf")
    per_file: Dict[str, float] = {}
    diags: Dict[str, list] = {}
    crashes: List[str] = []
    give_up = set()  # timed out once: not retried in later repeats
    try:
        for _ in range(repeat):
            crashes = [c for c in crashes if c.endswith("(timeout)")]
            t_all = cpu_all = 0.0
            for name, data in sources.items():
                if name in give_up:
                    t_all += per_file[name]
                    continue
                c1 = time.process_time()
                t0 = time.perf_counter()
                try:
                    if use_alarm:
                        signal.setitimer(signal.ITIMER_REAL, file_timeout)
                    try:
                        diags[name] = list(analyze_source(data, str(root / name) if root else name))
                    finally:
                        if use_alarm:
                            signal.setitimer(signal.ITIMER_REAL, 0)
                except FileTimeout:
                    diags[name] = []
                    give_up.add(name)
                    crashes.append(f"{name}: over {file_timeout:g}s, abandoned (timeout)")
                except Exception as exc:
                    diags[name] = []
                    tb = traceback.extract_tb(exc.__traceback__)
                    where = f" at {tb[-1].filename}:{tb[-1].lineno}" if tb else ""
                    crashes.append(f"{name}: {type(exc).__name__}: {exc}{where}")
                dt = time.perf_counter() - t0
                cpu_all += time.process_time() - c1
                per_file[name] = min(per_file.get(name, dt), dt)
                t_all += dt
            best = min(best, t_all)
            best_cpu = min(best_cpu, cpu_all)
    finally:
        if use_alarm:
            signal.signal(signal.SIGALRM, old)
    return best, best_cpu, per_file, diags, crashes


def run_gradwarden_cli(files: List[str], cwd: Path, repeat: int, jobs: Optional[int], timeout: float):
    py, env = gradwarden_python()
    cmd = [py, "-m", "gradwarden", "check", "--output-format", "json", "--isolated",
           "--no-respect-gitignore", "--no-progress", "--no-cache"]  # the analysis itself, every run
    if jobs:
        cmd += ["-j", str(jobs)]
    timed_subprocess(cmd + files[:1], cwd, env, timeout)  # warm-up (bytecode caches), not timed
    best = None
    for _ in range(repeat):
        out, wall, cpu = timed_subprocess(cmd + files, cwd, env, timeout)
        if best is None or wall < best[1]:
            best = (out, wall, cpu)
    out, wall, cpu = best
    findings: List[dict] = []
    problem = None
    if out.returncode == -9:
        problem = f"killed after {timeout:g}s (--cli-timeout)"
    elif out.returncode not in (0, 1):
        problem = f"exit code {out.returncode}"
    try:
        findings = json.loads(out.stdout or "[]")
    except ValueError as exc:
        problem = (problem + "; " if problem else "") + f"stdout is not JSON ({exc})"
    return {
        "cmd": " ".join(cmd) + " FILES...",
        "wall_s": wall,
        "cpu_s": cpu,
        "exit_code": out.returncode,
        "problem": problem,
        "stderr_tail": out.stderr[-3000:],
        "findings": findings,
    }


def run_gradwarden_cached(files: List[str], cwd: Path, repeat: int, jobs: Optional[int], timeout: float):
    """``gradwarden check`` with its result cache: cold (an emptied ``--cache-dir`` each run)
    and warm (the same tree again, nothing changed); best wall of ``repeat`` runs each."""
    py, env = gradwarden_python()
    cache_dir = CACHE / "gradwarden-result-cache"
    cmd = [py, "-m", "gradwarden", "check", "--output-format", "json", "--isolated",
           "--no-respect-gitignore", "--no-progress", "--cache-dir", str(cache_dir)]
    if jobs:
        cmd += ["-j", str(jobs)]
    cold = warm = None
    outputs = set()
    for _ in range(repeat):
        shutil.rmtree(cache_dir, ignore_errors=True)
        out, wall, cpu = timed_subprocess(cmd + files, cwd, env, timeout)
        outputs.add(out.stdout)
        if cold is None or wall < cold[0]:
            cold = (wall, cpu, out.returncode)
        out, wall, cpu = timed_subprocess(cmd + files, cwd, env, timeout)
        outputs.add(out.stdout)
        if warm is None or wall < warm[0]:
            warm = (wall, cpu, out.returncode)
    shutil.rmtree(cache_dir, ignore_errors=True)
    return {"cmd": " ".join(cmd) + " FILES...", "cold_wall_s": cold[0], "cold_cpu_s": cold[1],
            "warm_wall_s": warm[0], "warm_cpu_s": warm[1], "exit_codes": [cold[2], warm[2]],
            "same_output": len(outputs) == 1}


TORCHFIX_LINE = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<row>\d+):(?P<col>\d+):? (?P<code>TOR\d+)")


def run_torchfix(exe: Path, files: List[str], cwd: Path, repeat: int, jobs: Optional[int], timeout: float):
    cmd = [str(exe)] + (["-j", str(jobs)] if jobs else [])
    timed_subprocess([str(exe), "--version"], cwd, None, timeout)  # warm-up
    best = None
    for _ in range(repeat):
        out, wall, cpu = timed_subprocess(cmd + files, cwd, None, timeout)
        if best is None or wall < best[1]:
            best = (out, wall, cpu)
    out, wall, cpu = best
    codes = Counter(m.group("code") for m in map(TORCHFIX_LINE.match, out.stdout.splitlines()) if m)
    checked = re.search(r"Finished checking (\d+) files", out.stderr)
    return {
        "cmd": " ".join(cmd) + " FILES...",
        "wall_s": wall,
        "cpu_s": cpu,
        "exit_code": out.returncode,
        "files_checked": int(checked.group(1)) if checked else None,
        "findings": sum(codes.values()),
        "findings_by_code": dict(codes.most_common()),
        "stderr_tail": out.stderr[-2000:],
    }


# --------------------------------------------------------------------------- report


def ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    if a is None or b is None or b <= 0:
        return None
    return a / b


def fmt_ratio(r: Optional[float]) -> str:
    return "n/a" if r is None else f"{r:.1f}x"


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", metavar="OUT", help="also save the numbers (and findings) as JSON")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each measurement; the best is kept")
    ap.add_argument("--rounds", type=int, default=5,
                    help="rounds of the file-by-file measurement (each file's fastest is kept)")
    ap.add_argument("--jobs", type=int, default=None,
                    help="pass -j N to both gradwarden and torchfix (default: each tool's own default)")
    ap.add_argument("--file-timeout", type=float, default=30.0,
                    help="in-process: abandon analyze_source on a file after this many seconds (0: never)")
    ap.add_argument("--cli-timeout", type=float, default=900.0,
                    help="kill a gradwarden or torchfix run after this many seconds")
    ap.add_argument("--setup-only", action="store_true", help="download and install, then stop")
    ap.add_argument("--no-torchfix", action="store_true", help="skip the torchfix venv and run")
    args = ap.parse_args(argv)
    repeat = max(1, args.repeat)

    CACHE.mkdir(parents=True, exist_ok=True)
    py = ensure_venv()
    pkg = ensure_timm(py)
    torchfix = None if args.no_torchfix else ensure_torchfix()
    if args.setup_only:
        print(f"timm {TIMM_VERSION}: {pkg}")
        print(f"torchfix {TORCHFIX_VERSION}: {torchfix or 'skipped'}")
        return 0

    root = pkg.parent
    files = sorted(p.relative_to(root).as_posix() for p in pkg.rglob("*.py"))
    sources = {f: (root / f).read_bytes() for f in files}
    n_lines = sum(data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1) for data in sources.values())
    n_bytes = sum(len(d) for d in sources.values())
    log(f"{len(files)} files, {n_lines} lines")

    inter_parse, inter_analyse = time_interleaved(sources, max(1, args.rounds), root)
    log(f"file by file: ast.parse {inter_parse:.3f}s, analyze_source {inter_analyse:.3f}s cpu")
    ast_s, ast_cpu, ast_errors = time_ast(sources, repeat)
    log(f"ast.parse: {ast_s:.3f}s")
    gw_s, gw_cpu, gw_per_file, gw_diags, gw_crashes = time_analyze(sources, repeat, args.file_timeout, root)
    log(f"analyze_source in-process: {gw_s if gw_s is None else round(gw_s, 3)}s, {len(gw_crashes)} crash(es)")
    cli = run_gradwarden_cli(files, root, repeat, args.jobs, args.cli_timeout)
    log(f"gradwarden check: {cli['wall_s']:.2f}s wall")
    cached = run_gradwarden_cached(files, root, repeat, args.jobs, args.cli_timeout)
    log(f"gradwarden check, cold cache: {cached['cold_wall_s']:.2f}s; warm: {cached['warm_wall_s']:.2f}s wall")
    tf = run_torchfix(torchfix, files, root, repeat, args.jobs, args.cli_timeout) if torchfix else None
    if tf:
        log(f"torchfix: {tf['wall_s']:.2f}s wall")

    # findings: from the CLI (noqa and configuration applied), else from the in-process run
    if cli["problem"] is None:
        findings = [(d.get("filename", "?"), d.get("location", {}).get("row", 0), d.get("code", "?"),
                     str(d.get("severity", "error")).lower(), d.get("message", "")) for d in cli["findings"]]
        findings_from = "gradwarden check"
    else:
        findings = [(name, d.span.row, d.code, d.severity.name.lower(), d.message)
                    for name, ds in gw_diags.items() for d in ds]
        findings_from = "analyze_source (the CLI failed)"
    errors = sorted(f for f in findings if f[3] == "error")
    by_sev = Counter(f[3] for f in findings)
    by_code = Counter(f"{f[2]} ({f[3]})" for f in findings)

    def lps(seconds: Optional[float]) -> Optional[float]:
        return None if not seconds else n_lines / seconds

    cli_killed = cli["exit_code"] == -9
    tf_killed = bool(tf) and tf["exit_code"] == -9
    timeouts = [c for c in gw_crashes if c.endswith("(timeout)")]
    # A killed run's time means nothing; an in-process total with abandoned files is a lower bound.
    r_tf_wall = ratio(tf["wall_s"], cli["wall_s"]) if tf and not (cli_killed or tf_killed) else None
    r_tf_cpu = ratio(tf["cpu_s"], cli["cpu_s"]) if tf and not (cli_killed or tf_killed) else None
    r_ast = ratio(gw_s, ast_s)
    r_cli_ast = ratio(cli["wall_s"], ast_s) if not cli_killed else None

    w = sys.stdout.write
    w(f"\n=== gradwarden vs torchfix on timm {TIMM_VERSION} "
      f"({platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores) ===\n")
    w(f"files: {len(files)}   lines: {n_lines}   bytes: {n_bytes}\n\n")
    w(f"{'measure':44} {'wall s':>9} {'cpu s':>9} {'lines/s':>11}\n")

    def row(label: str, wall: Optional[float], cpu: Optional[float]) -> None:
        wl = "n/a" if wall is None else f"{wall:9.3f}"
        cp = "" if cpu is None else f"{cpu:9.3f}"
        l_s = lps(wall)
        w(f"{label:44} {wl:>9} {cp:>9} {'n/a' if l_s is None else f'{l_s:11,.0f}':>11}\n")

    row("(a) ast.parse, in-process", ast_s, ast_cpu)
    row("(b) gradwarden analyze_source, in-process" + (" [>=]" if timeouts else ""), gw_s, gw_cpu)
    row("(b) gradwarden check --no-cache (subprocess)" + (" [KILLED]" if cli_killed else ""), cli["wall_s"],
        cli["cpu_s"])
    row("(b) gradwarden check, cold cache (subprocess)", cached["cold_wall_s"], cached["cold_cpu_s"])
    row("(b) gradwarden check, warm cache (unchanged tree)", cached["warm_wall_s"], cached["warm_cpu_s"])
    if tf:
        row("(c) torchfix (subprocess)" + (" [KILLED]" if tf_killed else ""), tf["wall_s"], tf["cpu_s"])
    if timeouts:
        w(f"[>=] {len(timeouts)} file(s) abandoned after --file-timeout {args.file_timeout:g}s: a lower bound\n")
    if cli_killed or tf_killed:
        w(f"[KILLED] ran past --cli-timeout {args.cli_timeout:g}s: no ratio\n")
    w("\n")
    if tf:
        ok = r_tf_wall is not None and r_tf_wall >= TARGET_VS_TORCHFIX
        w(f"gradwarden check vs torchfix, wall: {fmt_ratio(r_tf_wall)} faster "
          f"(target >= {TARGET_VS_TORCHFIX:.0f}x: {'met' if ok else 'NOT met'}); cpu: {fmt_ratio(r_tf_cpu)}\n")
    ok = r_ast is not None and r_ast <= TARGET_VS_AST
    w(f"gradwarden analyze_source vs ast.parse: {'>= ' if timeouts else ''}{fmt_ratio(r_ast)} the time "
      f"(target <= {TARGET_VS_AST:.0f}x: {'met' if ok else 'NOT met'}); "
      f"gradwarden check wall vs ast.parse: {fmt_ratio(r_cli_ast)}\n")
    r_warm = ratio(cached["warm_wall_s"], cached["cold_wall_s"])
    r_cold_ast = ratio(cached["cold_wall_s"], ast_s)
    w(f"re-run: warm / cold cache: {'n/a' if r_warm is None else f'{r_warm:.3f}x'} the time (target <= {TARGET_WARM_VS_COLD:g}x: "
      f"{'met' if r_warm is not None and r_warm <= TARGET_WARM_VS_COLD else 'NOT met'}); cold cache vs "
      f"ast.parse: {fmt_ratio(r_cold_ast)} (target <= {TARGET_VS_AST:.0f}x: "
      f"{'met' if r_cold_ast is not None and r_cold_ast <= TARGET_VS_AST else 'NOT met'}); "
      f"same output cold and warm: {'yes' if cached['same_output'] else 'NO'}\n")
    # CPU time: steadier than wall time on a shared machine (and it counts the CLI's workers)
    r_cpu_inproc = ratio(gw_cpu, ast_cpu)
    r_cpu_cold = ratio(cached["cold_cpu_s"], ast_cpu)
    r_cpu_warm = ratio(cached["warm_cpu_s"], cached["cold_cpu_s"])
    w(f"cpu: analyze_source vs ast.parse: {fmt_ratio(r_cpu_inproc)}; gradwarden check cold cache vs ast.parse: "
      f"{fmt_ratio(r_cpu_cold)} (target <= {TARGET_VS_AST:.0f}x: "
      f"{'met' if r_cpu_cold is not None and r_cpu_cold <= TARGET_VS_AST else 'NOT met'}); warm / cold: "
      f"{'n/a' if r_cpu_warm is None else f'{r_cpu_warm:.3f}x'} (target <= {TARGET_WARM_VS_COLD:g}x: "
      f"{'met' if r_cpu_warm is not None and r_cpu_warm <= TARGET_WARM_VS_COLD else 'NOT met'})\n")
    r_inter = ratio(inter_analyse, inter_parse)
    w(f"cpu, file by file (each file parsed, then analysed; fastest of {max(1, args.rounds)} rounds): "
      f"ast.parse {inter_parse:.3f}s, analyze_source {inter_analyse:.3f}s: {fmt_ratio(r_inter)} "
      f"(target <= {TARGET_VS_AST:.0f}x: {'met' if r_inter is not None and r_inter <= TARGET_VS_AST else 'NOT met'})\n")
    if gw_per_file:
        slow = sorted(gw_per_file.items(), key=lambda kv: -kv[1])[:5]
        w("slowest files (analyze_source): " + ", ".join(f"{n} {t * 1000:.0f}ms" for n, t in slow) + "\n")
    if tf:
        w(f"torchfix: exit {tf['exit_code']}, {tf['files_checked']} files checked "
          f"(it skips files without 'torch'), {tf['findings']} findings {tf['findings_by_code']}\n")

    w(f"\ngradwarden findings ({findings_from}): {len(findings)} "
      f"({', '.join(f'{n} {s}' for s, n in by_sev.most_common()) or 'none'})\n")
    for code, n in by_code.most_common():
        w(f"  {n:5d}  {code}\n")
    w(f"\nerror-level findings on timm ({len(errors)}; each is a false alarm to justify or remove):\n")
    for name, row_, code, _sev, msg in errors:
        w(f"  {name}:{row_}: {code} {msg}\n")
    if not errors:
        w("  (none)\n")

    problems = []
    if cli["problem"]:
        problems.append(f"gradwarden check failed: {cli['problem']}\n{cli['stderr_tail']}")
    elif cli["exit_code"] not in (0, 1) or "could not be checked" in cli["stderr_tail"]:
        problems.append(f"gradwarden check reported errors:\n{cli['stderr_tail']}")
    if gw_crashes:
        problems.append("analyze_source crashed on:\n" + "\n".join("  " + c for c in gw_crashes))
    if ast_errors:
        problems.append("ast.parse failed on:\n" + "\n".join("  " + e for e in ast_errors))
    if tf and tf["exit_code"] not in (0, 1):
        problems.append(f"torchfix exit {tf['exit_code']}:\n{tf['stderr_tail']}")
    if problems:
        w("\nPROBLEMS:\n" + "\n".join(problems) + "\n")

    if args.json:
        data = {
            "timm_version": TIMM_VERSION,
            "torchfix_version": TORCHFIX_VERSION,
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
            "repeat": repeat,
            "jobs": args.jobs,
            "files": len(files),
            "lines": n_lines,
            "bytes": n_bytes,
            "ast_parse_s": ast_s,
            "ast_parse_cpu_s": ast_cpu,
            "gradwarden_inprocess_cpu_s": gw_cpu,
            "gradwarden_inprocess_s": gw_s,
            "gradwarden_inprocess_is_lower_bound": bool(timeouts),
            "gradwarden_inprocess_per_file_s": gw_per_file,
            "gradwarden_cli": {k: v for k, v in cli.items() if k != "findings"},
            "gradwarden_cli_cached": cached,
            "torchfix": tf,
            "lines_per_s": {
                "ast_parse": lps(ast_s),
                "gradwarden_inprocess": lps(gw_s),
                "gradwarden_cli": lps(cli["wall_s"]),
                "torchfix": lps(tf["wall_s"]) if tf else None,
            },
            "ratio_torchfix_over_gradwarden_wall": r_tf_wall,
            "ratio_torchfix_over_gradwarden_cpu": r_tf_cpu,
            "ratio_gradwarden_inprocess_over_ast": r_ast,
            "ratio_gradwarden_cli_over_ast": r_cli_ast,
            "file_by_file_cpu_s": {"ast_parse": inter_parse, "analyze_source": inter_analyse,
                                   "rounds": max(1, args.rounds)},
            "ratio_gradwarden_over_ast_file_by_file_cpu": r_inter,
            "targets": {"vs_torchfix_min": TARGET_VS_TORCHFIX, "vs_ast_max": TARGET_VS_AST},
            "findings_by_severity": dict(by_sev),
            "findings_by_code": dict(by_code),
            "error_findings": [{"file": f[0], "row": f[1], "code": f[2], "message": f[4]} for f in errors],
            "crashes": gw_crashes,
            "problems": problems,
        }
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
