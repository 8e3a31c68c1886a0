"""``gradwarden debug``: run a script, module or test instrumented (the runtime bridge).

    gradwarden debug [options] script.py [args ...]
    gradwarden debug [options] -m package.module [args ...]
    gradwarden debug [options] --pytest tests/test_x.py::test_y [pytest args ...]

Exit status (like the tools that wrap a program: ``coverage run``, ``timeout``): the script's
own status when it failed; 1 when it succeeded but a hazard was confirmed (a confirmed or
runtime-only error or warning); 0 when clean; 2 when the run could not be made (usage, missing
interpreter or script, torch missing); 124 after ``--timeout``; 130 when cancelled (Ctrl-C).
See ``exit_status``.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path
from typing import List, Optional, TextIO

from gradwarden.runtime.findings import CONFIRMED, NOT_REACHED, NOT_REPRODUCED, RUNTIME_ONLY, Finding
from gradwarden.runtime.session import (
    DEVICES,
    STATUS_CANCELLED,
    STATUS_CRASHED,
    STATUS_ERROR,
    STATUS_FAILED,
    STATUS_TIMEOUT,
    DebugError,
    DebugOptions,
    DebugResult,
    DebugSession,
    Progress,
    Target,
)

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2
EXIT_TIMEOUT = 124  # as timeout(1)
EXIT_CANCELLED = 130  # 128 + SIGINT, as a shell reports Ctrl-C


def register(sub: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    p = sub.add_parser(
        "debug",
        help="run a script instrumented: confirm diagnostics, name the line that broke autograd",
        description="Run a script (or -m module, or --pytest TEST_ID) in a child process with autograd "
                    "instrumentation; report the in-place write behind each autograd error, and mark "
                    "every static diagnostic of the files that ran as confirmed, not reproduced or "
                    "not reached.",
        usage="gradwarden debug [options] (script.py | -m MODULE | --pytest TEST_ID) [args ...]",
    )
    p.set_defaults(handler=cmd_debug)
    what = p.add_argument_group("target")
    what.add_argument("-m", dest="module", nargs=argparse.REMAINDER, metavar="MODULE [args]",
                      help="run a module, like python -m (ends the options: what follows is the module's)")
    what.add_argument("--pytest", dest="pytest_id", nargs=argparse.REMAINDER, metavar="TEST_ID [args]",
                      help="run one test (or file) with pytest (ends the options: what follows is pytest's)")
    what.add_argument("--python", metavar="PATH",
                      help="the project's interpreter (default: the one running gradwarden)")
    what.add_argument("--cwd", metavar="DIR", help="working directory of the run (default: the current one)")
    run = p.add_argument_group("run")
    run.add_argument("--device", choices=DEVICES, default="auto",
                     help="auto: CUDA when available (default); cpu: hide the GPUs; cuda: require CUDA. "
                          "CUDA runs get CUDA_LAUNCH_BLOCKING=1")
    run.add_argument("--default-device", action="store_true",
                     help="make the CUDA device torch's default (for scripts that create tensors without one)")
    run.add_argument("--max-steps", type=_non_negative_int, metavar="N",
                     help="stop when the program asks for backward call N+1")
    run.add_argument("--timeout", type=_positive_float, metavar="S", help="stop the run after S seconds")
    run.add_argument("--log", metavar="FILE", help="write the program's stdout/stderr to FILE instead of the terminal")
    run.add_argument("--no-static", action="store_true", help="only report what the run saw")
    dist = p.add_argument_group("launchers")
    dist.add_argument("--launcher", choices=("none", "torchrun"), default="none",
                      help="torchrun: run under torch.distributed.run and merge the ranks' findings")
    dist.add_argument("--nproc-per-node", type=_positive_int, default=1, metavar="K",
                      help="processes per node for --launcher torchrun (default: 1)")
    dist.add_argument("--launcher-template", metavar="TEMPLATE",
                      help="run the command through your scheduler: {cmd} is replaced by the command, "
                           "{qcmd} by the command quoted once more (for ssh), e.g. 'srun --gres=gpu:1 {cmd}'")
    dist.add_argument("--results-dir", metavar="DIR",
                      help="where the run writes its findings (must be shared with the node that runs it; "
                           "default: a temporary folder, or .gradwarden/debug-runs/ with a launcher template)")
    out = p.add_argument_group("output")
    out.add_argument("--json", metavar="FILE", help="write the findings as JSON to FILE (- for stdout: the "
                                                    "program's stdout then goes to stderr)")
    out.add_argument("--report", metavar="FILE.html",
                     help="write an HTML report: the timeline picture of every finding (what the run saw, "
                          "the versions it measured) and the run's summary; one self-contained file")
    out.add_argument("-q", "--quiet", action="store_true", help="no progress messages")
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="script.py [args ...]",
                   help="the script and its arguments (or the arguments of -m / --pytest)")
    return p


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("cannot be negative")
    return value


def _positive_int(text: str) -> int:
    value = _non_negative_int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value


def target_from_args(args: argparse.Namespace) -> Target:
    rest: List[str] = list(args.command or [])
    if rest and rest[0] == "--":
        rest = rest[1:]
    for option, value, make in (("-m", args.module, Target.module), ("--pytest", args.pytest_id, Target.pytest)):
        if value is None:
            continue
        if not value or value[0].startswith("-"):
            raise DebugError(f"{option} needs a {'module' if option == '-m' else 'test id'}")
        return make(value[0], list(value[1:]) + rest, cwd=args.cwd)
    if not rest:
        raise DebugError("nothing to run: give a script (or -m MODULE, or --pytest TEST_ID)")
    return Target.script(rest[0], rest[1:], cwd=args.cwd)


def options_from_args(args: argparse.Namespace) -> DebugOptions:
    output = "inherit"
    if args.log:
        output = "log"
    elif args.json == "-":
        output = "stderr"
    return DebugOptions(
        python=args.python,
        device=args.device,
        default_device=args.default_device,
        max_steps=args.max_steps,
        timeout=args.timeout,
        launcher=args.launcher,
        nproc_per_node=args.nproc_per_node,
        launcher_template=args.launcher_template,
        output=output,
        log_path=args.log,
        results_dir=args.results_dir,
        static=not args.no_static,
        stdin="inherit",
    )


def cmd_debug(args: argparse.Namespace) -> int:
    stderr = sys.stderr
    try:
        target = target_from_args(args)
        options = options_from_args(args)
        if options.launcher != "torchrun" and args.nproc_per_node != 1:
            raise DebugError("--nproc-per-node needs --launcher torchrun")
    except DebugError as exc:
        print(f"error: {exc}", file=stderr)
        return EXIT_ERROR

    def progress(p: Progress) -> None:
        if args.quiet:
            return
        if p.stage in ("starting", "finding") or (p.stage == "running" and "stopping" in p.message) \
                or (p.stage == "running" and "timeout" in p.message):
            print(f"gradwarden debug: {p.message}", file=stderr, flush=True)

    session = DebugSession(target, options, on_progress=progress)
    cancelled_by: List[int] = []

    def on_signal(signum: int, frame: object) -> None:
        cancelled_by.append(signum)
        session.cancel()

    # Installed before the run starts, Ctrl-C included: a signal only sets the cancel flag, so
    # no KeyboardInterrupt lands in the middle of starting or waiting (seen in CI: a Ctrl-C
    # during that left `gradwarden debug` waiting forever).
    previous = _install_signal_handlers(on_signal)
    try:
        try:
            session.start()
        except DebugError as exc:
            print(f"error: {exc}", file=stderr)
            return EXIT_ERROR
        try:
            result = session.wait()
        except KeyboardInterrupt:  # a handler could not be installed (not the main thread)
            cancelled_by.append(signal.SIGINT)
            session.cancel()
            result = session.wait()
    finally:
        _restore_signal_handlers(previous)
    assert result is not None
    status = report(args, target, result, sys.stdout, stderr)
    if cancelled_by and result.status == STATUS_CANCELLED:
        return 128 + int(cancelled_by[0])  # 130 for Ctrl-C, 143 for SIGTERM, as a shell reports them
    return status


def _install_signal_handlers(handler: object) -> dict:
    """Ctrl-C, SIGTERM (a CI job cancelled) and SIGHUP stop the run: the child's whole process
    tree is ended before gradwarden exits (it runs in its own session, so it does not get the
    terminal's signals itself)."""
    previous = {}
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is None:
            continue
        try:
            previous[sig] = signal.signal(sig, handler)  # type: ignore[arg-type]
        except (ValueError, OSError):  # not the main thread
            pass
    return previous


def _restore_signal_handlers(previous: dict) -> None:
    for sig, handler in previous.items():
        try:
            signal.signal(sig, handler)
        except (ValueError, OSError, TypeError):
            pass


def report(args: argparse.Namespace, target: Target, result: DebugResult, stdout: TextIO, stderr: TextIO) -> int:
    if result.error:
        print(f"error: {result.error}", file=stderr)
    if result.status == STATUS_ERROR:
        return EXIT_ERROR  # nothing ran: no summary, no "0 finding(s)"
    if args.json:
        payload = json.dumps([f.to_json() for f in result.findings], indent=2) + "\n"
        if args.json == "-":
            stdout.write(payload)
        else:
            try:
                Path(args.json).expanduser().parent.mkdir(parents=True, exist_ok=True)
                Path(args.json).expanduser().write_text(payload, encoding="utf-8")
            except OSError as exc:
                print(f"error: cannot write {args.json}: {exc.strerror or exc}", file=stderr)
                return EXIT_ERROR
    if getattr(args, "report", None):
        if not write_html_report(args.report, target, result, stderr, quiet=bool(args.quiet)):
            return EXIT_ERROR
    # the program's stdout is the program's: the report goes to stderr (a pipeline that reads
    # the script's output is not disturbed)
    text_out = stderr
    if not (args.json and args.quiet):
        text_out.write(format_result(target, result))
        text_out.flush()
    return exit_status(result)


def _rel(path: Optional[str]) -> str:
    if not path:
        return "?"
    try:
        r = os.path.relpath(path, os.getcwd())
    except ValueError:
        return path
    return path if r.startswith(".." + os.sep + "..") else r


def write_html_report(path: str, target: Target, result: DebugResult, stderr: TextIO, quiet: bool = False) -> bool:
    """``--report FILE``: the HTML timelines of the run (gradwarden.picture); False when the file
    cannot be written (said on stderr)."""
    from gradwarden.picture.reports import debug_report

    html = debug_report(result, target=target.describe(), display=_rel)
    try:
        out = Path(path).expanduser()
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(html, encoding="utf-8")
    except OSError as exc:
        print(f"error: cannot write {path}: {exc.strerror or exc}", file=stderr)
        return False
    if not quiet:
        print(f"gradwarden debug: report written to {path}", file=stderr)
    return True


def exit_status(result: DebugResult) -> int:
    """The exit status of ``gradwarden debug`` for a run (CI relies on it): the script's own
    status when it failed, 1 when it succeeded but a hazard was confirmed, 0 when clean, 2 when
    the run could not be made, 124 on timeout, 130 when cancelled; a script killed by a signal
    gives 128 + the signal's number, as a shell reports it."""
    if result.status == STATUS_ERROR:
        return EXIT_ERROR
    if result.status == STATUS_TIMEOUT:
        return EXIT_TIMEOUT
    if result.status == STATUS_CANCELLED:
        return EXIT_CANCELLED
    if result.status == STATUS_CRASHED:
        if result.signal:
            try:
                return 128 + int(signal.Signals[result.signal])
            except (KeyError, ValueError):
                pass
        return result.exit_code if result.exit_code else 1
    if result.status == STATUS_FAILED:
        return result.exit_code if result.exit_code else 1
    if any(f.status in (CONFIRMED, RUNTIME_ONLY) and f.severity in ("error", "warning") for f in result.findings):
        return EXIT_FINDINGS
    return EXIT_OK


_ORDER = {RUNTIME_ONLY: 0, CONFIRMED: 0, NOT_REPRODUCED: 1, NOT_REACHED: 2}


def format_result(target: Target, result: DebugResult) -> str:
    """The text report: one block per finding, then a summary line."""
    lines: List[str] = []
    cwd = os.getcwd()

    def rel(path: Optional[str]) -> str:
        if not path:
            return "?"
        try:
            r = os.path.relpath(path, cwd)
        except ValueError:
            return path
        return path if r.startswith(".." + os.sep + "..") else r

    findings = sorted(result.findings, key=lambda f: (_ORDER.get(f.status, 3), f.filename or "", f.row or 0, f.code))
    for f in findings:
        where = f"{rel(f.filename)}:{f.row}" if f.filename else "?"
        ranks = ""
        if len(f.ranks) > 1:
            ranks = f" (ranks {', '.join(map(str, f.ranks))})"
        elif f.ranks and len(result.ranks) > 1:  # several ranks ran: say which one saw it
            ranks = f" (rank {f.ranks[0]})"
        lines.append(f"{where}: {f.code} [{f.status}] {f.message}{ranks}")
        if f.status in (CONFIRMED, RUNTIME_ONLY):
            lines.extend(_evidence_lines(f, rel))
    summary = (f"gradwarden debug: {target.describe()}: {result.message}"
               + (f" on {result.device}" if result.device else "")
               + (f" (torch {result.torch_version})" if result.torch_version else "")
               + f"; {result.backward_calls} backward call(s), {result.duration:.1f} s")
    if result.crash:
        lines.append("crash report:")
        lines.extend("  " + line for line in result.crash.splitlines()[:20])
    if result.static_error:
        lines.append(f"note: {result.static_error}")
    c = result.counts
    lines.append(summary)
    lines.append(f"{len(result.findings)} finding(s): {c[CONFIRMED]} confirmed, {c[RUNTIME_ONLY]} runtime-only, "
                 f"{c[NOT_REPRODUCED]} not reproduced, {c[NOT_REACHED]} not reached")
    if result.log_path:
        lines.append(f"program output: {result.log_path}")
    return "".join(line + "\n" for line in lines)


def _evidence_lines(f: Finding, rel) -> List[str]:
    src = f.runtime if f.runtime is not None else f
    ev = src.evidence
    versions = ev.get("versions") or {}
    out: List[str] = []
    if src.write_site:
        extra = f"  {ev['write_op']}" if ev.get("write_op") else ""
        if versions.get("write_from") is not None:
            extra += f"  (version {versions['write_from']} -> {versions['write_to']})"
        out.append(f"    write     {rel(src.write_site.filename)}:{src.write_site.row}{extra}")
    if src.save_site:
        extra = f"  {ev['save_op']}" if ev.get("save_op") else ""
        if versions.get("saved") is not None:
            extra += f"  (saved at version {versions['saved']})"
        out.append(f"    saved     {rel(src.save_site.filename)}:{src.save_site.row}{extra}")
    if src.freed_site:
        out.append(f"    freed     {rel(src.freed_site.filename)}:{src.freed_site.row}")
    if src.backward_site:
        out.append(f"    backward  {rel(src.backward_site.filename)}:{src.backward_site.row}")
    for r in src.related:
        out.append(f"    {r.kind:<9} {rel(r.site.filename)}:{r.site.row}  {r.message}")
    return out
