"""Unit tests of the runtime bridge's parent side and of the child's pure parts (no runs here).

The CUDA path is tested with mocks: device selection, environment, command lines. The child
module is imported by path (it is a standalone script, stdlib + torch only).
"""
from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from gradwarden.engine.diagnostic import Diagnostic, Related, Severity, Span
from gradwarden.runtime import (
    CONFIRMED,
    NOT_REACHED,
    NOT_REPRODUCED,
    RUNTIME_ONLY,
    DebugError,
    DebugOptions,
    Site,
    Target,
)
from gradwarden.runtime import findings as F
from gradwarden.runtime import session as S

CHILD = Path(S.__file__).with_name("_child.py")


def load_child():
    spec = importlib.util.spec_from_file_location("gradwarden_runtime_child_under_test", CHILD)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------- no torch in the parent
def test_parent_side_never_imports_torch():
    code = ("import sys, gradwarden.runtime, gradwarden.runtime.cli, gradwarden.runtime.session; "
            "import gradwarden.cli as c; c.build_parser(); "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


CHILD_PACKAGE = CHILD.with_name("child")
TORCH_FREE_PARTS = {"events", "userfiles", "coverage", "device", "report"}


def test_child_is_standalone():
    """The child must not import gradwarden (it runs under the project's interpreter)."""
    files = [CHILD, *sorted(CHILD_PACKAGE.glob("*.py"))]
    assert len(files) > 10
    for path in files:
        text = path.read_text()
        assert "import gradwarden" not in text and "from gradwarden" not in text, path


def _child_imports():
    """module of the child package -> the modules of the package it imports (at its top)."""
    import ast

    out = {}
    for path in CHILD_PACKAGE.glob("*.py"):
        names = set()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                names.update([node.module] if node.module else [a.name for a in node.names])
            elif isinstance(node, ast.Import):
                names.update("torch" for a in node.names if a.name == "torch")
        out[path.stem] = names
    return out


def test_child_package_has_no_import_circle_and_its_torch_free_part_needs_no_torch():
    imports = _child_imports()
    for name in TORCH_FREE_PARTS:
        seen, todo = set(), [name]
        while todo:
            m = todo.pop()
            if m in seen:
                continue
            seen.add(m)
            assert "torch" not in imports[m], f"{name} needs {m}, which imports torch"
            todo.extend(n for n in imports[m] if n != "torch")
    state = {}

    def visit(m, path):
        if state.get(m) == "done":
            return
        assert state.get(m) != "open", "import circle: " + " -> ".join(path + [m])
        state[m] = "open"
        for n in imports.get(m, ()):
            if n != "torch":
                visit(n, path + [m])
        state[m] = "done"

    for m in imports:
        visit(m, [])


# --------------------------------------------------------------------------- child: device (mocked CUDA)
class FakeCuda:
    def __init__(self, available, initialized=False):
        self.available = available
        self.initialized = initialized

    def is_available(self):
        return self.available

    def is_initialized(self):
        return self.initialized

    def current_device(self):
        return 0

    def get_device_name(self, index):
        return "Fake H100"


def fake_torch(available, initialized=False):
    t = types.SimpleNamespace()
    t.cuda = FakeCuda(available, initialized)
    t.__version__ = "2.13.0"
    t.version = types.SimpleNamespace(cuda="12.8" if available else None)
    t.default_device = None

    def set_default_device(dev):
        t.default_device = dev

    t.set_default_device = set_default_device
    return t


def test_device_auto_does_not_touch_cuda_before_the_script():
    child = load_child()
    t = fake_torch(True)
    t.cuda.is_available = lambda: pytest.fail("auto must not initialise CUDA early")
    assert child.select_device({"device": "auto"}, t, {}) == ("auto", None)


def test_device_cuda_with_default_device():
    child = load_child()
    t = fake_torch(True)
    device, problem = child.select_device({"device": "cuda", "default_device": True}, t, {})
    assert problem is None
    assert device == "cuda:0 (Fake H100)"
    assert t.default_device == "cuda:0"


def test_device_cuda_missing_is_a_clear_error():
    child = load_child()
    device, problem = child.select_device({"device": "cuda"}, fake_torch(False), {})
    assert device is None and "CUDA is not available" in problem


def test_device_auto_default_device_without_cuda_falls_back_to_cpu():
    child = load_child()
    t = fake_torch(False)
    assert child.select_device({"device": "auto", "default_device": True}, t, {}) == ("cpu", None)
    assert t.default_device is None


def test_used_device_reports_cuda_when_the_script_used_it():
    child = load_child()
    assert child.used_device(fake_torch(True, initialized=True), "auto") == "cuda:0 (Fake H100)"
    assert child.used_device(fake_torch(True, initialized=False), "auto") == "cpu"
    assert child.used_device(fake_torch(False), "cpu") == "cpu"


def test_child_environment_for_each_device():
    child = load_child()
    assert child.child_environment({"device": "auto"}, {}) == {"CUDA_LAUNCH_BLOCKING": "1"}
    assert child.child_environment({"device": "cuda"}, {}) == {"CUDA_LAUNCH_BLOCKING": "1"}
    assert child.child_environment({"device": "cpu"}, {}) == {"CUDA_VISIBLE_DEVICES": ""}


def test_parent_environment_for_each_device():
    env = S.run_environment(DebugOptions(device="cuda"), base={"PATH": "/bin"})
    assert env["CUDA_LAUNCH_BLOCKING"] == "1" and env["PATH"] == "/bin"
    env = S.run_environment(DebugOptions(device="cpu"), base={})
    assert env["CUDA_VISIBLE_DEVICES"] == "" and "CUDA_LAUNCH_BLOCKING" not in env
    env = S.run_environment(DebugOptions(device="auto", env={"X": "1"}), base={})
    assert env["X"] == "1" and env["CUDA_LAUNCH_BLOCKING"] == "1"


def test_config_round_trip():
    child = load_child()
    cfg = {"out": "/tmp/x y", "mode": "script", "target": "/a/b.py", "device": "cuda", "max_steps": 3}
    text = S.encode_config(cfg)
    assert all(c.isalnum() or c in "-_" for c in text)  # safe in any shell, ssh included
    assert child._decode_config(text) == cfg
    assert child._parse_argv(["--gw-config", text, "--", "a", "--b"]) == (cfg, ["a", "--b"])


# --------------------------------------------------------------------------- commands
def test_command_plain_torchrun_and_template(tmp_path):
    target = Target.script(str(tmp_path / "train.py"), ["--lr", "0.1"])
    argv = S.build_command(target, DebugOptions(), str(tmp_path), "/usr/bin/python3")
    assert argv[:2] == ["/usr/bin/python3", str(S.CHILD_PATH)]
    assert argv[-3:] == ["--", "--lr", "0.1"]
    tr = S.build_command(target, DebugOptions(launcher="torchrun", nproc_per_node=4), str(tmp_path), "py")
    assert tr[:9] == ["py", "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "4",
                      "--log-dir", os.path.join(str(tmp_path), "torchrun-logs"), str(S.CHILD_PATH)]
    tpl = S.build_command(target, DebugOptions(launcher_template="srun --gres=gpu:1 {cmd}"), str(tmp_path), "py")
    assert tpl[:2] == ["/bin/sh", "-c"]
    assert tpl[2].startswith("srun --gres=gpu:1 py ")
    assert shlex.split(tpl[2])[2:] == argv_without_python(argv, "py")
    ssh = S.build_command(target, DebugOptions(launcher_template="ssh node1 {qcmd}"), str(tmp_path), "py")
    inner = shlex.split(ssh[2])  # ssh node1 '<command>': the remote shell splits it once more
    assert inner[:2] == ["ssh", "node1"] and shlex.split(inner[2])[0] == "py"


def argv_without_python(argv, python):
    return [python] + argv[1:]


def test_options_are_checked():
    with pytest.raises(DebugError):
        DebugOptions(device="tpu").check()
    with pytest.raises(DebugError):
        DebugOptions(launcher_template="srun").check()
    with pytest.raises(DebugError):
        DebugOptions(timeout=0).check()
    with pytest.raises(DebugError):
        DebugOptions(output="log").check()


def test_missing_interpreter_is_a_clear_error(tmp_path):
    with pytest.raises(DebugError, match="interpreter not found"):
        S.resolve_python(str(tmp_path / "no" / "python"))
    with pytest.raises(DebugError, match="not found on PATH"):
        S.resolve_python("python-that-does-not-exist-42")
    assert S.resolve_python(None) == sys.executable


# --------------------------------------------------------------------------- findings
def diag(code, row, related=(), filename="/p/x.py", severity=Severity.ERROR):
    return Diagnostic(code=code, message=f"{code} here", severity=severity, filename=filename,
                      span=Span(row, 1, row, 5), related=tuple(related), rule="r")


def rel(kind, row, filename="/p/x.py"):
    return Related(span=Span(row, 1, row, 2), message=kind, kind=kind, filename=filename)


def runtime(code, kind="version-counter", write=None, save=None, backward=None, freed=None, filename="/p/x.py"):
    ev = {"code": code, "kind": kind, "message": "m", "severity": "error", "rank": "0",
          "write_site": [filename, write, "f"] if write else None,
          "save_site": [filename, save, "f"] if save else None,
          "backward_site": [filename, backward, "f"] if backward else None,
          "freed_site": [filename, freed, "f"] if freed else None,
          "versions": {"saved": 0, "current": 1, "write_from": 0, "write_to": 1},
          "write_op": "aten.add_.Tensor", "save_op": "SigmoidBackward0"}
    return F.finding_from_event(ev)


def test_classify_confirmed_not_reproduced_not_reached_runtime_only():
    static = [
        diag("GW201", 11, [rel("save", 10), rel("backward", 13)]),  # confirmed by the write at 11
        diag("GW101", 20),  # ran, nothing happened
        diag("GW501", 30),  # never ran
    ]
    rt = [runtime("GW201", write=11, save=10, backward=13), runtime("GW301", kind="expanded-write", write=40)]
    coverage = {F._norm("/p/x.py"): {10, 11, 13, 20}}
    out = F.classify(static, rt, coverage)
    assert [(f.code, f.status) for f in out] == [
        ("GW201", CONFIRMED), ("GW101", NOT_REPRODUCED), ("GW501", NOT_REACHED), ("GW301", RUNTIME_ONLY)]
    confirmed = out[0]
    assert confirmed.write_site == Site("/p/x.py", 11, "f") and confirmed.runtime is rt[0]
    js = confirmed.to_json()
    assert js["write_site"] == {"filename": "/p/x.py", "row": 11}
    assert js["save_site"]["row"] == 10 and js["backward_site"]["row"] == 13 and js["status"] == "confirmed"


def test_matching_needs_the_same_family_and_place():
    d = diag("GW201", 11, [rel("save", 10), rel("backward", 13)])
    assert F.matches(d, runtime("GW501", write=11))  # a step is a saved-tensor write too
    assert not F.matches(d, runtime("GW101", kind="leaf-inplace", write=11))
    assert not F.matches(d, runtime("GW201", write=12, backward=13))  # same backward is not enough
    # freed graphs: any shared place (built, freed, backward) counts
    dd = diag("GW402", 21, [rel("freed", 19), rel("save", 16), rel("backward", 23)])
    assert F.matches(dd, runtime("GW401", kind="freed-graph", save=15, freed=19, backward=23))


def test_runtime_finding_to_diagnostic(tmp_path):
    src = tmp_path / "s.py"
    src.write_text("import torch\n    y += 1\n")
    f = runtime("GW201", write=2, save=1, backward=2, filename=str(src))
    d = f.to_diagnostic()
    assert d.code == "GW201" and d.rule == "saved-tensor-modified" and d.severity == Severity.ERROR
    assert d.span == Span(2, 5, 2, 11)
    kinds = [r.kind for r in d.related]
    assert kinds == ["write", "save", "backward"]
    assert "aten.add_.Tensor" in d.related[0].message and "SigmoidBackward0" in d.related[1].message


def test_confirmed_static_diagnostic_keeps_identity_and_gains_evidence():
    d = diag("GW201", 11, [rel("save", 10)])
    out = F.classify([d], [runtime("GW201", write=11, save=10, backward=13)], {})
    nd = out[0].to_diagnostic()
    assert nd.code == d.code and nd.span == d.span and nd.message == d.message
    assert nd.related[0] == d.related[0]
    assert any(r.message.startswith("debug run:") and r.kind == "backward" for r in nd.related[1:])


def test_ranks_are_merged():
    run = F.RunEvents()
    a = {"ev": "finding", "code": "GW201", "kind": "version-counter", "message": "m", "rank": "0",
         "write_site": ["/p/x.py", 5, "f"]}
    b = dict(a, rank="1")
    assert run.add(a) is not None
    assert run.add(b) is None
    assert len(run.findings) == 1 and run.findings[0].ranks == (0, 1)


def test_read_events_ignores_a_torn_last_line(tmp_path):
    p = tmp_path / "events.0.1.jsonl"
    p.write_text('{"ev":"hello","pid":1,"rank":"0"}\n{"ev":"lines","lines":{"/a.py":[1,2]}}\n{"ev":"fin')
    run = F.read_events([p])
    assert run.ranks == ["0"] and run.coverage[F._norm("/a.py")] == {1, 2}


# --------------------------------------------------------------------------- child: pure parts
def test_user_files_classification(tmp_path):
    child = load_child()
    u = child.UserFiles()
    assert u.classify(str(tmp_path / "train.py"))
    assert not u.classify(os.__file__)
    assert not u.classify("<frozen runpy>")
    assert not u.classify(str(CHILD))
    assert not u.classify("/x/lib/python3.11/site-packages/torch/nn/modules/module.py")


COVERAGE_PROBE = textwrap.dedent(
    """
    import importlib.util, sys, json
    spec = importlib.util.spec_from_file_location("c", sys.argv[1])
    c = importlib.util.module_from_spec(spec); spec.loader.exec_module(c)
    cov = c.Coverage(lambda fn: fn.endswith("probe_user.py"))
    c._ucache = {}
    sys.path.insert(0, sys.argv[2])
    cov.start()
    import probe_user
    probe_user.f(1); probe_user.f(-1)
    cov.stop()
    print(json.dumps({"mode": cov.mode_used, "lines": {k: v for k, v in cov.take_new().items()}}))
    """
)

PROBE_USER = textwrap.dedent(
    """\
    def f(x):
        if x > 0:
            return 1
        return 2


    def never():
        return 3
    """
)


def _coverage_probe(python, tmp_path):
    (tmp_path / "probe_user.py").write_text(PROBE_USER)
    probe = tmp_path / "probe.py"
    probe.write_text(COVERAGE_PROBE)
    out = subprocess.run([python, str(probe), str(CHILD), str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    import json

    data = json.loads(out.stdout.strip().splitlines()[-1])
    lines = next(v for k, v in data["lines"].items() if k.endswith("probe_user.py"))
    return data["mode"], set(lines)


def test_coverage_settrace_or_monitoring(tmp_path):
    mode, lines = _coverage_probe(sys.executable, tmp_path)
    assert {2, 3, 4} <= lines and 8 not in lines
    assert mode == ("monitoring" if sys.version_info >= (3, 12) else "settrace")


@pytest.mark.parametrize("version", ["3.12", "3.13"])
def test_coverage_with_sys_monitoring(tmp_path, version):
    """The 3.12+ path, when such an interpreter is on this machine (torch is not needed)."""
    candidates = [shutil.which(f"python{version}")]
    candidates += sorted(str(p) for p in Path.home().glob(f".pyenv/versions/{version}*/bin/python{version}"))
    python = next((c for c in candidates if c and subprocess.run([c, "-c", "import sys"],
                                                                capture_output=True).returncode == 0), None)
    if python is None:
        pytest.skip(f"no python{version} here")
    mode, lines = _coverage_probe(python, tmp_path)
    assert mode == "monitoring"
    assert {2, 3, 4} <= lines and 8 not in lines


def test_a_warning_then_the_error_at_the_same_place_keeps_the_error():
    run = F.RunEvents()
    warn = {"ev": "finding", "code": "GW301", "kind": "expanded-write", "message": "w", "severity": "warning",
            "rank": "0", "write_site": ["/p/x.py", 5, "f"]}
    err = dict(warn, severity="error", message="unsupported operation")
    run.add(warn)
    run.add(err)
    assert len(run.findings) == 1
    assert run.findings[0].severity == "error" and run.findings[0].message == "unsupported operation"


def test_findings_placed_by_their_site_alone_are_kept_apart():
    # an untrained parameter's cut, a non-finite branch: the child names only the primary site
    run = F.RunEvents()
    a = {"ev": "finding", "code": "GW719", "kind": "untrained-parameter", "message": "m", "severity": "warning",
         "rank": "0", "site": ["/p/x.py", 9, "f"]}
    run.add(a)
    run.add(dict(a, site=["/p/x.py", 24, "f"]))
    run.add(dict(a))
    assert sorted(f.row for f in run.findings) == [9, 24]


def test_silent_hazards_proven_by_the_run_match_their_static_rules():
    assert F.kind_of("GW709") == "chain-rule-dropped" and F.kind_of("GW719") == "untrained-parameter"
    assert F.kind_of("GW714") == F.kind_of("GW713") == "overlapping-write"
    assert F.compatible("GW713", "GW714") and F.compatible("GW302", "GW714")
    assert F.compatible("GW718", "GW719") and not F.compatible("GW719", "GW720")
    ev = {"ev": "finding", "code": "GW709", "kind": "chain-rule-dropped", "message": "m", "severity": "warning",
          "rank": "0", "site": ["/p/x.py", 26, "backward"], "backward_site": ["/p/x.py", 52, "f"]}
    f = F.finding_from_event(ev)
    assert F.matches(diag("GW709", 26), f) and not F.matches(diag("GW709", 27), f)
    out = F.classify([diag("GW714", 28)], [F.finding_from_event(dict(ev, code="GW714", kind="overlapping-write",
                                                                     site=None, write_site=["/p/x.py", 28, "f"]))],
                     {})
    assert out[0].status == CONFIRMED


def test_a_premise_confirms_a_static_diagnostic_and_is_never_reported_alone():
    run = F.RunEvents()
    ev = {"ev": "finding", "code": "GW721", "kind": "hook-overwrite", "message": "m", "severity": "warning",
          "rank": "0", "site": ["/p/x.py", 25, "hook"], "confirm_only": True}
    assert run.add(ev) is None and run.add(dict(ev)) is None
    assert run.findings == [] and len(run.premises) == 1
    out = F.classify([diag("GW721", 25, severity=Severity.WARNING)], run.findings, {}, run.premises)
    assert [(f.code, f.status) for f in out] == [("GW721", CONFIRMED)]
    assert F.classify([], run.findings, {}, run.premises) == []


# --------------------------------------------------------------------------- the debug command line
def parse(argv):
    from gradwarden.cli import build_parser

    return build_parser().parse_args(["debug", *argv])


def test_cli_targets():
    from gradwarden.runtime.cli import options_from_args, target_from_args

    t = target_from_args(parse(["--max-steps", "2", "train.py", "--lr", "0.1", "-x"]))
    assert (t.kind, t.value, t.args) == ("script", "train.py", ("--lr", "0.1", "-x"))
    t = target_from_args(parse(["--device", "cpu", "-m", "pkg.train", "--epochs", "1"]))
    assert (t.kind, t.value, t.args) == ("module", "pkg.train", ("--epochs", "1"))
    t = target_from_args(parse(["--pytest", "tests/test_a.py::test_b", "-q"]))
    assert (t.kind, t.value, t.args) == ("pytest", "tests/test_a.py::test_b", ("-q",))
    args = parse(["--launcher", "torchrun", "--nproc-per-node", "2", "--timeout", "30", "--json", "-", "s.py"])
    o = options_from_args(args)
    assert (o.launcher, o.nproc_per_node, o.timeout, o.output) == ("torchrun", 2, 30.0, "stderr")
    assert options_from_args(parse(["--log", "run.log", "s.py"])).output == "log"
    with pytest.raises(DebugError, match="nothing to run"):
        target_from_args(parse([]))
    with pytest.raises(DebugError, match="needs a module"):
        target_from_args(parse(["-m"]))


def test_the_first_rank_to_fail_is_quoted_with_its_rank():
    from gradwarden.runtime.cli import format_result
    from gradwarden.runtime.session import DebugResult, first_failure

    exits = [{"rank": "0", "t": 20.5, "exc_type": "RuntimeError", "exc": "Connection closed by peer"},
             {"rank": "1", "t": 20.1, "exc_type": "RuntimeError", "exc": "one of the variables needed"},
             {"rank": "2", "t": 19.0, "status": "ok"}]
    assert first_failure(exits) == ("RuntimeError: one of the variables needed", "1")
    assert first_failure([{"rank": "0", "status": "ok"}]) == (None, None)
    finding = F.Finding(code="GW201", kind="version-counter", message="m", status="runtime-only", filename="/a.py",
                        row=3, ranks=(1,))
    text = format_result(Target.script("a.py"), DebugResult(status="failed", message="the target failed on rank 1",
                                                             findings=[finding], ranks=("0", "1")))
    assert "GW201 [runtime-only] m (rank 1)" in text
