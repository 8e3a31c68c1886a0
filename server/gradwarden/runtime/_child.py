"""The instrumented child of a gradwarden debug run (private to gradwarden.runtime): the process.

This file runs under the *target* interpreter (the project's Python, maybe on another
machine): it uses the standard library and torch only and never imports gradwarden. The
parent starts it as a script::

    python _child.py --gw-config <urlsafe-base64 JSON> [--] [script args...]

and reads what it finds from JSON-lines files it appends to in the configured output folder
(``events.<rank>.<pid>.jsonl``, one per process; a forked process opens its own). Nothing is
ever written to the target's stdout/stderr except what the target itself prints.

This file holds the process plumbing: the command line, importing torch, running the target
(script, module, pytest), its traceback, spawned processes and the zygote (a warm interpreter
that forks one child per run). The instrumentation lives in the ``child/`` package beside it,
one concern per module (see docs/runtime.md for the reasoning): ``saved`` (saved-tensor hooks),
``mode`` (the TorchFunctionMode), ``writes`` (in-place calls), ``backward`` (the backward
wrappers), ``freed`` (freed-graph errors), ``hidden`` (silent hazards proven when backward
runs), ``graphtags`` (where nodes were built), ``patches`` (torch classes), ``compile``
(torch.compile), ``report`` (the findings), ``errors`` (errors that reach the top),
``userfiles``, ``coverage``, ``device``, ``events``. The package is loaded under a private name
(never as ``gradwarden.runtime.child``: gradwarden need not be importable here).
"""
import base64
import importlib
import importlib.util
import json
import os
import sys
import time

# Run as a script, Python put this folder first on sys.path: it must not shadow the user's
# modules (``cli``, ``session`` ...).
_HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and sys.path[0] and os.path.abspath(sys.path[0]) == _HERE:
    del sys.path[0]

PROTOCOL = 1
EXIT_TORCH_MISSING = 3
EXIT_BAD_CONFIG = 4
EXIT_NO_CUDA = 5

_PACKAGE = "_gradwarden_child_pkg"
_PACKAGE_DIR = os.path.join(_HERE, "child")


def _part(name):
    """The module ``name`` of the child package (loaded once, under its private name)."""
    if _PACKAGE not in sys.modules:
        spec = importlib.util.spec_from_file_location(_PACKAGE, os.path.join(_PACKAGE_DIR, "__init__.py"),
                                                      submodule_search_locations=[_PACKAGE_DIR])
        package = importlib.util.module_from_spec(spec)
        sys.modules[_PACKAGE] = package
        spec.loader.exec_module(package)
    return importlib.import_module(_PACKAGE + "." + name)


# the parts that need no torch (the torch-free path reports "torch missing" with them)
_events = _part("events")
_userfiles = _part("userfiles")
_coverage = _part("coverage")
_device = _part("device")
_report = _part("report")
Events = _events.Events
_rank = _events._rank
UserFiles = _userfiles.UserFiles
Coverage = _coverage.Coverage
select_device = _device.select_device
used_device = _device.used_device
child_environment = _device.child_environment
ERROR_MARK = _report.ERROR_MARK
_state = _report._state
_emit = _report._emit
_finish = _report._finish
_flush_lines = _report._flush_lines
_internal_error = _report._internal_error
_is_user = _userfiles._is_user


def report_exception(exc, tb=None):
    _part("errors").report_exception(exc, tb)


def install(config):
    return _part("install").install(config)


torch = None  # bound by _import_torch()

_Tensor = None


def _decode_config(text):
    pad = "=" * (-len(text) % 4)
    return json.loads(base64.urlsafe_b64decode(text + pad).decode("utf-8"))


def encode_config(config):
    return base64.urlsafe_b64encode(json.dumps(config, separators=(",", ":")).encode("utf-8")).decode("ascii").rstrip("=")


def _parse_argv(argv):
    if len(argv) < 2 or argv[0] != "--gw-config":
        raise ValueError("usage: _child.py --gw-config CONFIG [--] TARGET ARGS...")
    config = _decode_config(argv[1])
    rest = argv[2:]
    if rest and rest[0] == "--":
        rest = rest[1:]
    return config, rest


def _import_torch():
    global torch, _Tensor
    import torch as _torch

    torch = _torch
    _Tensor = _torch.Tensor
    return _torch


class _PytestPlugin(object):
    """Reports autograd errors that pytest catches."""

    def pytest_exception_interact(self, node, call, report):
        excinfo = getattr(call, "excinfo", None)
        if excinfo is not None:
            try:
                report_exception(excinfo.value, excinfo.tb)
            except Exception:  # noqa: BLE001
                pass


def _run_target(config, rest):
    mode = config.get("mode", "script")
    target = config.get("target")
    import runpy

    if mode == "script":
        path = os.path.abspath(target)
        sys.argv = [target] + list(rest)
        sys.path.insert(0, os.path.dirname(path))
        runpy.run_path(path, run_name="__main__")
        return 0
    if mode == "module":
        sys.argv = [target] + list(rest)
        sys.path.insert(0, os.getcwd())
        runpy.run_module(target, run_name="__main__", alter_sys=True)
        return 0
    if mode == "pytest":
        sys.path.insert(0, os.getcwd())
        import pytest

        sys.argv = ["pytest"]
        args = [target] + list(rest) + ["-p", "no:cacheprovider"]
        return int(pytest.main(args, plugins=[_PytestPlugin()]))
    raise ValueError("unknown mode %r" % (mode,))


def _print_user_traceback(exc):
    """Print the traceback as ``python script.py`` would: without the bridge's own frames (the
    mode's ``__torch_function__`` sits between the user's line and torch's in every in-place
    call), nor runpy's."""
    import traceback

    package = _PACKAGE_DIR + os.sep

    def ours(filename):
        return (filename == __file__ or filename.startswith(package) or filename == "<frozen runpy>"
                or filename.endswith(os.sep + "runpy.py"))

    def strip(te, seen):
        if te is None or id(te) in seen:
            return
        seen.add(id(te))
        kept = [f for f in te.stack if not ours(f.filename)]
        if kept:
            te.stack = traceback.StackSummary.from_list(kept)
        strip(te.__cause__, seen)
        strip(te.__context__, seen)
        for group in getattr(te, "exceptions", None) or ():
            strip(group, seen)

    try:
        te = traceback.TracebackException(type(exc), exc, exc.__traceback__)
        strip(te, set())
        sys.stderr.write("".join(te.format()))
    except Exception:  # noqa: BLE001
        traceback.print_exception(type(exc), exc, exc.__traceback__)


def _user_files(config):
    include = []
    if config.get("mode", "script") == "script" and config.get("target"):
        include.append(config["target"])
    elif config.get("mode") == "module" and config.get("target"):
        try:  # an installed module is still the user's target
            import importlib.util

            sys.path.insert(0, os.getcwd())
            try:
                spec = importlib.util.find_spec(config["target"])
            finally:
                del sys.path[0]
            if spec is not None and spec.origin and spec.origin.endswith(".py"):
                include.append(spec.origin)
        except Exception:  # noqa: BLE001 - runpy will say what is wrong
            pass
    files = UserFiles(include=include)
    files.add_excluded(os.path.dirname(os.path.abspath(torch.__file__)))
    return files


def _instrument(config):
    """Hooks, mode, patches and coverage of this process (torch is imported)."""
    _userfiles._USER = _user_files(config)
    _userfiles._ucache = _userfiles._USER.cache
    install(config)
    _patch_spawn()
    if config.get("coverage", True):
        _state.coverage = Coverage(_is_user)
    events = _state.events

    def _after_fork():
        events.reopen_after_fork()
        _state.reported = set(_state.reported)

    try:
        os.register_at_fork(after_in_child=_after_fork)
    except AttributeError:
        pass


def _patch_spawn():
    """Processes started with the ``spawn`` start method (``torch.multiprocessing.spawn``,
    ``mp.get_context("spawn").Process``, DataLoader workers with it) run a fresh interpreter:
    its command line is made to load this file first, which instruments it (``spawned_main``)
    before ``multiprocessing`` unpickles and runs the target. ``fork`` needs nothing (the
    hooks are inherited; ``register_at_fork`` opens the child's own events file)."""
    try:
        import multiprocessing.spawn as mp_spawn
    except ImportError:
        return
    orig = mp_spawn.get_command_line
    if getattr(orig, "_gradwarden", False):
        return
    here = os.path.abspath(__file__)

    def get_command_line(**kwds):
        argv = orig(**kwds)
        try:
            i = argv.index("-c")
        except ValueError:  # a frozen executable: left alone
            return argv
        boot = ("import importlib.util as _gw_u, sys as _gw_s\n"
                "_gw_p = _gw_u.spec_from_file_location('_gradwarden_child', %r)\n"
                "_gw_m = _gw_u.module_from_spec(_gw_p); _gw_s.modules['_gradwarden_child'] = _gw_m\n"
                "_gw_p.loader.exec_module(_gw_m); _gw_m.spawned_main(%r)\n"
                "del _gw_u, _gw_s, _gw_p, _gw_m\n" % (here, _state.config_text))
        argv = list(argv)
        argv[i + 1] = boot + argv[i + 1]
        return argv

    get_command_line._gradwarden = True
    get_command_line.__wrapped__ = orig
    mp_spawn.get_command_line = get_command_line


def spawned_main(config_text):
    """Instrument a process started with ``spawn`` (see ``_patch_spawn``): same hooks as the
    main process, its own events file; ``--max-steps`` applies to the main process only."""
    try:
        config = _decode_config(config_text)
        config["max_steps"] = None
        _state.config = config
        _state.config_text = config_text
        _state.events = Events(config.get("out") or ".")
        _import_torch()
        _instrument(config)
        _emit("spawned", ppid=os.getppid())
        import atexit

        atexit.register(_flush_lines)
        if _state.coverage is not None:
            _state.coverage.start()
    except Exception:  # noqa: BLE001 - the worker must run even if we cannot watch it
        _internal_error("spawned process")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        config, rest = _parse_argv(argv)
    except Exception as exc:  # noqa: BLE001
        sys.stderr.write("gradwarden child: bad arguments: %s\n" % (exc,))
        return EXIT_BAD_CONFIG
    out_dir = config.get("out") or "."
    try:
        os.makedirs(out_dir, exist_ok=True)
        events = Events(out_dir)
    except OSError as exc:
        sys.stderr.write("gradwarden child: cannot write to %s: %s\n" % (out_dir, exc))
        return EXIT_BAD_CONFIG
    _state.events = events
    _state.config = config
    _state.config_text = argv[1]
    if config.get("cwd"):
        try:
            os.chdir(config["cwd"])
        except OSError as exc:
            events.emit("fatal", reason="cwd", message="cannot enter %s: %s" % (config["cwd"], exc))
            return EXIT_BAD_CONFIG
    for key, value in child_environment(config, os.environ).items():
        os.environ[key] = value
    events.emit("hello", protocol=PROTOCOL, python=sys.version.split()[0], executable=sys.executable,
                argv=[config.get("target")] + list(rest), mode=config.get("mode", "script"))
    try:
        _import_torch()
    except ImportError as exc:
        events.emit("fatal", reason="torch-missing",
                    message="torch is not installed in %s (%s)" % (sys.executable, exc))
        return EXIT_TORCH_MISSING  # the parent says it (once)
    device, problem = select_device(config, torch, os.environ)
    if problem:
        events.emit("fatal", reason="no-cuda", message=problem)
        return EXIT_NO_CUDA  # the parent says it (once)
    _state.device = device
    try:
        import faulthandler

        _crash = open(os.path.join(out_dir, "crash.%d.txt" % os.getpid()), "w")
        faulthandler.enable(file=_crash, all_threads=False)
        _state._crash = _crash
    except Exception:  # noqa: BLE001
        pass

    _instrument(config)
    try:
        import signal

        def _on_term(signum, frame):
            _finish("terminated", 128 + signum)
            os._exit(128 + signum)

        signal.signal(signal.SIGTERM, _on_term)
    except (ValueError, OSError, AttributeError):
        pass
    events.emit("start", torch=torch.__version__, device=device, cuda_build=getattr(torch.version, "cuda", None),
                coverage=(_state.coverage is not None))
    if _state.coverage is not None:
        _state.coverage.start()
    code = 0
    try:
        code = _run_target(config, rest)
        if isinstance(code, int) and code not in (0, None):
            _finish("failed", code)
        else:
            _finish("ok", 0)
    except SystemExit as exc:
        c = exc.code
        code = c if isinstance(c, int) else (0 if c is None else 1)
        _finish("ok" if code == 0 else "failed", code)
    except KeyboardInterrupt as exc:
        code = 130
        _finish("interrupted", code, exc)
    except BaseException as exc:  # noqa: BLE001 - the user's error: report, then show it like python
        try:
            report_exception(exc)
        except Exception:  # noqa: BLE001
            pass
        code = 1
        _finish("error", code, exc)
        _print_user_traceback(exc)
    try:
        sys.stdout.flush()
    except Exception:  # noqa: BLE001
        pass
    return code


def zygote_main():
    """A pre-warmed parent: import torch once, then fork one instrumented run per request.

    Requests come as JSON lines on stdin, replies go to stdout (see session.Zygote). Each run
    is its own session (process group); nothing is instrumented in the zygote itself, and it
    runs no torch op, so forking it is safe (no threads, no CUDA)."""
    import select

    proto = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(2, 1)  # anything printed by imports goes to stderr, never into the protocol

    def reply(obj):
        proto.write(json.dumps(obj) + "\n")
        proto.flush()

    try:
        _import_torch()
    except ImportError as exc:
        reply({"fatal": "torch-missing", "message": "torch is not installed in %s (%s)" % (sys.executable, exc)})
        return EXIT_TORCH_MISSING
    reply({"ready": True, "torch": torch.__version__, "python": sys.version.split()[0], "pid": os.getpid()})
    running = {}
    buf = b""
    stdin_open = True
    while stdin_open or running:
        if stdin_open:
            ready, _, _ = select.select([0], [], [], 0.05)
        else:
            ready = []
            time.sleep(0.05)
        if ready:
            data = os.read(0, 65536)
            if not data:
                stdin_open = False
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if not line.strip():
                    continue
                try:
                    req = json.loads(line.decode("utf-8"))
                except ValueError:
                    continue
                pid = _zygote_fork(req, devnull, proto)
                if pid:
                    running[pid] = req.get("id")
                    reply({"id": req.get("id"), "pid": pid})
        while running:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            rid = running.pop(pid, None)
            try:
                code = os.waitstatus_to_exitcode(status)
            except (AttributeError, ValueError):
                code = (status >> 8) if (status & 0x7F) == 0 else -(status & 0x7F)
            reply({"id": rid, "pid": pid, "exit": code})
    return 0


def _exit_like_python():
    """What the interpreter does at exit (join threads, atexit), before os._exit."""
    try:
        import threading

        shutdown = getattr(threading, "_shutdown", None)
        if shutdown is not None:
            shutdown()
    except Exception:  # noqa: BLE001
        pass
    try:
        import atexit

        atexit._run_exitfuncs()
    except Exception:  # noqa: BLE001
        pass


def _zygote_fork(req, devnull, proto):
    try:
        pid = os.fork()
    except OSError as exc:
        proto.write(json.dumps({"id": req.get("id"), "error": str(exc)}) + "\n")
        proto.flush()
        return 0
    if pid:
        return pid
    code = 1
    try:
        os.setsid()
        os.dup2(devnull, 0)
        targets = {"stdout": 1, "stderr": 2}
        for name in ("stdout", "stderr"):
            where = req.get(name)
            if where == "devnull":
                os.dup2(devnull, targets[name])
            elif where == "stdout":
                os.dup2(1, 2)
            elif where:
                fd = os.open(where, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
                os.dup2(fd, targets[name])
                os.close(fd)
        try:
            proto.close()
        except Exception:  # noqa: BLE001
            pass
        env = req.get("env")
        if isinstance(env, dict):
            os.environ.clear()
            os.environ.update({str(k): str(v) for k, v in env.items()})
        if req.get("cwd"):
            os.chdir(req["cwd"])
        argv = list(req.get("argv") or [])
        sys.argv = [__file__] + argv
        code = main(argv)
        _exit_like_python()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        os._exit(code if isinstance(code, int) else 1)

if __name__ == "__main__":
    if sys.argv[1:2] == ["--gw-zygote"]:
        sys.exit(zygote_main())
    sys.exit(main())
