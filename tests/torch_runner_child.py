"""The torch side of ``tests/torch_runner.py``: imports torch once, then forks one child per job.

    python tests/torch_runner_child.py < SPEC.json

This file is the "runner" of the recorded proofs (``tests/data/proofs.json``): its content hash
is part of every recorded key, so any change here re-runs every proof once. Keep the client-side
logic (caching, judging, scheduling) in ``torch_runner.py``.

SPEC: ``{"jobs": [{"i": n, "kind": "script"|"dump", "path": ..., "timeout": s}, ...],
"pairs": [[i_a, i_b], ...], "workers": n, "outdir": ..., "warm_up": bool, "torch": bool,
"stream": bool}``: all of stdin, or (``"stream": true``) its first line, after which each line
is one more job, until stdin closes. At most ``workers`` children run at
once; each is killed after its ``timeout``. One JSON line per finished job on stdout:
``{"i", "rc", "timed_out", "seconds"}``, and one per compared pair: ``{"pair": [a, b], "compare"}``.

Kinds:

- ``script``: the program runs as ``python PROGRAM.py`` would run it: ``__main__``, ``sys.argv``,
  ``sys.path[0]`` the program's folder, an uncaught exception printed by ``sys.excepthook`` with
  exit status 1, ``SystemExit`` codes, ``atexit`` handlers; stdout/stderr go to
  ``OUTDIR/<i>.out``/``<i>.err``; the working directory is a fresh ``OUTDIR/cwd-<i>``.
- ``dump``: the fix-by-execution protocol of ``test_fix_cases.py``: seeds torch and ``random``
  with 0, execs the program in a globals dict (so its globals survive an exception), then dumps
  the ``.grad`` (and the value) of every leaf tensor reachable from the globals and from the
  locals of the program's own functions at their last return, to ``OUTDIR/<i>.pt``; the status
  (ok | error, the exception, whether it printed MISMATCH) goes to ``OUTDIR/<i>.json``.
  ``pairs`` compare two dumps: same keys, every grad and value ``allclose`` (rtol 1e-4,
  atol 1e-6).
"""
from __future__ import annotations

import io
import json
import os
import signal
import sys
import time


def _warm_up(torch) -> None:
    """Pay once, here, for what programs import lazily: the optimizers' first step imports
    torch._dynamo (seconds), torch.save's pickler, distributions. Single-threaded tiny tensors:
    no thread pool is started before forking."""
    torch.set_num_threads(1)
    import torch.distributions  # noqa: F401
    import torch.optim.swa_utils  # noqa: F401

    w = torch.nn.Parameter(torch.ones(2))
    for opt in (torch.optim.SGD([w], lr=0.1), torch.optim.Adam([w]), torch.optim.AdamW([w])):
        (w * 2).sum().backward()
        opt.step()
        opt.zero_grad()
    torch.save({"w": w.detach()}, io.BytesIO())


def _fresh_process_state() -> None:
    """Run once in the server, before forking: what a fresh interpreter has not done yet.

    - forget the warnings the imports and the warm-up showed (``__warningregistry__``, read
      from the module dicts: a module ``__getattr__`` may import things);
    - drop the ``atexit`` handlers the imports registered (a fresh ``python PROGRAM.py`` runs
      only the handlers of what the program imports; torch's compiler stack registers some
      that cost half a second at exit);
    - freeze the heap, so that the children's garbage collections do not touch (and copy) the
      server's objects.
    """
    import atexit
    import gc
    import warnings

    for mod in list(sys.modules.values()):
        reg = getattr(mod, "__dict__", {}).get("__warningregistry__")
        if isinstance(reg, dict):
            reg.clear()
    warnings._filters_mutated()  # type: ignore[attr-defined]  # invalidates every "once" cache
    atexit._clear()  # type: ignore[attr-defined]
    gc.collect()
    gc.freeze()


def _redirect(outdir: str, i: int) -> None:
    devnull = os.open(os.devnull, os.O_RDONLY)
    out = os.open(os.path.join(outdir, "%d.out" % i), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(os.path.join(outdir, "%d.err" % i), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(devnull, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    cwd = os.path.join(outdir, "cwd-%d" % i)
    os.makedirs(cwd, exist_ok=True)
    os.chdir(cwd)


def run_script(torch, path: str) -> int:
    """Like ``python PATH``; returns the exit status."""
    import atexit
    import runpy
    import threading

    sys.argv = [path]
    sys.path[0] = os.path.dirname(os.path.abspath(path))
    code = 1
    try:
        runpy.run_path(path, run_name="__main__")
        code = 0
    except SystemExit as exc:
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            sys.stderr.write(str(exc.code) + "\n")
            code = 1
    except BaseException:  # noqa: BLE001 - the program's failure is the result
        sys.excepthook(*sys.exc_info())
        code = 1
    try:
        threading._shutdown()  # type: ignore[attr-defined]
        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001
        sys.excepthook(*sys.exc_info())
    return code


# --- the dump protocol (fix-by-execution) ------------------------------------------------


def _collect(torch, g: dict) -> dict:
    out = {}
    seen = set()

    def leaf(path, t):
        if not isinstance(t, torch.Tensor) or not t.is_floating_point() and not t.is_complex():
            return
        grad = t.grad if (t.is_leaf or t.retains_grad) else None
        if grad is not None:
            out[path + ".grad"] = grad.detach().clone()
        elif t.requires_grad and t.is_leaf:
            out[path + ".grad"] = None
        if t.requires_grad and t.is_leaf:
            out[path + ".value"] = t.detach().clone()

    def visit(path, obj, depth):
        if id(obj) in seen or depth > 4:
            return
        seen.add(id(obj))
        if isinstance(obj, torch.Tensor):
            leaf(path, obj)
            return
        if isinstance(obj, torch.nn.Module):
            for name, p in obj.named_parameters():
                leaf(f"{path}.{name}", p)
            return
        if isinstance(obj, (list, tuple)):
            for i, x in enumerate(obj[:50]):
                visit(f"{path}[{i}]", x, depth + 1)
            return
        if isinstance(obj, dict):
            for k, v in list(obj.items())[:50]:
                if isinstance(k, (str, int)):
                    visit(f"{path}[{k!r}]", v, depth + 1)
            return
        if getattr(type(obj), "__module__", "") == "__main__" and hasattr(obj, "__dict__"):
            for k, v in list(vars(obj).items()):
                visit(f"{path}.{k}", v, depth + 1)

    for k, v in list(g.items()):
        if k.startswith("__"):
            continue
        visit(k, v, 0)
    return out


def run_dump(torch, path: str, dump: str, status_file: str) -> int:
    import random
    import warnings

    warnings.simplefilter("ignore")
    torch.manual_seed(0)
    random.seed(0)
    buf = io.StringIO()
    g = {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__}
    status = {"status": "ok", "error": "", "mismatch": False}
    old_out = sys.stdout
    sys.stdout = buf
    sys.argv = [path]
    frames: dict = {}

    def profile(frame, event, arg):  # the locals of the program's own functions, at return
        if event == "return" and frame.f_code.co_filename == path and frame.f_code.co_name != "<module>":
            frames[getattr(frame.f_code, "co_qualname", frame.f_code.co_name) + "()"] = dict(frame.f_locals)

    try:
        with open(path, "rb") as fh:
            code = compile(fh.read(), path, "exec")
        sys.setprofile(profile)
        exec(code, g)
    except SystemExit as exc:
        if exc.code not in (None, 0):
            status.update(status="error", error=f"SystemExit: {exc.code}")
    except BaseException as exc:  # noqa: BLE001 - the program's failure is the result
        first = str(exc).splitlines()[0] if str(exc) else ""
        status.update(status="error", error=f"{type(exc).__name__}: {first}")
    finally:
        sys.setprofile(None)
        sys.stdout = old_out
    printed = buf.getvalue()
    status["mismatch"] = "MISMATCH" in printed
    status["stdout"] = printed[-2000:]
    try:
        scope = dict(g)
        for fname, local in frames.items():
            scope[fname] = local
        grads = _collect(torch, scope)
        torch.save(grads, dump)
        status["n_tensors"] = len(grads)
    except BaseException as exc:  # noqa: BLE001
        status["n_tensors"] = 0
        status["dump_error"] = f"{type(exc).__name__}: {exc}"
    with open(status_file, "w") as fh:
        json.dump(status, fh)
    return 0


def compare(torch, a: str, b: str) -> dict:
    """Two dumps: ``{"match": bool, "keys": n, "diff": [paths...]}``."""
    try:
        ga = torch.load(a)
        gb = torch.load(b)
    except Exception as exc:  # noqa: BLE001
        return {"match": False, "keys": 0, "diff": [f"cannot load: {exc}"]}
    diff = []
    for k in sorted(set(ga) | set(gb)):
        x, y = ga.get(k, "missing"), gb.get(k, "missing")
        if isinstance(x, str) or isinstance(y, str):
            diff.append(f"{k}: only in one")
            continue
        if x is None or y is None:
            if (x is None) != (y is None):
                diff.append(f"{k}: None vs tensor")
            continue
        if x.shape != y.shape or not torch.allclose(x, y, rtol=1e-4, atol=1e-6, equal_nan=True):
            diff.append(k)
    return {"match": not diff, "keys": len(set(ga) | set(gb)), "diff": diff[:10]}


# --- the server ----------------------------------------------------------------------------


def _child(torch, spec: dict, job: dict) -> None:
    code = 1
    try:
        i = job["i"]
        _redirect(spec["outdir"], i)
        if torch is not None:
            torch.set_num_threads(1)
        if job["kind"] == "dump":
            base = os.path.join(spec["outdir"], "%d" % i)
            code = run_dump(torch, os.path.abspath(job["path"]), base + ".pt", base + ".json")
        else:
            code = run_script(torch, job["path"])
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code & 0xFF)


class _Input:
    """Job lines arriving on stdin after the spec (``"stream": true``), read without blocking."""

    def __init__(self, open_: bool):
        self.open = open_
        self._buf = b""

    def poll(self, timeout: float) -> list:
        if not self.open:
            time.sleep(timeout)
            return []
        import select

        ready, _, _ = select.select([0], [], [], timeout)
        if not ready:
            return []
        chunk = os.read(0, 1 << 16)
        if not chunk:
            self.open = False
        self._buf += chunk
        lines = self._buf.split(b"\n")
        self._buf = lines.pop() if self.open else b""
        return [json.loads(ln) for ln in lines if ln.strip()]


def _read_spec() -> tuple:
    """The spec is the first line (or all of stdin, in batch mode); complete job lines that
    arrived with it join its jobs."""
    buf = b""
    while b"\n" not in buf:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            return json.loads(buf), _Input(False)
        buf += chunk
    first, _, rest = buf.partition(b"\n")
    spec = json.loads(first)
    inp = _Input(bool(spec.get("stream")))
    *complete, inp._buf = rest.split(b"\n")  # the last piece may be a line still arriving
    spec.setdefault("jobs", [])
    spec["jobs"] = list(spec["jobs"]) + [json.loads(ln) for ln in complete if ln.strip()]
    return spec, inp


def main() -> int:
    spec, inp = _read_spec()
    results = os.fdopen(os.dup(1), "w", buffering=1)
    if spec.get("torch", True):
        import torch  # the point of this process: imported once, before forking

        if spec.get("warm_up", True):
            _warm_up(torch)
    else:  # programs that need no torch (the runner's own tests)
        torch = None
    _fresh_process_state()
    pending = list(spec.get("jobs", []))
    running: dict = {}
    finished: set = set()
    pairs = [tuple(p) for p in spec.get("pairs", [])]
    compared: set = set()
    while pending or running or inp.open:
        while pending and len(running) < spec["workers"]:
            job = pending.pop(0)
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(torch, spec, job)
            running[pid] = [job, time.monotonic(), False]
        if not running:
            pending += inp.poll(0.05)
            continue
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            now = time.monotonic()
            for p, r in running.items():
                if not r[2] and now - r[1] > float(r[0].get("timeout", 120)):
                    os.kill(p, signal.SIGKILL)
                    r[2] = True
            pending += inp.poll(0.005)
            continue
        if pid not in running:
            continue
        job, t0, killed = running.pop(pid)
        finished.add(job["i"])
        results.write(json.dumps({"i": job["i"], "rc": os.waitstatus_to_exitcode(status),
                                  "timed_out": killed, "seconds": round(time.monotonic() - t0, 3)}) + "\n")
        for a, b in pairs:  # compare a pair as soon as both of its runs are done
            if (a, b) not in compared and a in finished and b in finished:
                compared.add((a, b))
                pa, pb = (os.path.join(spec["outdir"], "%d.pt" % x) for x in (a, b))
                result = compare(torch, pa, pb) if os.path.exists(pa) and os.path.exists(pb) else {
                    "match": False, "keys": 0, "diff": ["no dump"]}
                results.write(json.dumps({"pair": [a, b], "compare": result}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
