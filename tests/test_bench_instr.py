"""benchmarks/instr_timm.py's reading of callgrind's output files: a child that ended before
callgrind wrote its counts (jedi's subprocess, ended by its parent) is left out and named, not a
failure; forked workers are counted from the fork, other programs from their start."""
import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _instr():
    sys.path.insert(0, str(REPO / "benchmarks"))  # instr_timm imports revisions beside it
    try:
        spec = importlib.util.spec_from_file_location("instr_timm", REPO / "benchmarks" / "instr_timm.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(REPO / "benchmarks"))


def _cg(cmd: str, total=None) -> str:
    head = f"# callgrind format\nversion: 1\ncreator: callgrind-3.22.0\npid: 1\ncmd:  {cmd}\npart: 1\n\n"
    head += "desc: I1 cache: \npositions: line\nevents: Ir\n"
    if total is None:  # ended before the dump: the header only
        return head
    return head + f"summary: {total}\n\nfl=(1) x.py\nfn=(1) f\n0 5\n\ntotals: {total}\n"


def test_a_child_without_counts_is_left_out_and_named(tmp_path):
    m = _instr()
    check = "python -m gradwarden check tree --no-cache --output-format json"
    (tmp_path / "cg.100").write_text(_cg(check, 1_000))
    (tmp_path / "cg.101").write_text(_cg(check, 700))  # a forked worker
    (tmp_path / "cg.102").write_text(_cg(check, 650))  # another
    (tmp_path / "cg.103").write_text(_cg("python jedi/inference/compiled/subprocess/__main__.py x 3.12"))
    (tmp_path / "cg.104").write_text(_cg("python other_program.py", 40))  # a program a child started
    (tmp_path / "cg.105").write_text("")  # nothing written at all
    run = m.read_run(tmp_path, 100)
    assert list(run.counts) == [100, 101, 102, 104]
    assert len(run.left_out) == 2
    assert "pid 103" in run.left_out[0] and "jedi" in run.left_out[0]
    assert run.left_out[1] == "pid 105: (no command line written)"
    got = m.split_check(run, at_fork=500)
    assert got["check: parent"] == 1_000
    assert got["check: workers"] == (700 - 500) + (650 - 500)
    assert got["check: other children"] == 40
    assert got["check"] == 1_000 + 350 + 40
    assert got["left out (no count)"] == 2


def test_the_process_started_must_report(tmp_path):
    m = _instr()
    (tmp_path / "cg.7").write_text(_cg("python -c pass"))
    (tmp_path / "cg.8").write_text(_cg("python -c pass", 10))
    with pytest.raises(RuntimeError, match="pid 7"):
        m.read_run(tmp_path, 7)


def test_summary_or_totals_line_is_read(tmp_path):
    m = _instr()
    (tmp_path / "cg.9").write_text(_cg("python -c pass", 123).replace("summary: 123\n", ""))
    assert m.read_run(tmp_path, 9).counts == {9: (123, "python -c pass")}
