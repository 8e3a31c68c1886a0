"""The case runner (tests/torch_runner.py) itself: what it reports, when it reuses a recorded
proof, when it re-runs, and how the proofs file is pruned. Counts and modes, never durations."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

import torch_runner
from case_support import label_holds
from torch_runner import Job, Proofs, Prover, exc_type, prove, run_dumps, run_warm, summarize

pytest.importorskip("torch")

RAISES = """\
import torch

def f(x):
    x.add_(1)

w = torch.ones(2, requires_grad=True)
f(w)
"""
CLEAN = "print(sum([1, 2]))\n"
# What the bookkeeping tests run: no torch needed (the server then skips importing it).
PLAIN_RAISES = "def f(x):\n    raise RuntimeError('boom')\n\nf(1)\n"
WARNS = "import torch\nw = torch.ones(2, requires_grad=True) * 2\nprint(w.grad)\n"
# Raises only when forked from the warm server (torch already imported before the program ran):
# the warm outcome contradicts the label `ok`, so the fresh run must decide.
WARM_ONLY = "import sys\nwarm = 'torch' in sys.modules\nimport torch\nif warm:\n    raise RuntimeError('forked')\n"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.fixture
def no_torch(monkeypatch):
    monkeypatch.setattr(torch_runner, "PRELOAD_TORCH", False)


@pytest.fixture
def proofs_file(tmp_path, monkeypatch):
    path = tmp_path / "proofs.json"
    monkeypatch.setattr(torch_runner, "PROOFS_FILE", path)
    monkeypatch.delenv(torch_runner.PROOFS_ENV, raising=False)
    monkeypatch.delenv(torch_runner.MODE_ENV, raising=False)
    return path


def _section(path: Path, suite: str) -> dict:
    return json.loads(path.read_text())["suites"][suite]["proofs"]


def test_outcomes_warm_and_fresh_agree(tmp_path):
    """The frames of the last traceback that lie in the program (outermost first), the
    exception, and the warnings attributed to the program's lines, forked or fresh."""
    r, w = _write(tmp_path, "raises.py", RAISES), _write(tmp_path, "warns.py", WARNS)
    warm, _ = run_warm([Job("r", r), Job("w", w)], tmp_path)
    for o in (warm["r"], torch_runner.run_fresh(Job("r", r))):
        s = o.summary
        assert s["rc"] == 1 and s["runtime_error"], o.describe()
        assert exc_type(s) == "RuntimeError" and "leaf Variable" in s["exc"]
        assert s["frames"] == [7, 4]  # the call, then the write
    for o in (warm["w"], torch_runner.run_fresh(Job("w", w))):
        assert o.rc == 0
        assert [x[:2] for x in o.summary["warnings"] if x[0]] == [[3, "UserWarning"]], o.summary
        assert ".grad attribute of a Tensor that is not a leaf" in o.summary["warnings"][-1][2]


def test_summarize_handles_a_chained_traceback(tmp_path):
    p = tmp_path / "x.py"
    err = textwrap.dedent(f"""\
        Traceback (most recent call last):
          File "{p}", line 3, in <module>
        ValueError: first
        During handling of the above exception, another exception occurred:
        Traceback (most recent call last):
          File "{p}", line 9, in <module>
            foo()
          File "/elsewhere/lib.py", line 2, in foo
        RuntimeError: second
        line two of the message
        """)
    s = summarize(p, 1, "", err)
    assert s["frames"] == [9] and s["exc"] == "RuntimeError: second"


def test_summarize_keeps_the_frames_of_the_programs_own_modules(tmp_path):
    """A multi-file project's modules (below the program's folder) are kept as ``where``; the
    program's own frames stay in ``frames``; installed libraries and other folders are not kept;
    a single-file program's summary has no ``where`` at all."""
    p = tmp_path / "run.py"
    err = textwrap.dedent(f"""\
        Traceback (most recent call last):
          File "{p}", line 12, in <module>
          File "{tmp_path}/project/train.py", line 24, in main
          File "{tmp_path}/project/utils/sampling.py", line 4, in ban_
          File "{tmp_path}/.venv/lib/python3.11/site-packages/torch/_tensor.py", line 9, in f
          File "/elsewhere/lib.py", line 2, in foo
        RuntimeError: boom
        """)
    s = summarize(p, 1, "", err)
    assert s["frames"] == [12] and s["where"] == ["project/train.py:24", "project/utils/sampling.py:4"]
    single = summarize(p, 1, "", f'Traceback (most recent call last):\n  File "{p}", line 3, in <module>\nRuntimeError: x\n')
    assert "where" not in single and single["frames"] == [3]


def test_recorded_proof_is_reused_only_while_it_agrees_with_the_label(tmp_path, proofs_file, no_torch):
    p = _write(tmp_path, "raises.py", PLAIN_RAISES)
    ok = lambda o: label_holds("error", o)  # noqa: E731
    first, prover = prove([Job("r", p)], ok, "t", tmp_path)
    assert first["r"].mode == "warm" and prover.ran == ["r"]
    again, prover = prove([Job("r", p)], ok, "t", tmp_path)
    assert again["r"].mode == "recorded" and prover.ran == []
    # A recorded outcome that contradicts the label is not believed: it runs again.
    key = next(iter(_section(proofs_file, "t")))
    data = json.loads(proofs_file.read_text())
    data["suites"]["t"]["proofs"][key].update(rc=0, runtime_error=False)
    proofs_file.write_text(json.dumps(data))
    third, prover = prove([Job("r", p)], ok, "t", tmp_path)
    assert third["r"].mode == "warm" and prover.ran == ["r"] and label_holds("error", third["r"])
    assert _section(proofs_file, "t")[key]["rc"] == 1  # the run replaced the wrong record


def test_a_changed_file_runs_again(tmp_path, proofs_file, no_torch):
    p = _write(tmp_path, "prog.py", CLEAN)
    prove([Job("p", p)], None, "t", tmp_path)
    p.write_text(CLEAN + "# changed\n")
    res, prover = prove([Job("p", p)], None, "t", tmp_path)
    assert prover.ran == ["p"] and res["p"].mode == "warm"


def test_a_warm_outcome_against_the_label_is_decided_by_a_fresh_run(tmp_path, proofs_file):
    p = _write(tmp_path, "warm_only.py", WARM_ONLY)
    res, prover = prove([Job("p", p)], lambda o: label_holds("ok", o), "t", tmp_path)
    assert prover.reruns == ["p"]
    assert res["p"].mode == "fresh" and res["p"].rc == 0
    # without a label the warm outcome stands
    res, prover = prove([Job("p", p)], None, None, tmp_path)
    assert res["p"].mode == "warm" and res["p"].rc == 1


def test_fresh_mode_ignores_recorded_proofs(tmp_path, proofs_file, no_torch, monkeypatch):
    p = _write(tmp_path, "prog.py", CLEAN)
    prove([Job("p", p)], None, "t", tmp_path)
    monkeypatch.setenv(torch_runner.MODE_ENV, "fresh")
    res, prover = prove([Job("p", p)], None, "t", tmp_path)
    assert res["p"].mode == "fresh" and prover.ran == ["p"]


def test_off_neither_reads_nor_writes(tmp_path, proofs_file, no_torch, monkeypatch):
    monkeypatch.setenv(torch_runner.PROOFS_ENV, "off")
    p = _write(tmp_path, "prog.py", CLEAN)
    prove([Job("p", p)], None, "t", tmp_path)
    assert not proofs_file.exists()


def test_complete_runs_prune_partial_runs_add(tmp_path, proofs_file, no_torch):
    a, b = _write(tmp_path, "a.py", CLEAN), _write(tmp_path, "b.py", PLAIN_RAISES)
    prove([Job("a", a), Job("b", b)], None, "t", tmp_path)
    prove([Job("x", a)], None, "other", tmp_path)
    assert len(_section(proofs_file, "t")) == 2
    prove([Job("a", a)], None, "t", tmp_path, complete=False)
    assert len(_section(proofs_file, "t")) == 2  # a subset adds, never removes
    prove([Job("a", a)], None, "t", tmp_path)  # the whole selection is now just a.py
    assert [v["name"] for v in _section(proofs_file, "t").values()] == ["a"]
    assert len(_section(proofs_file, "other")) == 1  # other suites untouched


def test_a_section_of_another_environment_is_not_used(tmp_path, proofs_file, no_torch, monkeypatch):
    p = _write(tmp_path, "prog.py", CLEAN)
    prove([Job("p", p)], None, "t", tmp_path)
    monkeypatch.setattr(torch_runner, "environment", lambda: "torch 0.0.1, python 3.11, runner x")
    assert Proofs("t").lookup(Proofs.key("script", p.read_bytes())) is None
    _, prover = prove([Job("p", p)], None, "t", tmp_path)
    assert prover.ran == ["p"]
    assert json.loads(proofs_file.read_text())["suites"]["t"]["env"].startswith("torch 0.0.1")


def test_a_timeout_is_reported_and_not_recorded(tmp_path, proofs_file, no_torch):
    p = _write(tmp_path, "hang.py", "import time\nwhile True:\n    time.sleep(0.05)\n")
    res, _ = prove([Job("h", p, timeout=1)], None, "t", tmp_path)
    assert res["h"].rc is None
    assert not proofs_file.exists() or not _section(proofs_file, "t")


def test_dump_runs_and_comparisons_are_recorded(tmp_path, proofs_file):
    base = "import torch\nw = torch.nn.Parameter(torch.ones(3))\n(w * {k}).sum().backward()\n"
    a = _write(tmp_path, "a.py", base.format(k=2))
    b = _write(tmp_path, "b.py", base.format(k=2) + "# same program\n")
    c = _write(tmp_path, "c.py", base.format(k=3))
    jobs = [Job("a", a), Job("b", b), Job("c", c)]
    st, cmp_, counts = run_dumps(jobs, [("a", "b"), ("c", "b")], "d", tmp_path)
    assert all(s["status"] == "ok" for s in st.values()) and counts.ran == 3
    assert cmp_["a"]["match"] and not cmp_["c"]["match"] and cmp_["c"]["diff"] == ["w.grad"]
    st2, cmp2, counts = run_dumps(jobs, [("a", "b"), ("c", "b")], "d", tmp_path)
    assert counts.ran == 0 and counts.compared == 0
    assert cmp2["a"]["match"] and not cmp2["c"]["match"]


def test_prover_runs_jobs_in_parallel_children(tmp_path, no_torch):
    """One server, several children: each job sees its own fresh process state (a program
    that pollutes a module does not leak into the next one)."""
    jobs = []
    for i in range(6):
        src = f"import json\nassert not hasattr(json, '_gw_mark')\njson._gw_mark = {i}\n"
        jobs.append(Job(f"j{i}", _write(tmp_path, f"j{i}.py", src)))
    prover = Prover(jobs, {}, None, tmp_path)
    try:
        out = prover.wait_all()
    finally:
        prover.close()
    assert all(o.rc == 0 for o in out.values()), {k: o.summary for k, o in out.items()}


def test_a_streaming_server_takes_jobs_after_it_started(tmp_path, no_torch):
    """The shrinker's server: jobs submitted one after another (each waited for) run in the same
    server process, each in a fresh child."""
    from torch_runner import WarmServer

    server = WarmServer([], tmp_path, stream=True)
    try:
        outs = []
        for i in range(3):
            p = _write(tmp_path, f"s{i}.py", f"import sys\nsys.exit({i})\n")
            outs.append(server.submit(Job(f"s{i}", p)).result(timeout=300))
        pid = server.proc.pid
    finally:
        server.finish()
    assert [o.rc for o in outs] == [0, 1, 2]
    assert server.proc.wait(timeout=60) == 0 and server.proc.pid == pid
