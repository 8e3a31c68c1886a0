"""The editor stack the VS Code end-to-end test runs on, installed idempotently and cached.

VS Code itself cannot be downloaded here (Microsoft's test harnesses fetch it from
update.code.visualstudio.com), so the test runs VS Code 1.100.3 as code-server 4.100.3 (the
last release whose ``engines.node`` is 20) in Debian's Chromium, driven by playwright-core.

What this module installs, each step skipped when already done:

* apt (as root, ``apt-get update`` first, waiting on / retrying the dpkg lock): ``chromium``,
  ``ripgrep`` and, while code-server still has to be built, ``libkrb5-dev`` (its ``kerberos``
  native module; prebuilt binaries would come from GitHub) and the node-gyp toolchain.
* npm: ``code-server@4.100.3`` into ``<cache>/code-server-4.100.3`` (stamped when complete).
  Its postinstall builds native modules with node-gyp against the Debian Node headers
  (``npm_config_nodedir=/usr``), runs ``npx node-gyp`` (``npm_config_yes=true``, since a
  ``yes=false`` in ~/.npmrc would cancel it), and ``@vscode/ripgrep`` downloads rg from GitHub:
  its download cache (under ``$TMPDIR``) is seeded with Debian's rg 13.0.0 instead. npm 11.16+
  skips dependencies' install scripts unless approved, and code-server's postinstall runs nested
  ``npm install``s that our package.json's ``allowScripts`` cannot reach: that one install runs with
  ``npm_config_dangerously_allow_all_scripts=true`` (the pinned code-server release's own scripts).
* npm: the repository's own devDependencies (esbuild, typescript, @vscode/vsce, playwright-core)
  with ``npm ci`` when ``node_modules`` does not match ``package-lock.json``.

The cache is ``<repo>/.cache/editor-stack`` (``$GRADWARDEN_EDITOR_STACK`` overrides it); npm's
download cache lives there too, so a fresh clone that keeps that folder reinstalls offline-fast.
Every failure raises ``StackError`` with the command, the log file and its tail.

Run by hand: ``.venv/bin/python tests/vscode/editor_stack.py`` (prints what it did and timings).
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Sequence

REPO_ROOT = Path(__file__).resolve().parents[2]
STACK_ENV = "GRADWARDEN_EDITOR_STACK"
CODE_SERVER_VERSION = "4.100.3"
# code-server 4.100.3 pins @vscode/ripgrep 1.15.11, which fetches this rg build from GitHub.
RIPGREP_CACHE = ("vscode-ripgrep-cache-1.15.11", "ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz")
CHROMIUM = "/usr/bin/chromium"
APT_ATTEMPTS = 4
LOG: Callable[[str], None] = lambda msg: print(f"[editor-stack] {msg}", file=sys.stderr, flush=True)


class StackError(RuntimeError):
    """An install step failed; the message says which, and how to reproduce it."""


@dataclass(frozen=True)
class Stack:
    root: Path
    code_server: Path  # the code-server launcher script
    chromium: Path
    node_modules: Path  # the repository's node_modules (playwright-core, vsce, esbuild, ...)
    timings: Dict[str, float]


def stack_dir() -> Path:
    override = os.environ.get(STACK_ENV)
    return Path(override).expanduser().resolve() if override else REPO_ROOT / ".cache" / "editor-stack"


def npm_env(root: Path, **extra: str) -> Dict[str, str]:
    env = dict(os.environ)
    env.update(
        npm_config_cache=str(root / "npm-cache"),
        npm_config_yes="true",
        npm_config_nodedir="/usr",
        npm_config_fund="false",
        npm_config_audit="false",
        npm_config_update_notifier="false",
    )
    env.update(extra)
    return env


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def run_logged(cmd: Sequence[str], log: Path, what: str, cwd: Optional[Path] = None,
               env: Optional[Dict[str, str]] = None, timeout: float = 1800) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as fh:
        fh.write(f"\n$ {' '.join(cmd)}  (cwd={cwd or os.getcwd()})\n")
        fh.flush()
        try:
            proc = subprocess.run(list(cmd), cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, timeout=timeout)
        except FileNotFoundError as exc:
            raise StackError(f"{what}: {cmd[0]} not found ({exc})") from exc
        except subprocess.TimeoutExpired as exc:
            raise StackError(f"{what}: timed out after {timeout:.0f}s: {' '.join(cmd)}\nlog: {log}\n{_tail(log)}") from exc
    if proc.returncode != 0:
        raise StackError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\nlog: {log}\n--- last lines ---\n{_tail(log)}")


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Serialise installs between concurrent test runs (several pytest sessions share the cache)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


# --------------------------------------------------------------------------- apt
def _dpkg_installed(pkg: str) -> bool:
    proc = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True)
    return proc.returncode == 0 and "install ok installed" in proc.stdout


def missing_apt_packages(need_build_tools: bool) -> List[str]:
    missing = []
    if not Path(CHROMIUM).exists():
        missing.append("chromium")
    if not shutil.which("rg"):
        missing.append("ripgrep")
    if need_build_tools:
        if not _dpkg_installed("libkrb5-dev"):
            missing.append("libkrb5-dev")
        for tool, pkg in (("g++", "g++"), ("make", "make"), ("pkg-config", "pkg-config"), ("python3", "python3")):
            if not shutil.which(tool):
                missing.append(pkg)
    return missing


def ensure_apt(packages: List[str], logs: Path) -> None:
    if not packages:
        return
    cmd_text = f"apt-get update && apt-get install -y {' '.join(packages)}"
    if os.geteuid() != 0:
        raise StackError(f"the VS Code e2e test needs Debian packages {packages} and is not running as root; "
                         f"install them with: sudo sh -c '{cmd_text}'")
    if not shutil.which("apt-get"):
        raise StackError(f"the VS Code e2e test needs {packages} and apt-get is missing (Debian 12 expected)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    lock_wait = ["-o", "DPkg::Lock::Timeout=300"]
    log = logs / "apt.log"
    last: Optional[StackError] = None
    for attempt in range(1, APT_ATTEMPTS + 1):
        try:
            LOG(f"apt: installing {' '.join(packages)} (attempt {attempt})")
            run_logged(["apt-get", *lock_wait, "update"], log, "apt-get update", env=env, timeout=900)
            run_logged(["apt-get", *lock_wait, "install", "-y", *packages], log, "apt-get install", env=env, timeout=1800)
            return
        except StackError as exc:  # typically the dpkg lock held by someone else, or a mirror hiccup
            last = exc
            time.sleep(10 * attempt)
    raise StackError(f"could not install {packages} with apt after {APT_ATTEMPTS} attempts "
                     f"(reproduce with: {cmd_text})\n{last}")


# --------------------------------------------------------------------------- code-server
def code_server_dir(root: Path) -> Path:
    return root / f"code-server-{CODE_SERVER_VERSION}"


def code_server_bin(root: Path) -> Path:
    return code_server_dir(root) / "node_modules" / ".bin" / "code-server"


def code_server_ready(root: Path) -> bool:
    return (code_server_dir(root) / ".complete").is_file() and code_server_bin(root).exists()


def seed_ripgrep_cache(tmp: Path) -> None:
    rg = shutil.which("rg")
    if not rg:
        raise StackError("ripgrep (rg) is missing: it seeds @vscode/ripgrep's download cache")
    target = tmp / RIPGREP_CACHE[0] / RIPGREP_CACHE[1]
    if target.is_file():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    data = Path(rg).read_bytes()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("rg")
        info.size, info.mode = len(data), 0o755
        tar.addfile(info, io.BytesIO(data))
    target.write_bytes(buf.getvalue())


def ensure_code_server(root: Path, logs: Path) -> None:
    if code_server_ready(root):
        return
    if not shutil.which("npm"):
        raise StackError("npm is missing (Node 20 + npm expected)")
    target = code_server_dir(root)
    if target.exists():
        shutil.rmtree(target)  # a half-finished install: start over
    target.mkdir(parents=True)
    (target / "package.json").write_text(json.dumps({"name": "gradwarden-editor-stack", "private": True}) + "\n")
    tmp = root / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    seed_ripgrep_cache(tmp)
    LOG(f"npm: installing code-server@{CODE_SERVER_VERSION} (builds native modules; a few minutes)")
    run_logged(["npm", "install", "--unsafe-perm", "--foreground-scripts", "--no-save",
                f"code-server@{CODE_SERVER_VERSION}"],
               logs / "npm-code-server.log", f"npm install code-server@{CODE_SERVER_VERSION}",
               cwd=target, env=npm_env(root, TMPDIR=str(tmp), npm_config_dangerously_allow_all_scripts="true"),
               timeout=2400)
    if not code_server_bin(root).exists():
        raise StackError(f"code-server installed but {code_server_bin(root)} is missing; see {logs / 'npm-code-server.log'}")
    (target / ".complete").write_text(time.strftime("%Y-%m-%dT%H:%M:%S") + "\n")


# --------------------------------------------------------------------------- repo node_modules
def lock_digest(repo: Path) -> str:
    h = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        p = repo / name
        h.update(p.read_bytes() if p.exists() else b"-")
    return h.hexdigest()


def ensure_node_modules(repo: Path, root: Path, logs: Path) -> None:
    stamp = repo / "node_modules" / ".gradwarden-lock-digest"
    digest = lock_digest(repo)
    if stamp.is_file() and stamp.read_text().strip() == digest:
        return
    if not (repo / "package-lock.json").is_file():
        raise StackError(f"{repo / 'package-lock.json'} is missing: run `npm install` at the repository root once and commit it")
    LOG("npm ci: the extension's devDependencies")
    run_logged(["npm", "ci", "--no-fund", "--no-audit"], logs / "npm-ci.log", "npm ci (extension devDependencies)",
               cwd=repo, env=npm_env(root), timeout=1200)
    stamp.write_text(digest + "\n")


# --------------------------------------------------------------------------- entry point
def ensure_stack(repo: Path = REPO_ROOT) -> Stack:
    root = stack_dir()
    logs = root / "logs"
    timings: Dict[str, float] = {}
    with locked(root / ".lock"):
        t = time.monotonic()
        ensure_apt(missing_apt_packages(need_build_tools=not code_server_ready(root)), logs)
        timings["apt"] = time.monotonic() - t
        t = time.monotonic()
        ensure_code_server(root, logs)
        timings["code-server"] = time.monotonic() - t
        t = time.monotonic()
        ensure_node_modules(repo, root, logs)
        timings["node_modules"] = time.monotonic() - t
    for path, what in ((Path(CHROMIUM), "chromium"), (repo / "node_modules" / "playwright-core", "playwright-core")):
        if not path.exists():
            raise StackError(f"{what} missing after install: {path}")
    return Stack(root=root, code_server=code_server_bin(root), chromium=Path(CHROMIUM),
                 node_modules=repo / "node_modules", timings=timings)


if __name__ == "__main__":
    t0 = time.monotonic()
    try:
        stack = ensure_stack()
    except StackError as exc:
        print(f"editor stack install failed:\n{exc}", file=sys.stderr)
        sys.exit(1)
    print(json.dumps({"root": str(stack.root), "code_server": str(stack.code_server),
                      "timings": {k: round(v, 1) for k, v in stack.timings.items()},
                      "total": round(time.monotonic() - t0, 1)}, indent=2))
