"""The runtime bridge never changes what a program does and never accuses correct code.

Each test runs a real program twice, plainly and under ``gradwarden debug`` (the CLI), and
compares the exit status, the standard output (the losses and gradients the program prints)
and the findings. The programs live in ``tests/runtime_examples/``."""
from __future__ import annotations

import pytest

from runtime_examples.compare import EXAMPLES, codes, debug, plain

VERSION_ERROR = "one of the variables needed for gradient computation has been modified by an inplace operation"


@pytest.mark.parametrize("script", ["lstm_cell_loop.py", "gru_lstm.py"])
def test_recurrent_modules_are_not_accused(script):
    # torch's own cells write in place into their private gates (sigmoid_ on chunks of one
    # buffer); autograd accounts for it and the gradients are those of a plain run
    path = EXAMPLES / script
    p, d = plain(path), debug(path)
    assert p.returncode == 0, p.stderr
    assert (d.returncode, d.stdout) == (p.returncode, p.stdout), d.stderr
    assert d.findings == []


def test_a_data_write_needs_a_common_element_to_be_reported():
    # a write through .data into the half of a buffer that no saved tensor holds is harmless
    path = EXAMPLES / "data_write_other_half.py"
    p, d = plain(path), debug(path)
    assert (d.returncode, d.stdout) == (p.returncode, p.stdout) == (0, p.stdout)
    assert d.findings == []
    # one column of the saved half: the backward silently used the new values (GW601)
    p, d = plain(path, ["--overlap"]), debug(path, ["--overlap"])
    assert d.stdout == p.stdout and p.returncode == 0
    assert d.returncode == 1  # the run succeeded but a hazard was confirmed
    assert codes(d) == ["GW601"]
    assert d.findings[0]["write_site"]["row"] == 15 and d.findings[0]["save_site"]["row"] == 12


def test_an_internal_version_error_still_raises():
    # torch writes in place internally (forward-mode softmax) and its own check raises; the
    # tool must not make the program pass (a dispatch mode would switch torch to out-of-place
    # formulas)
    path = EXAMPLES / "forward_ad_softmax.py"
    p, d = plain(path), debug(path)
    assert p.returncode == 1 and VERSION_ERROR in p.stderr
    assert (d.returncode, d.stdout) == (p.returncode, p.stdout)
    assert VERSION_ERROR in d.stderr
    assert codes(d) == ["GW201"]


def test_spawned_processes_are_instrumented():
    # torch.multiprocessing.spawn and mp.Process with the spawn start method: a fresh
    # interpreter each; the hazard in the worker is found at the worker's line
    path = EXAMPLES / "spawn_workers.py"
    p, d = plain(path), debug(path)
    assert p.returncode == 0, p.stderr
    assert (d.returncode, d.stdout) == (p.returncode, p.stdout), d.stderr
    assert d.findings == []
    p, d = plain(path, ["--hazard"]), debug(path, ["--hazard"])
    assert p.stdout.count("error: one of the variables") == 2
    assert (d.stdout, d.returncode) == (p.stdout, 1)
    assert codes(d) == ["GW201"]
    f = d.findings[0]
    assert (f["write_site"]["row"], f["save_site"]["row"], f["backward_site"]["row"]) == (14, 12, 16)
    assert sorted(f["ranks"]) == [0]


def test_torch_compile_results_match_a_plain_run():
    # aot_eager: Dynamo and AOTAutograd without a C++ compiler; the instrumentation stays out
    # of compiled regions, so the losses are those of a plain compiled run and Dynamo never
    # recompiles the tool's code
    path = EXAMPLES / "compile_losses.py"
    p = plain(path, ["aot_eager"])
    d = debug(path, ["aot_eager"])
    assert p.returncode == 0, p.stderr
    assert (d.returncode, d.stdout) == (0, p.stdout), d.stderr
    assert d.findings == []
    assert "recompile" not in d.stderr.lower() and "_child.py" not in d.stderr


def test_inplace_flag_set_after_construction_names_the_assignment():
    path = EXAMPLES / "inplace_flag_after_construction.py"
    p, d = plain(path), debug(path)
    assert p.stdout.startswith("error: one of the variables")
    assert (d.stdout, d.returncode) == (p.stdout, 1)
    assert codes(d) == ["GW201"]
    f = d.findings[0]
    assert f["write_site"]["row"] == 12  # `m.inplace = True`, not the construction (line 9)
    assert f["evidence"]["write_op"] == "torch.nn.functional.relu"


@pytest.mark.parametrize("script", ["dcgan.py", "actor_critic.py", "autocast_checkpoint.py", "mnist_hogwild.py"])
def test_real_examples_run_as_they_do_plainly(script):
    # DataLoader workers and in-place activations (dcgan), log_prob * advantage (actor_critic),
    # bf16 autocast with both checkpoint flavours, hogwild training in forked processes
    path = EXAMPLES / script
    p, d = plain(path), debug(path)
    assert p.returncode == 0, p.stderr
    assert (d.returncode, d.stdout) == (0, p.stdout), d.stderr
    assert d.findings == []


def test_the_example_set_is_complete():
    from runtime_examples.compare import CORRECT

    listed = {name for name, _ in CORRECT}
    assert all((EXAMPLES / name).is_file() for name in listed)
    hazards = {"forward_ad_softmax.py", "inplace_flag_after_construction.py", "stdin_sum.py", "exit_status.py",
               "custom_backward_probe.py"}
    on_disk = {p.name for p in EXAMPLES.glob("*.py") if p.name not in ("__init__.py", "compare.py")}
    assert on_disk == listed | hazards


def test_the_traceback_is_the_programs_own(tmp_path):
    # the mode's frames sit between the user's line and torch's: they are not shown
    script = tmp_path / "leaf.py"
    script.write_text("import torch\n\n\ndef step(x):\n    x.add_(torch.ones(3, 3))\n\n\n"
                      "leaf = torch.ones(3, requires_grad=True)\nstep(leaf)\n")
    p, d = plain(script), debug(script)
    assert p.returncode == d.returncode == 1
    assert "_child.py" not in d.stderr and "runpy" not in d.stderr
    assert d.stderr == p.stderr  # -q with --json FILE: no report, only the program's own stderr
    assert [(f["code"], f["write_site"]["row"]) for f in d.findings] == [("GW101", 5)]


def test_the_chain_rule_probe_changes_nothing_the_program_sees():
    # the bridge calls some custom backwards a second time (GW709's probe): the random numbers
    # it drew and a ctx attribute it rebound are put back, a write into a saved tensor stops it
    # before it happens, a backward that counts in a global or prints is never called again
    path = EXAMPLES / "custom_backward_probe.py"
    p, d = plain(path), debug(path)
    assert p.returncode == 0, p.stderr
    assert d.stdout == p.stdout and p.stdout.count("loud backward") == 1
    assert d.returncode == 1  # a hazard was found in a run that succeeded
    assert [(f["code"], f["row"]) for f in d.findings] == [("GW709", 23)]
