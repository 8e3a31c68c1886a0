"""The child's command line (plain, torchrun, or a user's launcher template), its configuration
argument and its environment (parent side, never imports torch)."""
from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

from gradwarden.runtime.options import DebugError, DebugOptions, Target

CHILD_PATH = Path(__file__).resolve().with_name("_child.py")

# exit codes of the child itself (see _child.py)
EXIT_TORCH_MISSING = 3
EXIT_BAD_CONFIG = 4
EXIT_NO_CUDA = 5


def child_config(target: Target, options: DebugOptions, out_dir: str) -> Dict[str, Any]:
    cfg: Dict[str, Any] = {
        "out": out_dir,
        "mode": target.kind,
        "target": os.path.abspath(target.value) if target.kind == "script" else target.value,
        "device": options.device,
        "default_device": bool(options.default_device),
        "max_steps": options.max_steps,
        "coverage": bool(options.coverage),
    }
    if target.cwd:
        cfg["cwd"] = os.path.abspath(target.cwd)
    return cfg


def encode_config(config: Mapping[str, Any]) -> str:
    import base64
    import json

    raw = json.dumps(config, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def resolve_python(python: Optional[str]) -> str:
    """The interpreter to run, as an absolute path (raises DebugError when there is none)."""
    if not python:
        return sys.executable
    candidate = os.path.expanduser(python)
    if os.sep in candidate or (os.altsep and os.altsep in candidate):
        path = os.path.abspath(candidate)
        if not os.path.exists(path):
            raise DebugError(f"interpreter not found: {python}")
        if os.path.isdir(path) or not os.access(path, os.X_OK):
            raise DebugError(f"interpreter is not executable: {python}")
        return path
    found = shutil.which(candidate)
    if found is None:
        raise DebugError(f"interpreter not found on PATH: {python}")
    return found


def build_command(target: Target, options: DebugOptions, out_dir: str, python: str) -> List[str]:
    """The argv of the run (for a launcher template: ``/bin/sh -c <template>``)."""
    config = encode_config(child_config(target, options, out_dir))
    child = [str(CHILD_PATH), "--gw-config", config, "--", *target.args]
    if options.launcher == "torchrun":
        # torchrun's own logs go with the run's results (left to it, they are a `torchelastic_*`
        # folder in the temporary directory that nothing removes)
        argv = [python, "-m", "torch.distributed.run", "--standalone",
                "--nproc-per-node", str(options.nproc_per_node),
                "--log-dir", os.path.join(out_dir, "torchrun-logs"), *child]
    else:
        argv = [python, *child]
    if options.launcher_template:
        cmd = shlex.join(argv)
        text = options.launcher_template.replace("{qcmd}", shlex.quote(cmd)).replace("{cmd}", cmd)
        return ["/bin/sh", "-c", text]
    return argv


def run_environment(options: DebugOptions, base: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    env = dict(os.environ if base is None else base)
    env.update(options.env)
    if options.device in ("auto", "cuda"):
        env["CUDA_LAUNCH_BLOCKING"] = "1"
    if options.device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    if options.output in ("log", "discard", "stderr"):
        env.setdefault("PYTHONUNBUFFERED", "1")
    if options.launcher == "torchrun":
        env.setdefault("OMP_NUM_THREADS", env.get("OMP_NUM_THREADS", "1"))
    return env

def _fatal_message(ev: Mapping[str, Any]) -> str:
    reason = ev.get("reason")
    message = str(ev.get("message", "the debug run could not start"))
    if reason == "torch-missing":
        return (f"{message}. Install torch in that interpreter, or pass --python with the project's "
                f"interpreter (the one that can `import torch`).")
    return message
