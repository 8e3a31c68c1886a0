"""The VS Code extension, end to end, in a real VS Code.

VS Code 1.100.3 runs as code-server 4.100.3 on 127.0.0.1 and is driven headless in Debian's
Chromium by playwright-core (``drive.mjs``). The test

1. installs the editor stack if needed (``editor_stack.py``: apt, code-server, npm ci; cached in
   ``.cache/editor-stack``) and builds the ``.vsix`` when its inputs changed (``vsix.py``);
2. installs the ``.vsix`` into a fresh code-server (fresh user-data and extensions folders);
3. opens a workspace with copies of seed cases, ``gradwarden.interpreter`` pointing at the
   test's own Python (it has torch, for the debug run; the server itself runs from the
   libraries bundled in the .vsix) and ``source.fixAll.gradwarden`` on save;
4. drives it and asserts, per feature: the squiggle and the Problems entry (the code and the
   message that ``gradwarden check`` reports for the same file), the hover's version timeline,
   the "Show timeline" link of the hover opening the finding's timeline picture in a webview, a
   quick fix that rewrites the file and clears the diagnostic, fix-all on save, and the debug
   run (from the code lens' command) that marks a diagnostic ``[confirmed]`` in place (CPU).

Screenshots of every step, the driver's result.json, code-server's log and the extension's
output channel are kept in a temporary folder named in every failure message (or in
``$GRADWARDEN_TEST_ARTIFACTS/vscode-e2e/``: tests/artifacts_dir.py). An install failure is a test failure with
the command and log, never a skip.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from artifacts_dir import artifacts_dir
from editor_stack import REPO_ROOT, StackError, ensure_stack, locked, stack_dir
from project_crossfile import HELPER, script
from vsix import ensure_vsix

pytestmark = pytest.mark.vscode_e2e

ARTIFACTS = Path()  # set by the session (artifacts_dir): the screenshots and logs of this run
SEEDS = Path(os.environ.get("GRADWARDEN_CASES", REPO_ROOT.parent / "shared" / "cases")) / "seeds"
DRIVER_TIMEOUT = 360
EXTENSION_ID = "gradwarden.gradwarden"

# Which seed case exercises what (copied into the workspace under the same name).
QUICKFIX_CASE = "seed_sigmoid_iadd.py"  # GW201 `y += 1` -> quick fix `y = y + 1`; hover on `y`
FIXALL_CASE = "seed_saved_matmul_setitem.py"  # GW201 `d[:] = 1` -> fix-all inserts `d = d.clone()`
DEBUGRUN_CASE = "seed_leaf_iadd.py"  # GW101 `a += 1` on a leaf: raises at once under torch
WORKSPACE_CASE = "seed_expand_as_write.py"  # GW301, never opened: found by "Check workspace"
NOTEBOOK = "autograd_notebook.ipynb"  # the sigmoid case split over two cells


def _notebook() -> dict:
    def cell(source: str) -> dict:
        return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                "source": source.splitlines(True)}

    return {
        "cells": [
            cell("import torch\n\nx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\ny = torch.sigmoid(x)\n"),
            cell("y += 1\nz = torch.sum(y)\nz.backward()\n"),
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cli_diagnostics(path: Path) -> List[dict]:
    proc = subprocess.run([sys.executable, "-m", "gradwarden", "check", "--output-format", "json", "--exit-zero",
                           "--no-progress", str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"gradwarden check {path.name} failed:\n{proc.stderr[-2000:]}"
    return json.loads(proc.stdout)


def _expect(path: Path, code: str) -> dict:
    diags = [d for d in _cli_diagnostics(path) if d["code"] == code]
    assert diags, f"`gradwarden check` reports no {code} in {path} any more: the e2e scenario needs updating"
    return diags[0]


# A finding made through another file (issue 23): CROSS_SCRIPT hands views of `unbind` to a
# helper in a package, which writes into one. The finding shows in the helper (opened alone),
# with the script's call in its related places, and its quick fix edits the helper.
CROSS_SCRIPT = "cross_train.py"
CROSS_HELPER = "crossutils/sampling.py"
CROSS_FILES = {
    CROSS_SCRIPT: script("crossutils"),
    "crossutils/__init__.py": "",
    CROSS_HELPER: HELPER,
}


def _expect_cross(work: Path) -> dict:
    """What `gradwarden check` says about the project, run from its folder: the finding in the helper."""
    proc = subprocess.run([sys.executable, "-m", "gradwarden", "check", "--output-format", "json", "--exit-zero",
                           "--no-progress", "--no-cache", "."], cwd=work, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    diags = [d for d in json.loads(proc.stdout) if d["filename"] == CROSS_HELPER and d["code"] == "GW306"]
    assert diags, f"`gradwarden check` reports no GW306 in {CROSS_HELPER} any more: the e2e scenario needs updating"
    return diags[0]


def _fix(diag: dict) -> dict:
    fix = diag.get("fix") or {}
    assert fix.get("edits"), f"{diag['code']} in {diag['filename']} has no fix edits any more: the e2e scenario needs updating"
    return fix


def _write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def _kill_group(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)  # our own session (start_new_session=True): code-server and its children
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture(scope="module")
def stack():
    t = time.monotonic()
    try:
        result = ensure_stack()
    except StackError as exc:
        pytest.fail(f"installing the VS Code test stack failed:\n{exc}", pytrace=False)
    return result, time.monotonic() - t


@pytest.fixture(scope="module")
def vsix(stack) -> Tuple[Path, float]:
    t = time.monotonic()
    try:
        path = ensure_vsix()
    except StackError as exc:
        pytest.fail(f"building the .vsix failed:\n{exc}", pytrace=False)
    return path, time.monotonic() - t


def _pythons() -> List[str]:
    """This interpreter, and other CPythons 3.9+ found on this machine (python3.X, pyenv)."""
    found = [sys.executable]
    candidates = [f"python3.{minor}" for minor in range(9, 15)]
    candidates += sorted(str(p) for p in Path.home().glob(".pyenv/versions/3.*/bin/python"))
    seen = {(sys.version_info[0], sys.version_info[1])}
    for cand in candidates:
        try:
            out = subprocess.run([cand, "-c", "import sys; print('%d %d' % sys.version_info[:2])"],
                                 capture_output=True, text=True, timeout=20).stdout.split()
        except (OSError, subprocess.SubprocessError):
            continue
        if len(out) == 2 and (int(out[0]), int(out[1])) >= (3, 9) and (int(out[0]), int(out[1])) not in seen:
            seen.add((int(out[0]), int(out[1])))
            found.append(cand)
    return found


def test_vsix_serves_with_plain_pythons(vsix, tmp_path):
    """The packaged launcher + bundled libraries work with interpreters that have nothing installed."""
    import zipfile

    with zipfile.ZipFile(vsix[0]) as zf:
        zf.extractall(tmp_path)
    launcher = tmp_path / "extension" / "vscode-client" / "tool" / "launch.py"
    assert launcher.is_file(), "the .vsix has no vscode-client/tool/launch.py"
    assert (tmp_path / "extension" / "vscode-client" / "out" / "extension.js").is_file()
    seed = SEEDS / QUICKFIX_CASE
    problems = []
    tested = []
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    for python in _pythons():
        probe = subprocess.run([python, "-I", str(launcher), "--probe"], capture_output=True, text=True, timeout=60, env=env)
        try:
            info = json.loads(probe.stdout.strip().splitlines()[-1])
        except (IndexError, ValueError):
            problems.append(f"{python}: no probe answer: {probe.stderr[-500:]}")
            continue
        if not info["ok"] or info["gradwardenFrom"] != "bundled":
            problems.append(f"{python} ({info['python']}): {info}")
            continue
        check = subprocess.run([python, "-I", str(launcher), "check", "--output-format", "json", "--exit-zero", str(seed)],
                               capture_output=True, text=True, timeout=120, env=env)
        codes = [d["code"] for d in json.loads(check.stdout or "[]")] if check.returncode == 0 else []
        if "GW201" not in codes:
            problems.append(f"{python} ({info['python']}): check of {seed.name} gave {codes}: {check.stderr[-800:]}")
        tested.append(info["python"])
    print(f"[vsix] the packaged server ran with Python {', '.join(tested)}")
    assert not problems, "the bundled server does not run with:\n" + "\n".join(problems)


@pytest.fixture(scope="module")
def e2e(tmp_path_factory, stack, vsix) -> Dict:
    """Run the whole VS Code session once; the tests below assert on its parts. Concurrent test
    sessions on one machine take turns (they share the artifacts folder, and the machine)."""
    with locked(stack_dir() / ".e2e.lock"):
        return _run_session(tmp_path_factory, stack, vsix)


def _run_session(tmp_path_factory, stack, vsix) -> Dict:
    t_start = time.monotonic()
    if not SEEDS.is_dir():
        pytest.fail(f"seed cases not found at {SEEDS} (set GRADWARDEN_CASES to the cases folder)")
    stack, t_stack_s = stack
    vsix, t_vsix_s = vsix

    global ARTIFACTS
    ARTIFACTS = artifacts_dir(tmp_path_factory, "vscode-e2e")
    run = tmp_path_factory.mktemp("vscode-e2e")
    user_data, extensions, work, xdg = run / "user-data", run / "extensions", run / "work", run / "xdg"
    for d in (user_data / "User", extensions, work / ".vscode", xdg):
        d.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, TMPDIR=str(run), XDG_CONFIG_HOME=str(xdg / "config"), XDG_DATA_HOME=str(xdg / "data"),
               XDG_CACHE_HOME=str(xdg / "cache"), XDG_STATE_HOME=str(xdg / "state"))
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)

    # The workspace: copies of the seed cases, and what the CLI says about them.
    for case in (QUICKFIX_CASE, FIXALL_CASE, DEBUGRUN_CASE, WORKSPACE_CASE):
        shutil.copy(SEEDS / case, work / case)
    _write_json(work / NOTEBOOK, _notebook())
    for rel, text in CROSS_FILES.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    cf = _expect_cross(work)
    cf_fix = cf["fix"] or (cf["fixes"] or [{}])[0]
    ws = _expect(work / WORKSPACE_CASE, "GW301")
    qf = _expect(work / QUICKFIX_CASE, "GW201")
    fa = _expect(work / FIXALL_CASE, "GW201")
    dr = _expect(work / DEBUGRUN_CASE, "GW101")
    qf_fix, fa_fix = _fix(qf), _fix(fa)
    originals = {case: (work / case).read_text() for case in (QUICKFIX_CASE, FIXALL_CASE, DEBUGRUN_CASE)}

    python = sys.executable  # has torch (the [test] extra): the debug run needs it
    _write_json(user_data / "User" / "settings.json", {
        "security.workspace.trust.enabled": False,
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": False,
        "workbench.enableExperiments": False,
        "workbench.editor.enablePreview": False,
        "telemetry.telemetryLevel": "off",
        "update.mode": "none",
        "extensions.autoCheckUpdates": False,
        "extensions.autoUpdate": False,
        "extensions.ignoreRecommendations": True,
        "chat.commandCenter.enabled": False,
        "git.enabled": False,
        "editor.minimap.enabled": False,
        "editor.hover.delay": 300,
        "files.autoSave": "off",
        "gradwarden.interpreter": python,
        "gradwarden.trace.server": "messages",  # the LSP traffic, in the artifacts' output log
    })
    _write_json(work / ".vscode" / "settings.json", {
        "[python]": {"editor.codeActionsOnSave": {"source.fixAll.gradwarden": "explicit"}},
    })

    port = _free_port()
    config = run / "config.yaml"
    config.write_text(f"bind-addr: 127.0.0.1:{port}\nauth: none\ncert: false\n")
    common = [str(stack.code_server), "--config", str(config), "--user-data-dir", str(user_data),
              "--extensions-dir", str(extensions)]
    t = time.monotonic()
    install = subprocess.run(common + ["--install-extension", str(vsix)], env=env, capture_output=True, text=True, timeout=180)
    (ARTIFACTS / "install-extension.log").write_text(install.stdout + install.stderr)
    installed = sorted(p.name for p in extensions.glob(f"{EXTENSION_ID}-*"))
    assert install.returncode == 0 and installed, (
        f"code-server --install-extension {vsix.name} failed (exit {install.returncode}, installed: {installed}):\n"
        f"{install.stdout}\n{install.stderr}")
    t_install = time.monotonic() - t

    cs_log = (ARTIFACTS / "code-server.log").open("w")
    server = subprocess.Popen(
        common + ["--bind-addr", f"127.0.0.1:{port}", "--auth", "none", "--disable-telemetry", "--disable-update-check",
                  "--disable-workspace-trust", "--disable-getting-started-override", "--ignore-last-opened", str(work)],
        env=env, stdout=cs_log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).read()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"code-server did not come up on 127.0.0.1:{port}; see {ARTIFACTS / 'code-server.log'}")
                time.sleep(0.3)

        spec = {
            "url": f"http://127.0.0.1:{port}/?folder={work}",
            "outDir": str(ARTIFACTS),
            "chromium": str(stack.chromium),
            "steps": {
                "quickfix": {
                    "file": QUICKFIX_CASE, "code": qf["code"], "message": qf["message"],
                    "line": qf["location"]["row"], "column": qf["location"]["column"],
                    "fixTitle": qf_fix["message"], "fixedText": qf_fix["edits"][0]["content"].strip(),
                    # hover on the tensor the diagnostic names: its version timeline
                    "hover": {"line": qf["location"]["row"], "column": qf["location"]["column"],
                              "expect": ["version 0", "version 1"]},
                },
                "fixall": {
                    "file": FIXALL_CASE, "code": fa["code"], "message": fa["message"],
                    "fixedText": fa_fix["edits"][0]["content"].strip(), "insertLine": "# edited by the e2e test",
                },
                "debugrun": {
                    "file": DEBUGRUN_CASE, "code": dr["code"], "message": dr["message"],
                    # a confirmed diagnostic carries the run's evidence ("debug run: ..." related
                    # entries); a runtime-only one has the source "gradwarden (runtime)"
                    "confirmedPattern": r"debug run|gradwarden \(runtime\)", "timeout": 120,
                },
                "workspace": {"file": WORKSPACE_CASE, "code": ws["code"]},
                "crossfile": {
                    "file": CROSS_HELPER, "code": cf["code"], "message": cf["message"],
                    "line": cf["location"]["row"], "column": cf["location"]["column"],
                    "fixTitle": cf_fix["message"], "fixedText": cf_fix["edits"][0]["content"].strip(),
                    "related": CROSS_SCRIPT,
                },
                "notebook": {"file": NOTEBOOK, "code": "GW201"},
            },
        }
        _write_json(run / "spec.json", spec)
        t = time.monotonic()
        try:
            drive = subprocess.run(["node", str(Path(__file__).with_name("drive.mjs")), str(run / "spec.json")],
                                   cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=DRIVER_TIMEOUT)
            driver_out = drive.stdout + drive.stderr
        except subprocess.TimeoutExpired as exc:
            driver_out = f"driver timed out after {DRIVER_TIMEOUT}s\n{exc.stdout or ''}{exc.stderr or ''}"
        t_drive = time.monotonic() - t
        (ARTIFACTS / "driver.log").write_text(driver_out)
    finally:
        _kill_group(server)
        cs_log.close()
        logs = user_data / "logs"
        if logs.is_dir():
            shutil.copytree(logs, ARTIFACTS / "vscode-logs", dirs_exist_ok=True)

    result_file = ARTIFACTS / "result.json"
    assert result_file.is_file(), f"the driver wrote no result.json:\n{driver_out[-4000:]}"
    result = json.loads(result_file.read_text())
    timings = {"stack": round(t_stack_s, 1), "vsix": round(t_vsix_s, 1),
               "install_extension": round(t_install, 1), "drive": round(t_drive, 1),
               "session": round(time.monotonic() - t_start, 1)}
    _write_json(ARTIFACTS / "timings.json", timings)
    print(f"[vscode-e2e] timings: {timings}")
    return {"result": result, "work": work, "originals": originals, "driver_out": driver_out, "spec": spec,
            "qf_fix": qf_fix, "fa_fix": fa_fix}


def _extension_log() -> str:
    logs = sorted((ARTIFACTS / "vscode-logs").rglob("*gradwarden*.log")) if (ARTIFACTS / "vscode-logs").is_dir() else []
    return "\n".join(p.read_text(errors="replace")[-3000:] for p in logs) or "(no gradwarden output channel log)"


def _assert_checks(e2e: Dict, prefix_filter) -> None:
    checks = [c for c in e2e["result"]["checks"] if prefix_filter(c["name"])]
    assert checks, f"the driver recorded no checks for this feature; driver output:\n{e2e['driver_out'][-3000:]}"
    failed = [c for c in checks if not c["ok"]]
    if failed:
        lines = "\n".join(f"  - {c['name']}: {json.dumps(c['detail'])[:1500]}" for c in failed)
        pytest.fail(f"{len(failed)} of {len(checks)} checks failed:\n{lines}\n"
                    f"screenshots and logs: {ARTIFACTS}\n--- extension output ---\n{_extension_log()}", pytrace=False)


def test_cross_file_finding_in_the_helper(e2e):
    """The helper shows the finding its importer's analysis made there, at the CLI's line, with
    the script in the related information, and the quick fix edits the helper (not the script)."""
    _assert_checks(e2e, lambda n: n.startswith(CROSS_HELPER))
    assert (e2e["work"] / CROSS_SCRIPT).read_text() == CROSS_FILES[CROSS_SCRIPT]
    assert (e2e["work"] / CROSS_HELPER).read_text() != CROSS_FILES[CROSS_HELPER]


def test_workbench_and_extension_load(e2e):
    _assert_checks(e2e, lambda n: n.startswith("workbench") or n == "driver error")


def test_diagnostic_squiggle_and_problems_panel(e2e):
    _assert_checks(e2e, lambda n: n.startswith(QUICKFIX_CASE) and ("squiggle" in n or "Problems" in n or "opened" in n)
                   or n.startswith("diagnostics:"))


def test_hover_shows_version_timeline(e2e):
    _assert_checks(e2e, lambda n: n.startswith(f"{QUICKFIX_CASE}: hover") or n.startswith("hover:"))


def test_timeline_webview_opens_from_the_diagnostic(e2e):
    """The hover on the diagnostic links to its timeline; the link opens the picture in a
    webview beside the code (the server's gradwarden.showTimeline page)."""
    _assert_checks(e2e, lambda n: n.startswith(QUICKFIX_CASE) and ("timeline" in n or "marks the finding" in n)
                   or n.startswith("timeline:"))
    picture = e2e["result"].get("timeline") or {}
    assert [e["kind"] for e in picture.get("events", [])].count("backward") == 1, picture


def test_quick_fix_rewrites_file_and_clears_diagnostic(e2e):
    _assert_checks(e2e, lambda n: n.startswith(QUICKFIX_CASE) and ("quick fix" in n or "after the fix" in n)
                   or n.startswith("quickfix:"))
    on_disk = (e2e["work"] / QUICKFIX_CASE).read_text()
    assert on_disk != e2e["originals"][QUICKFIX_CASE], "the quick fix did not change the file on disk"
    assert e2e["qf_fix"]["edits"][0]["content"].strip() in on_disk
    assert not [d for d in _cli_diagnostics(e2e["work"] / QUICKFIX_CASE) if d["code"] == "GW201"], \
        "the file on disk still has the GW201 hazard after the quick fix"


def test_fix_all_on_save(e2e):
    _assert_checks(e2e, lambda n: n.startswith(FIXALL_CASE) or n.startswith("fixall:"))
    on_disk = (e2e["work"] / FIXALL_CASE).read_text()
    assert e2e["fa_fix"]["edits"][0]["content"].strip() in on_disk, f"fix-all on save did not reach the disk:\n{on_disk}"
    assert not [d for d in _cli_diagnostics(e2e["work"] / FIXALL_CASE) if d["code"] == "GW201"], \
        "the saved file still has the GW201 hazard"


def test_debug_run_confirms_diagnostic(e2e):
    checks = {c["name"]: c for c in e2e["result"]["checks"]}
    reported = checks.get(f"{DEBUGRUN_CASE}: debug run reports the diagnostic confirmed at runtime", {}).get("ok")
    shown = checks.get(f"{DEBUGRUN_CASE}: Problems panel shows the runtime-confirmed GW101", {}).get("ok")
    hint = ""
    if reported and not shown:
        hint = ("\nThe run confirmed the diagnostic (see its summary), but the server did not publish it as "
                "runtime-confirmed: gradwarden.debugRun should re-publish confirmed static diagnostics with the "
                "run's evidence (Finding.to_diagnostic(): related entries \"debug run: ...\"), as it does for "
                "runtime-only findings (source \"gradwarden (runtime)\").")
    try:
        _assert_checks(e2e, lambda n: n.startswith(DEBUGRUN_CASE) or n.startswith("debugrun:"))
    except pytest.fail.Exception as exc:
        pytest.fail(f"{exc}{hint}", pytrace=False)


def test_check_workspace_command(e2e):
    _assert_checks(e2e, lambda n: n.startswith("check workspace") or n.startswith("workspace:"))


def test_notebook_diagnostics(e2e):
    _assert_checks(e2e, lambda n: n.startswith(NOTEBOOK) or n.startswith("notebook:"))


def test_no_warning_or_error_notifications(e2e):
    _assert_checks(e2e, lambda n: n.startswith("no gradwarden warning") or n.startswith("notifications:"))


def test_screenshots_kept(e2e):
    shots = e2e["result"]["screenshots"]
    assert len(shots) >= 8, f"expected a screenshot per step, got {shots}"
    assert all((ARTIFACTS / s).is_file() for s in shots)
