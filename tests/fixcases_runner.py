"""Runs case scripts under torch and records what happened, for ``test_fix_cases.py``.

    python tests/fixcases_runner.py JOBS.json RESULTS.json

JOBS.json: ``[{"id": ..., "path": ..., "timeout": seconds}, ...]``. torch is imported once;
every script then runs in a forked child (so each starts from the same fresh state and a
hang or a crash is contained): the child seeds torch/random (0), executes the script as
``__main__`` with ``exec`` (so its globals survive an exception), and at the end, whatever
happened, dumps the ``.grad`` (and the value) of every leaf tensor it can reach from the
script's globals and from the locals of the script's own functions at their last return
(recorded with a profile hook): tensors, ``nn.Module`` parameters, and attributes / items of
the script's own objects, lists, tuples and dicts (a few levels deep), keyed by their path.

RESULTS.json, per id: ``status`` (ok | error | timeout | crash), ``error`` (exception type
and message), ``mismatch`` (the script printed MISMATCH), ``n_tensors``, and ``grads`` (a
file with the dump, read back by :func:`compare`, run in this same process after every child
has finished). Comparisons: ``{"pairs": [[id_a, id_b], ...]}`` in JOBS.json -> RESULTS.json
``compare[id_a]``: same keys, every grad and value ``allclose`` (rtol 1e-4, atol 1e-6).
"""
from __future__ import annotations

import io
import json
import os
import sys
import tempfile
import time
import traceback


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


def _child(torch, path: str, dump: str, status_file: str) -> None:
    import random
    import warnings

    warnings.simplefilter("ignore")

    os.chdir(tempfile.mkdtemp(prefix="gwcase-"))
    torch.manual_seed(0)
    random.seed(0)
    torch.set_num_threads(1)
    buf = io.StringIO()
    g = {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__}
    status = {"status": "ok", "error": "", "mismatch": False}
    old_out = sys.stdout
    sys.stdout = buf
    sys.argv = [path]
    frames: dict = {}

    def profile(frame, event, arg):  # the locals of the script's own functions, at return
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
    except BaseException as exc:  # noqa: BLE001 - the script's failure is the result
        status.update(status="error", error=f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    finally:
        sys.setprofile(None)
        sys.stdout = old_out
    printed = buf.getvalue()
    status["mismatch"] = "MISMATCH" in printed
    status["stdout"] = printed[-2000:]
    try:
        scope = {k: v for k, v in g.items()}
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


def compare(torch, a: str, b: str) -> dict:
    """Compare two dumps: {"match": bool, "keys": n, "diff": [paths...]}."""
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


def _warm_up(torch) -> None:
    """Import what the first optimizer step and the first save import lazily (torch._dynamo,
    ~3 s), once here instead of in every child. Single-threaded, tiny tensors: no thread pool
    is started before forking."""
    torch.set_num_threads(1)
    w = torch.nn.Parameter(torch.ones(2))
    for opt in (torch.optim.SGD([w], lr=0.1), torch.optim.Adam([w]), torch.optim.AdamW([w])):
        (w * 2).sum().backward()
        opt.step()
        opt.zero_grad()
    import io as _io

    torch.save({"w": w.detach()}, _io.BytesIO())


def main(argv) -> int:
    spec = json.load(open(argv[1]))
    jobs = spec["jobs"]
    workdir = tempfile.mkdtemp(prefix="gwruns-")
    import warnings

    warnings.simplefilter("ignore")
    import torch  # noqa: E402 - imported once, before forking

    _warm_up(torch)

    results = {}
    for job in jobs:
        jid = job["id"]
        dump = os.path.join(workdir, f"{len(results)}.pt")
        status_file = dump + ".json"
        t0 = time.monotonic()
        pid = os.fork()
        if pid == 0:  # child
            code = 0
            try:
                _child(torch, job["path"], dump, status_file)
            except BaseException:  # noqa: BLE001
                traceback.print_exc()
                code = 1
            finally:
                sys.stdout.flush()
                os._exit(code)
        deadline = t0 + float(job.get("timeout", 60))
        status = None
        while True:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                status = {"status": "timeout", "error": "timed out", "mismatch": False}
                break
            time.sleep(0.01)
        if status is None:
            try:
                status = json.load(open(status_file))
            except (OSError, ValueError):
                status = {"status": "crash", "error": "the child died", "mismatch": False}
        status["grads"] = dump
        status["seconds"] = round(time.monotonic() - t0, 2)
        results[jid] = status
    compared = {}
    for a, b in spec.get("pairs", []):
        ra, rb = results.get(a), results.get(b)
        if ra and rb and os.path.exists(ra["grads"]) and os.path.exists(rb["grads"]):
            compared[a] = compare(torch, ra["grads"], rb["grads"])
        else:
            compared[a] = {"match": False, "keys": 0, "diff": ["no dump"]}
    json.dump({"results": results, "compare": compared}, open(argv[2], "w"), indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
