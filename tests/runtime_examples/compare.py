"""Run a program plainly and under ``gradwarden debug`` (the CLI, as a user would)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence

EXAMPLES = Path(__file__).resolve().parent
GRADWARDEN = [sys.executable, "-m", "gradwarden"]
TIMEOUT = 600  # a hung run fails the test instead of hanging the suite (never an assertion on speed)


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    findings: List[dict]


def _env(warnings: bool = False) -> dict:
    env = dict(os.environ)
    if warnings:
        env["PYTHONWARNINGS"] = "default"
    else:
        env["PYTHONWARNINGS"] = "ignore"  # torch's numpy warning would differ only by its source line
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def plain(script: Path, args: Sequence[str] = (), stdin: Optional[str] = None, cwd: Optional[Path] = None,
          warnings: bool = False) -> Run:
    proc = subprocess.run([sys.executable, str(script), *args], input=stdin, capture_output=True, text=True,
                          timeout=TIMEOUT, env=_env(warnings), cwd=str(cwd or script.parent),
                          stdin=subprocess.DEVNULL if stdin is None else None)
    return Run(proc.returncode, proc.stdout, proc.stderr, [])


def debug(script: Path, args: Sequence[str] = (), stdin: Optional[str] = None, cwd: Optional[Path] = None,
          options: Sequence[str] = ("--no-static",), warnings: bool = False) -> Run:
    """``gradwarden debug -q --json FILE [options] script args``: with -q and a JSON file the
    tool prints no report, so stdout is the program's own."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "findings.json"
        proc = subprocess.run(GRADWARDEN + ["debug", "-q", "--json", str(out), *options, str(script), *args],
                              input=stdin, capture_output=True, text=True, timeout=TIMEOUT, env=_env(warnings),
                              cwd=str(cwd or script.parent), stdin=subprocess.DEVNULL if stdin is None else None)
        findings = json.loads(out.read_text()) if out.exists() else []
    return Run(proc.returncode, proc.stdout, proc.stderr, findings)


def codes(run: Run) -> List[str]:
    return sorted(f["code"] for f in run.findings)


# Correct programs (pytorch/examples made tiny and offline, and wrappers): a plain run and a
# debug run give the same exit status (0), the same stdout and no finding. The tests run a
# subset; ``benchmarks/bench_runtime.py --examples`` runs them all.
CORRECT = (
    ("lstm_cell_loop.py", ()),
    ("gru_lstm.py", ()),
    ("mnist_cnn.py", ()),
    ("vae.py", ()),
    ("dcgan.py", ()),
    ("transformer_lm.py", ()),
    ("super_resolution.py", ()),
    ("mnist_hogwild.py", ()),
    ("actor_critic.py", ()),
    ("autocast_checkpoint.py", ()),
    ("spawn_workers.py", ()),
    ("compile_losses.py", ("aot_eager",)),
    ("data_write_other_half.py", ()),
)
