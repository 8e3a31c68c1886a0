"""What the command line imports, as facts: the heavy modules (libcst, the language server's
pygls/lsprotocol, jedi, the runtime debugger, torch) stay out of ``sys.modules`` on the paths
that do not use them. Each case runs ``gradwarden.cli.main`` in a fresh interpreter (a clean
``sys.modules``) and reports what got imported; timings live in ``benchmarks/bench_startup.py``.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

# Imported only by the fixer (libcst), the language server (pygls, lsprotocol), project-import
# resolution that the direct lookup cannot settle (jedi), the debugger, and never by the lint.
HEAVY = ("libcst", "pygls", "lsprotocol", "jedi", "torch", "gradwarden.runtime", "gradwarden.lsp",
         "gradwarden.fixes._doc", "concurrent.futures.process")
# A report that lists fixable findings (`[*]`, "N fixable with --fix") must realise their fixes
# to say so truthfully: that, and only that, brings in the fixer's libcst.
FIXER = ("libcst", "gradwarden.fixes._doc")

PROBE = textwrap.dedent("""
    import gc, json, sys
    argv = json.loads(sys.argv[1])
    from gradwarden import cli
    before = sum(s["collections"] for s in gc.get_stats())
    try:
        rc = cli.main(argv)
    except SystemExit as exc:  # --version
        rc = exc.code
    collections = sum(s["collections"] for s in gc.get_stats()) - before
    noqa = sys.modules.get("gradwarden.noqa")
    sys.stdout.flush()
    print("\\n@@MODULES@@" + json.dumps({"rc": rc, "modules": sorted(sys.modules), "collections": collections,
                                         "noqa_compiled": noqa is not None and "_LINE_RE" in vars(noqa)}))
""")

CLEAN = "import torch\nx = torch.ones(2, requires_grad=True)\n(x * 2).sum().backward()\n"  # analysed, no finding
TRIVIAL = "import torch\nx = torch.ones(2)\n"  # nothing any rule looks at
HAZARD = "import torch\nx = torch.ones(2, requires_grad=True)\nx.add_(1)\n"


def probe(argv: List[str], cwd: Path) -> Tuple[Dict[str, Any], str]:
    """(what the probe reports: rc, modules, gc collections during main, noqa_compiled; stdout)."""
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(argv)], capture_output=True, text=True,
                          cwd=cwd)
    out, sep, tail = proc.stdout.rpartition("\n@@MODULES@@")
    assert sep, proc.stderr
    return json.loads(tail), out


def imported(argv: List[str], cwd: Path) -> Tuple[int, List[str], str]:
    report, out = probe(argv, cwd)
    return report["rc"], report["modules"], out


def heavy_in(modules: List[str]) -> List[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "clean.py").write_text(CLEAN)
    (tmp_path / "trivial.py").write_text(TRIVIAL)
    (tmp_path / "hazard.py").write_text(HAZARD)
    return tmp_path


@pytest.mark.parametrize("argv", [["--version"], ["rules"], ["rule", "GW201"]])
def test_commands_that_analyse_nothing_import_neither_the_engine_nor_heavy_modules(project, argv):
    rc, modules, out = imported(argv, project)
    assert rc == 0 and out.strip()
    assert heavy_in(modules) == []
    assert "gradwarden.engine.interp.interpreter" not in modules
    assert "tomllib" not in modules  # no configuration is read


def test_version_imports_only_the_cli_module(project):
    """``--version`` answers before the parser is built: no other gradwarden module (nor the
    configuration, discovery, formats, or the stdlib modules they pull in) is imported."""
    rc, modules, out = imported(["--version"], project)
    assert rc == 0 and out.startswith("gradwarden ")
    assert [m for m in modules if m.startswith("gradwarden")] == ["gradwarden", "gradwarden.cli"]
    assert not {"dataclasses", "pathlib", "typing", "inspect"} & set(modules)


def test_rules_does_not_import_configuration_or_discovery(project):
    rc, modules, out = imported(["rules"], project)
    assert rc == 0 and "GW201" in out
    assert not {"gradwarden.config", "gradwarden.discovery", "gradwarden.cache"} & set(modules)


@pytest.mark.parametrize("argv, expected_rc", [
    (["clean.py"], 0),
    # A finding, in a format that does not show fixability: its fix suggestion stays data.
    (["--output-format", "github", "hazard.py"], 1),
])
def test_check_imports_the_engine_and_nothing_heavy(project, argv, expected_rc):
    rc, modules, out = imported(["check", "--no-cache", *argv], project)
    assert rc == expected_rc, out
    if expected_rc:
        assert "GW101" in out
    assert "gradwarden.engine.interp.interpreter" in modules  # the file was really analysed
    assert heavy_in(modules) == []


# Imported by the check path only when needed: hashing for the result cache (not with
# --no-cache), "did you mean" hints of the configuration, the PyTorch error families and
# textwrap of the rule documentation.
LAZY = ("hashlib", "difflib", "gradwarden.errgen", "gradwarden.errgen.families", "textwrap")


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_check_of_a_clean_file_without_the_cache_leaves_the_lazy_modules_out(project, output_format):
    report, out = probe(["check", "--no-cache", "--output-format", output_format, "clean.py"], project)
    assert report["rc"] == 0, out
    assert "gradwarden.engine.interp.interpreter" in report["modules"]
    assert [m for m in LAZY if m in report["modules"]] == []
    assert report["noqa_compiled"] is False  # no "noqa" in the file: its patterns are never compiled


def test_the_lazy_modules_come_when_needed(project):
    (project / "bad.toml").write_text("selekt = ['GW2']\n")
    report, out = probe(["check", "--config", "bad.toml", "clean.py"], project)  # cache on, a typo
    assert report["rc"] == 2 and "difflib" in report["modules"]  # for "did you mean `select`?"
    report, _ = probe(["check", "clean.py"], project)
    assert "hashlib" in report["modules"]
    report, out = probe(["rule", "GW201"], project)
    assert report["rc"] == 0 and "gradwarden.errgen.families" in report["modules"]
    (project / "quiet.py").write_text(HAZARD.replace("x.add_(1)", "x.add_(1)  # noqa: GW101"))
    report, out = probe(["check", "--no-cache", "quiet.py"], project)
    assert report["rc"] == 0 and report["noqa_compiled"] is True


def test_a_file_with_nothing_to_analyse_never_imports_the_interpreter(project):
    """No trigger of any rule in the text (engine/triggers.nothing_to_analyse): the check
    parses it (a syntax error is still reported) and stops there."""
    report, out = probe(["check", "--no-cache", "trivial.py"], project)
    assert report["rc"] == 0, out
    assert "gradwarden.engine.interp.interpreter" not in report["modules"]
    assert "gradwarden.engine.state.model" not in report["modules"]
    (project / "broken.py").write_text(TRIVIAL + "def f(:\n")
    report, out = probe(["check", "--no-cache", "broken.py"], project)
    assert report["rc"] == 1 and "GW001" in out


def test_start_up_runs_the_garbage_collector_at_most_once(project):
    """Imports allocate objects that live as long as the process: the check path raises the
    collector's threshold instead of scanning them some twenty times (its count before)."""
    report, out = probe(["check", "--no-cache", "clean.py"], project)
    assert report["rc"] == 0 and "gradwarden.engine.interp.interpreter" in report["modules"]
    assert report["collections"] <= 1


def test_a_finding_without_a_fix_report_imports_nothing_heavy(project):
    """``--statistics`` (and other reports that say nothing about fixes) never load the fixer."""
    rc, modules, out = imported(["check", "--no-cache", "--statistics", "hazard.py"], project)
    assert rc == 1 and "GW101" in out
    assert heavy_in(modules) == []


def test_a_fixable_finding_in_the_text_report_loads_the_fixer_and_nothing_else(project):
    """`[*]` and "N fixable with --fix" must be true: the first run realises the fix (libcst)."""
    rc, modules, out = imported(["check", "--no-cache", "hazard.py"], project)
    assert rc == 1 and "[*]" in out
    assert [m for m in heavy_in(modules) if not any(m == f or m.startswith(f + ".") for f in FIXER)] == []


@pytest.mark.parametrize("output_format", ["text", "json", "github"])
def test_check_with_a_warm_cache_imports_neither_the_engine_nor_libcst(project, output_format):
    argv = ["check", "--output-format", output_format, "hazard.py"]
    first = imported(argv, project)
    assert first[0] == 1  # fills the cache (with the fixes the report shows)
    rc, modules, out = imported(argv, project)
    assert rc == 1 and out == first[2] and "GW101" in out
    assert "gradwarden.engine.interp.interpreter" not in modules
    assert heavy_in(modules) == []


def test_the_probe_sees_heavy_imports_where_they_belong(project):
    """The same probe on ``--fix`` reports libcst: the absence above is not an artefact."""
    rc, modules, out = imported(["check", "--no-cache", "--fix", "--unsafe-fixes", "hazard.py"], project)
    assert "libcst" in modules, out
    assert (project / "hazard.py").read_text() != HAZARD  # the fix was applied


def test_several_jobs_import_the_process_pool(project):
    for i in range(25):  # more than runner.PARALLEL_THRESHOLD files
        (project / f"m{i}.py").write_text(CLEAN)
    rc, modules, _ = imported(["check", "--no-cache", "-j", "2", "."], project)
    assert rc == 1  # hazard.py is among them
    assert "concurrent.futures.process" in modules


# --------------------------------------------------------------------------- the language server
SPY = textwrap.dedent("""
    import sys

    class Spy:  # writes down every import as it starts (the server may leave without atexit)
        def find_spec(self, name, path=None, target=None):
            with open(sys.argv[1], "a") as fh:
                fh.write(name + "\\n")
            return None

    sys.meta_path.insert(0, Spy())
    from gradwarden.cli import main
    sys.exit(main(["serve"]))
""")


# The spy above, and the server's import of lsprotocol held until the file argv[2] exists.
GATED_SPY = textwrap.dedent("""
    import os, sys, time

    class Spy:
        def find_spec(self, name, path=None, target=None):
            if name == "lsprotocol":
                while not os.path.exists(sys.argv[2]):
                    time.sleep(0.01)
            with open(sys.argv[1], "a") as fh:
                fh.write(name + "\\n")
            return None

    sys.meta_path.insert(0, Spy())
    from gradwarden.cli import main
    sys.exit(main(["serve"]))
""")


def _frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read(stream) -> dict:
    length = None
    while True:
        line = stream.readline()
        assert line, "the server closed its output"
        if not line.strip():
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(stream.read(length))


def _answer(proc: subprocess.Popen, request_id: int) -> dict:
    while True:
        message = _read(proc.stdout)
        if message.get("id") == request_id:
            return message


def _shut_down(proc, request_id):
    """shutdown (answered), then exit, then wait for the process to end."""
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": request_id, "method": "shutdown"}))
    proc.stdin.flush()
    _answer(proc, request_id)
    proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
    proc.stdin.flush()
    proc.wait(60)


def _kill(proc):
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def test_the_server_answers_initialize_without_libcst_jedi_the_debugger_or_the_engine(tmp_path):
    log = tmp_path / "imports.txt"
    proc = subprocess.Popen([sys.executable, "-c", SPY, str(log)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                 "params": {"processId": None, "rootUri": None, "capabilities": {}}}))
        proc.stdin.flush()
        assert "capabilities" in _answer(proc, 1)["result"]
        proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        # Answered by pygls (the front only answers initialize): the server was imported.
        proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand",
                                 "params": {"command": "gradwarden.serverStatus", "arguments": []}}))
        proc.stdin.flush()
        assert _answer(proc, 2)["result"]["torch_imported"] is False
        _shut_down(proc, 3)
    finally:
        _kill(proc)
    modules = log.read_text().split()
    assert "gradwarden.lsp.server" in modules and "lsprotocol" in modules  # the spy saw the server start
    assert [m for m in heavy_in(modules) if not m.startswith(("gradwarden.lsp", "pygls", "lsprotocol"))] == []
    assert "gradwarden.engine.interp.interpreter" not in modules  # analyses run in the worker processes


def test_the_front_answers_initialize_before_pygls_or_lsprotocol_is_imported(tmp_path):
    """The answer to initialize comes from stdlib modules (front.py): the spy has not yet seen
    pygls nor lsprotocol when it arrives, since their import is held until the answer is read."""
    log = tmp_path / "imports.txt"
    gate = tmp_path / "gate"
    proc = subprocess.Popen([sys.executable, "-c", GATED_SPY, str(log), str(gate)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                 "params": {"processId": None, "rootUri": None, "capabilities": {}}}))
        proc.stdin.flush()
        assert "capabilities" in _answer(proc, 1)["result"]
        before = log.read_text().split()
        gate.touch()
        _shut_down(proc, 2)
    finally:
        _kill(proc)
    assert "gradwarden.lsp.front" in before and "gradwarden.lsp.initialize_answer" in before
    assert [m for m in before if m.startswith(("pygls", "lsprotocol", "cattrs", "attrs"))] == []
    assert "gradwarden.engine.interp.interpreter" not in before
    assert not {"gradwarden.formats", "gradwarden.fixes", "gradwarden.config"} & set(before)  # no check parser
