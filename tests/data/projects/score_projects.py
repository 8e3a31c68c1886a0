#!/usr/bin/env python3
"""Score gradwarden on labelled multi-file projects, run as a user runs it: from inside each project.

Each project is a folder with a ``case.toml`` at its root (format: README.md beside this file).
For every project, the checker runs in a fresh copy of the folder, with the copy as the working
directory and ``.`` as the path (``gradwarden check --output-format json .``), and its findings are
read back as ``relative/path.py:LINE``:

- a hazard project (``expect = "error"`` or ``"silent"``) is found when an error or warning lies
  on one of its ``cause`` locations;
- an *extra* is an error or warning on any other location of a hazard project, except the
  ``neutral`` ones (where torch raises, when that is not where the fix goes);
- a correct project (``expect = "ok"``: fixed twins and look-alikes) is *flagged* when it gets
  any error or warning.

``--lsp`` adds the language-server measurement, reported separately: the server is started with
the project copy as its workspace, the file(s) holding the cause are opened (every ``.py`` file
of a correct project), and a hazard is found when the diagnostics published for an opened file
put an error or warning on a cause line of that file.

usage: score_projects.py [DIR] [--cmd "gradwarden check --output-format json"] [--verbose]
                         [--lsp] [--lsp-cmd "gradwarden serve"] [--in-place] [-j N]
prints per-family recall, extras, flagged correct projects, and a last line
``recall R% (H/T) false_alarms F projects N`` (false alarms = extras + findings in correct
projects, as shared/tools/score.py counts them); with --lsp, a block ending in
``lsp recall R% (H/T) false_alarms F projects N``.

Standard library only (Python 3.9+; ``tomli`` is used below 3.11), so that it runs beside any
install of the checker.
"""
from __future__ import annotations

import argparse
import json
import os
import queue
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

HERE = Path(__file__).resolve().parent
HAZARD = ("error", "silent")
EXPECTS = ("error", "silent", "ok")
FAMILIES = "ABCDEFGH"
CHECK_TIMEOUT = 600
LSP_TIMEOUT = 180.0
IGNORED_DIRS = {"__pycache__", ".gradwarden_cache", ".git"}

Loc = Tuple[str, int]  # (path relative to the project root, 1-based line)


# --- labels ---------------------------------------------------------------------------------


def parse_loc(text: str) -> Loc:
    """``"models/layers.py:14"`` -> ``("models/layers.py", 14)``."""
    path, sep, line = str(text).rpartition(":")
    if not sep or not path or not line.strip().isdigit():
        raise ValueError(f"not a `relative/path.py:LINE` location: {text!r}")
    return Path(path.strip()).as_posix(), int(line)


def show_loc(loc: Loc) -> str:
    return f"{loc[0]}:{loc[1]}"


@dataclass(frozen=True)
class Project:
    name: str
    path: Path
    meta: Dict[str, object] = field(hash=False, compare=False)
    family: str = "?"
    expect: str = ""
    entry: str = ""
    cause: FrozenSet[Loc] = frozenset()
    neutral: FrozenSet[Loc] = frozenset()

    @property
    def is_hazard(self) -> bool:
        return self.expect in HAZARD

    def __str__(self) -> str:
        return self.name


def read_project(folder: Path, root: Optional[Path] = None) -> Project:
    """The project whose ``case.toml`` is in ``folder`` (raises ValueError on a malformed label)."""
    meta = tomllib.loads((folder / "case.toml").read_text(encoding="utf-8"))
    name = folder.relative_to(root).as_posix() if root else folder.name
    expect = str(meta.get("expect", "")).strip().lower()
    try:
        cause = frozenset(parse_loc(x) for x in meta.get("cause", []))
        neutral = frozenset(parse_loc(x) for x in meta.get("neutral", []))
    except ValueError as exc:
        raise ValueError(f"{name}/case.toml: {exc}") from None
    return Project(name=name, path=folder, meta=meta, family=str(meta.get("family", "?"))[:1].upper() or "?",
                   expect=expect, entry=str(meta.get("entry", "")), cause=cause, neutral=neutral)


def load_projects(root: Path) -> List[Project]:
    """Every folder under ``root`` with a ``case.toml`` (not looking inside a project), sorted."""
    out: List[Project] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS and not d.startswith("."))
        if "case.toml" in filenames:
            out.append(read_project(Path(dirpath), root))
            dirnames[:] = []
    return sorted(out, key=lambda p: p.name)


def project_files(folder: Path) -> List[Path]:
    """The project's files (relative), caches and bytecode left out."""
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS)
        for f in sorted(filenames):
            if not f.endswith((".pyc", ".pyo")):
                out.append((Path(dirpath) / f).relative_to(folder))
    return out


def copy_project(project: Project, dest_parent: Path) -> Path:
    """A fresh copy of the project (what a user's checkout holds), named like the project."""
    dest = dest_parent / Path(project.name).name
    for rel in project_files(project.path):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(project.path / rel, dest / rel)
    return dest


# --- findings -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    file: str  # relative to the project root, posix
    row: int
    code: str
    severity: str
    message: str

    @property
    def loc(self) -> Loc:
        return (self.file, self.row)

    @property
    def loud(self) -> bool:
        """score.py's rule: error or warning (LSP severities 1 and 2), or no severity given."""
        return str(self.severity).lower() in ("error", "warning", "1", "2")


def _rel(filename: str, cwd: Path) -> str:
    p = Path(filename)
    if not p.is_absolute():
        p = cwd / p
    try:
        return Path(os.path.relpath(os.path.realpath(p), os.path.realpath(cwd))).as_posix()
    except ValueError:  # another drive
        return p.as_posix()


def check_project(project: Project, cmd: Sequence[str], in_place: bool = False) -> List[Finding]:
    """Run the checker from inside (a copy of) the project, on ``.``."""
    with tempfile.TemporaryDirectory(prefix="gw-project-") as tmp:
        cwd = project.path if in_place else copy_project(project, Path(tmp))
        proc = subprocess.run(list(cmd) + ["."], cwd=str(cwd), capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=CHECK_TIMEOUT)
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"{project}: checker exited {proc.returncode}:\n{proc.stderr[-2000:]}")
        data = json.loads(proc.stdout or "[]")
        return [Finding(_rel(d["filename"], cwd), int(d["location"]["row"]), str(d.get("code", "")),
                        str(d.get("severity", "error")), str(d.get("message", ""))) for d in data]


# --- the language server --------------------------------------------------------------------


class LspClient:
    """A minimal LSP client over stdio (push diagnostics only), enough to open files and read
    what the server publishes for them."""

    def __init__(self, cmd: Sequence[str], cwd: Path):
        self.proc = subprocess.Popen(list(cmd), cwd=str(cwd), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.messages: "queue.Queue[dict]" = queue.Queue()
        self.published: Dict[str, List[dict]] = {}
        self._id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            if length is None:
                continue
            self.messages.put(json.loads(out.read(length)))

    def _send(self, msg: dict) -> None:
        body = json.dumps(msg).encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params: object) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: object, deadline: float) -> object:
        self._id += 1
        my_id = self._id
        self._send({"jsonrpc": "2.0", "id": my_id, "method": method, "params": params})
        while True:
            msg = self._next(deadline)
            if msg.get("id") == my_id and "method" not in msg:
                return msg.get("result")

    def _next(self, deadline: float) -> dict:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the language server did not answer in time")
        try:
            msg = self.messages.get(timeout=left)
        except queue.Empty:
            raise TimeoutError("the language server did not answer in time") from None
        if "method" in msg and "id" in msg:  # a request from the server: answer it plainly
            self._send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
        elif msg.get("method") == "textDocument/publishDiagnostics":
            self.published[msg["params"]["uri"]] = msg["params"]["diagnostics"]
        return msg

    def wait_published(self, uris: Iterable[str], deadline: float) -> None:
        want = set(uris)
        while not want <= set(self.published):
            self._next(deadline)

    def close(self) -> None:
        try:
            self.request("shutdown", None, time.monotonic() + 10)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001 - a server that does not stop is killed
            pass
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def lsp_project(project: Project, cmd: Sequence[str], in_place: bool = False) -> List[Finding]:
    """Open the files that hold the causes (every .py file of a correct project) in a server
    whose workspace is the project; return what it publishes for them."""
    with tempfile.TemporaryDirectory(prefix="gw-project-lsp-") as tmp:
        root = project.path if in_place else copy_project(project, Path(tmp))
        if project.is_hazard:
            rels = sorted({f for f, _ in project.cause})
        else:
            rels = [p.as_posix() for p in project_files(root) if p.suffix == ".py"]
        client = LspClient(cmd, root)
        deadline = time.monotonic() + LSP_TIMEOUT
        try:
            root_uri = root.resolve().as_uri()
            client.request("initialize", {
                "processId": os.getpid(), "rootUri": root_uri, "rootPath": str(root.resolve()),
                "workspaceFolders": [{"uri": root_uri, "name": root.name}],
                "capabilities": {"textDocument": {"publishDiagnostics": {"relatedInformation": True}}},
                "clientInfo": {"name": "score_projects"},
            }, deadline)
            client.notify("initialized", {})
            uris = {}
            for rel in rels:
                path = (root / rel).resolve()
                uri = path.as_uri()
                uris[uri] = rel
                client.notify("textDocument/didOpen", {"textDocument": {
                    "uri": uri, "languageId": "python", "version": 1,
                    "text": path.read_text(encoding="utf-8", errors="surrogateescape")}})
            try:
                client.wait_published(uris, deadline)
            except TimeoutError:  # scored with what was published; said, not hidden
                missing = sorted(rel for uri, rel in uris.items() if uri not in client.published)
                print(f"warning: {project}: the language server published nothing for {', '.join(missing)} "
                      f"within {LSP_TIMEOUT:.0f}s", file=sys.stderr)
        finally:
            client.close()
        sev = {1: "error", 2: "warning", 3: "information", 4: "hint"}
        out = []
        for uri, rel in uris.items():
            for d in client.published.get(uri, []):
                out.append(Finding(rel, int(d["range"]["start"]["line"]) + 1, str(d.get("code", "")),
                                   sev.get(d.get("severity", 1), "error"), str(d.get("message", ""))))
        return out


# --- scoring --------------------------------------------------------------------------------


@dataclass
class Score:
    hits: int
    total: int
    extras: int
    ok_total: int
    ok_flagged: int
    false_alarms: int
    per_family: Dict[str, Tuple[int, int]]
    found: Dict[str, bool]  # hazard project -> found
    details: List[str]

    @property
    def recall(self) -> float:
        return self.hits / self.total if self.total else 0.0

    def lines(self, prefix: str = "", verbose: bool = False) -> List[str]:
        out = [f"{prefix}family {k}: {h}/{t}" for k, (h, t) in sorted(self.per_family.items())]
        out.append(f"{prefix}extra findings on hazard projects: {self.extras}")
        out.append(f"{prefix}correct projects flagged: {self.ok_flagged}/{self.ok_total}")
        if verbose:
            out += self.details
        out.append(f"{prefix}recall {100.0 * self.recall:.0f}% ({self.hits}/{self.total}) "
                   f"false_alarms {self.false_alarms} projects {self.total + self.ok_total}")
        return out


def _describe(findings: Sequence[Finding]) -> str:
    if not findings:
        return "      (no error/warning)"
    return "\n".join(f"      {show_loc(f.loc)}: {f.code} [{f.severity}] {f.message[:160]}"
                     for f in sorted(findings, key=lambda f: (f.file, f.row)))


def score(projects: Sequence[Project], findings: Dict[str, List[Finding]]) -> Score:
    """``findings[project.name]``: what the checker (or the server) reported for the project."""
    fam: Dict[str, List[int]] = defaultdict(lambda: [0, 0])
    extras = ok_total = ok_flagged = alarms = 0
    found: Dict[str, bool] = {}
    details: List[str] = []
    for p in projects:
        got = [f for f in findings.get(p.name, []) if f.loud]
        if p.is_hazard:
            fam[p.family][1] += 1
            hit = any(f.loc in p.cause for f in got)
            fam[p.family][0] += hit
            found[p.name] = hit
            extra = sorted({f.loc for f in got if f.loc not in p.cause and f.loc not in p.neutral})
            extras += len(extra)
            alarms += len(extra)
            if not hit:
                details.append(f"MISS {p.name} (family {p.family}, {p.expect}): want "
                               f"{', '.join(show_loc(c) for c in sorted(p.cause))}\n{_describe(got)}")
            if extra:
                details.append(f"EXTRA {p.name}: {', '.join(show_loc(x) for x in extra)}")
        else:
            ok_total += 1
            locs = sorted({f.loc for f in got})
            if locs:
                ok_flagged += 1
                alarms += len(locs)
                details.append(f"FLAGGED {p.name} (family {p.family}, ok)\n{_describe(got)}")
    hits = sum(h for h, _ in fam.values())
    total = sum(t for _, t in fam.values())
    return Score(hits, total, extras, ok_total, ok_flagged, alarms,
                 {k: (v[0], v[1]) for k, v in fam.items()}, found, details)


def run_all(projects: Sequence[Project], fn: Callable[[Project], List[Finding]], jobs: int
            ) -> Dict[str, List[Finding]]:
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {p.name: pool.submit(fn, p) for p in projects}
        return {name: fut.result() for name, fut in futures.items()}


def command(text: str) -> List[str]:
    """``text`` split like a shell does; a relative program path (``.venv/bin/gradwarden``) is made
    absolute, since the command runs inside each project."""
    cmd = shlex.split(text)
    if cmd and os.sep in cmd[0] and not os.path.isabs(cmd[0]) and os.path.exists(cmd[0]):
        cmd[0] = os.path.abspath(cmd[0])
    return cmd


def default_jobs() -> int:
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:
        n = os.cpu_count() or 2
    return max(1, min(n, 8))


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", nargs="?", default=str(HERE), help="folder holding the projects (default: this one)")
    ap.add_argument("--cmd", default="gradwarden check --output-format json",
                    help="checker command; `.` is appended and it runs inside each project")
    ap.add_argument("--lsp", action="store_true", help="also measure the language server")
    ap.add_argument("--lsp-cmd", default="gradwarden serve", help="language-server command (stdio)")
    ap.add_argument("--in-place", action="store_true",
                    help="run inside the project folders themselves instead of fresh copies")
    ap.add_argument("-j", "--jobs", type=int, default=default_jobs())
    ap.add_argument("--verbose", action="store_true", help="list every miss, extra and flagged project")
    args = ap.parse_args(argv)
    projects = load_projects(Path(args.dir).resolve())
    if not projects:
        print(f"no project (folder with a case.toml) under {args.dir}", file=sys.stderr)
        return 2
    cmd = command(args.cmd)
    found = run_all(projects, lambda p: check_project(p, cmd, args.in_place), args.jobs)
    print(f"== `{args.cmd} .` from inside each project")
    print("\n".join(score(projects, found).lines(verbose=args.verbose)))
    if args.lsp:
        lsp_cmd = command(args.lsp_cmd)
        seen = run_all(projects, lambda p: lsp_project(p, lsp_cmd, args.in_place), args.jobs)
        print(f"== `{args.lsp_cmd}`: the file holding the cause opened in the project's workspace")
        print("\n".join(score(projects, seen).lines(prefix="lsp ", verbose=args.verbose)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
