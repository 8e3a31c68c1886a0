"""The ``gradwarden`` command line (ruff's conventions).

    gradwarden check [PATH ...]       analyse files and folders (``-``: stdin)
    gradwarden rule CODE | --all      one rule's documentation
    gradwarden rules [--markdown|--json]   the rule catalog
    gradwarden clean                  remove the result cache (gradwarden/cache.py)
    gradwarden --version

Exit codes: 0 no error or warning (information notes and hints alone do not fail a run; or
``--exit-zero``), 1 an error or warning (``--fail-on`` / ``fail-on`` moves the bar), 2 usage,
configuration or internal error (an internal error in one file is reported and the run goes on).

Other subcommands (``serve``, ``debug``) plug in through ``register_subcommand`` or
``SUBCOMMAND_MODULES``; more ``check`` options (``--fix``, ``--diff``, ...) through
``register_check_options``, and the check pipeline is split in stages (collect, then
report) so that a fix stage can sit between them.
"""
from __future__ import annotations

import argparse
import importlib
import io
import os
import sys
import time

from gradwarden import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (type checkers treat it alike)

# Only what `--version` and building the parser need is imported here: configuration, file
# discovery, the engine and the output formats are imported by the commands that use them
# (tests/test_startup_imports.py holds that as a fact; benchmarks/bench_startup.py times it).
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Callable, Dict, List, Optional, Sequence, TextIO

    from gradwarden.checkrun import CheckRun
    from gradwarden.config import Settings
    from gradwarden.engine.diagnostic import Diagnostic

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2

COLOR_CHOICES = ("auto", "always", "never")
PROGRESS_THRESHOLD = 50  # a progress bar only for more files than this (and only on a TTY)

if TYPE_CHECKING:
    Handler = Callable[[argparse.Namespace], int]
    SubcommandRegistrar = Callable[["argparse._SubParsersAction"], None]

# "module:function" entries, imported when the parser is built; a module that does not exist
# (yet) is skipped. ``function(subparsers)`` adds a parser and sets ``handler=`` as default.
SUBCOMMAND_MODULES: List[str] = ["gradwarden.lsp.cli:register", "gradwarden.runtime.cli:register"]
_REGISTRARS: List[SubcommandRegistrar] = []
_CHECK_OPTION_HOOKS: List[Callable[[argparse.ArgumentParser], None]] = []
# "module:function" entries that extend `check`: called every time the parser is built
# (a module that does not exist is skipped); the function calls register_check_options /
# register_check_stage, once per list (it must be idempotent).
CHECK_EXTENSION_MODULES: List[str] = ["gradwarden.adopt:register", "gradwarden.fixes.cli:register"]
if TYPE_CHECKING:
    CheckStage = Callable[[argparse.Namespace, "CheckRun", TextIO, TextIO], Optional[int]]
_CHECK_STAGES: List[CheckStage] = []


def register_subcommand(fn: SubcommandRegistrar) -> SubcommandRegistrar:
    """Decorator: ``fn(subparsers)`` adds a subcommand (sets ``handler`` via set_defaults)."""
    _REGISTRARS.append(fn)
    return fn


def register_check_options(fn: Callable[[argparse.ArgumentParser], None]) -> Callable[[argparse.ArgumentParser], None]:
    """Decorator: ``fn(check_parser)`` adds options to ``gradwarden check``."""
    _CHECK_OPTION_HOOKS.append(fn)
    return fn


def register_check_stage(fn: CheckStage) -> CheckStage:
    """Decorator: ``fn(args, run, stdout, stderr)`` runs between collect and report (the fix
    stage); returning an exit code ends ``check`` there, None goes on to report."""
    _CHECK_STAGES.append(fn)
    return fn


def _import_check_extensions() -> None:
    for entry in CHECK_EXTENSION_MODULES:
        module_name, _, func = entry.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:  # an optional extension must not take `check` down
            if not (isinstance(exc, ModuleNotFoundError) and exc.name and module_name.startswith(exc.name)):
                print(f"warning: check extension {module_name} cannot be loaded: {exc}", file=sys.stderr)
            continue
        getattr(module, func or "register")()


# --------------------------------------------------------------------------- parser
def _comma_list(text: str) -> List[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of jobs, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("the number of jobs cannot be negative (0: automatic)")
    return value


class _ExtendList(argparse.Action):
    """A repeatable option taking comma-separated values (``--select GW2,GW401 --select GW6``)."""

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[override]
        current = list(getattr(namespace, self.dest, None) or [])
        current.extend(_comma_list(values))
        setattr(namespace, self.dest, current)


# What this module's own parser handles: for these (and --version) the optional subcommand
# modules are not imported, so that `check` does not pay for the debugger's and the server's
# imports (see _subcommand_modules_for).
BUILTIN_COMMANDS = ("check", "rule", "rules", "clean")


# The entry of SUBCOMMAND_MODULES that defines each known subcommand: `serve` need not import
# the debugger (and `debug` not the server) before it can start.
SUBCOMMAND_PROVIDERS: Dict[str, str] = {"serve": "gradwarden.lsp.cli:register",
                                        "debug": "gradwarden.runtime.cli:register"}


def _subcommand_modules_for(argv: Sequence[str]) -> Optional[List[str]]:
    """The SUBCOMMAND_MODULES entries ``argv`` needs: none when it asks only for what this
    module defines (``--version``, ``check``, ``rule``, ``rules``, ``clean``), the provider of a
    known subcommand, else None: all of them (``--help``, no command, a typo: the full list of
    commands)."""
    for arg in argv:
        if arg == "--version":
            return []
        if arg.startswith("-"):
            return None
        if arg in BUILTIN_COMMANDS:
            return []
        provider = SUBCOMMAND_PROVIDERS.get(arg)
        return [provider] if provider in SUBCOMMAND_MODULES else None
    return None


def build_parser(subcommand_modules: Optional[Sequence[str]] = None) -> argparse.ArgumentParser:
    """The whole parser; ``subcommand_modules``: which SUBCOMMAND_MODULES entries to import
    (default: all of them)."""
    parser = argparse.ArgumentParser(
        prog="gradwarden",
        description="Find PyTorch autograd hazards before they raise (or silently corrupt gradients).",
    )
    parser.add_argument("--version", action="version", version=f"gradwarden {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # `serve` and `debug` need only their own parser (the check parser imports the formats and
    # the fixer's options): the language server answers initialize sooner.
    if not subcommand_modules or len(subcommand_modules) != 1 or subcommand_modules[0] not in SUBCOMMAND_PROVIDERS.values():
        _add_check_parser(sub)
        _add_rule_parser(sub)
        _add_rules_parser(sub)
        _add_clean_parser(sub)
    for entry in SUBCOMMAND_MODULES if subcommand_modules is None else subcommand_modules:
        module_name, _, func = entry.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                continue  # not written (or not installed) yet
            print(f"warning: subcommand module {module_name} cannot be loaded: {exc}", file=sys.stderr)
            continue
        except ImportError as exc:  # a broken optional module must not take `check` down with it
            print(f"warning: subcommand module {module_name} cannot be loaded: {exc}", file=sys.stderr)
            continue
        getattr(module, func or "register")(sub)
    for registrar in _REGISTRARS:
        registrar(sub)
    return parser


def _add_check_parser(sub: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    from gradwarden.formats import OUTPUT_FORMATS

    p = sub.add_parser(
        "check",
        help="analyse files and folders",
        description="Analyse Python files for PyTorch autograd hazards.",
    )
    p.set_defaults(handler=cmd_check)
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="files or folders to check (default: .); - reads standard input")

    sel = p.add_argument_group("rule selection")
    sel.add_argument("--select", action=_ExtendList, metavar="CODES",
                     help="comma-separated rule codes or prefixes to enable (GW2, GW201, ALL); replaces the configured selection")
    sel.add_argument("--extend-select", action=_ExtendList, metavar="CODES", default=[],
                     help="like --select, but added to the configured selection")
    sel.add_argument("--ignore", action=_ExtendList, metavar="CODES", default=[],
                     help="comma-separated rule codes or prefixes to disable")
    sel.add_argument("--severity-override", action=_ExtendList, metavar="CODE=LEVEL", default=[],
                     dest="severity_override",
                     help="set a rule's severity (error, warning, information, hint); repeatable")
    sel.add_argument("--ignore-noqa", action="store_true", help="ignore every `# noqa` comment")

    files = p.add_argument_group("file selection")
    files.add_argument("--exclude", action=_ExtendList, metavar="GLOBS",
                       help="globs to exclude from the walk, replacing the configured/default exclusions")
    files.add_argument("--extend-exclude", action=_ExtendList, metavar="GLOBS", default=[],
                       help="globs to exclude from the walk, in addition")
    files.add_argument("--respect-gitignore", dest="respect_gitignore", action="store_true", default=None,
                       help="skip files ignored by .gitignore (the default)")
    files.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false",
                       help="check files even if .gitignore lists them")
    files.add_argument("--stdin-filename", metavar="NAME",
                       help="the name of the file read from stdin (for messages, config and per-file-ignores)")

    cfg = p.add_argument_group("configuration")
    cfg.add_argument("--config", action="append", default=[], metavar="PATH|KEY=VALUE",
                     help="a config file to use instead of searching for one, or a TOML `key = value` "
                          "override (repeatable)")
    cfg.add_argument("--isolated", action="store_true", help="ignore every configuration file")

    out = p.add_argument_group("output")
    out.add_argument("--output-format", choices=OUTPUT_FORMATS,
                     default=os.environ.get("GRADWARDEN_OUTPUT_FORMAT") or "text",
                     help="how to print diagnostics (default: text; env GRADWARDEN_OUTPUT_FORMAT)")
    out.add_argument("-o", "--output-file", metavar="FILE", help="write the diagnostics to FILE instead of stdout")
    out.add_argument("--statistics", action="store_true", help="print the number of findings per rule instead")
    out.add_argument("--show-source", action="store_true", help="show the offending source line (text format)")
    out.add_argument("--color", choices=COLOR_CHOICES, default="auto", metavar="WHEN",
                     help="colored text output: auto (on a terminal; the default), always (also a bare "
                          "--color), never; NO_COLOR/FORCE_COLOR are honoured")
    out.add_argument("--no-color", dest="color", action="store_const", const="never", help="same as --color=never")
    out.add_argument("--exit-zero", action="store_true", help="exit with 0 even when there are findings")
    out.add_argument("--fail-on", metavar="LEVEL", dest="fail_on",
                     help="exit 1 when a finding is at least this severe: error, warning (the default: "
                          "information notes alone exit 0), information or hint (config: fail-on)")
    out.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    verbosity = out.add_mutually_exclusive_group()
    verbosity.add_argument("-q", "--quiet", action="store_true", help="print diagnostics only, no summary")
    verbosity.add_argument("-s", "--silent", action="store_true", help="print nothing; only the exit code tells")
    verbosity.add_argument("-v", "--verbose", action="store_true", help="explain what is done (on stderr)")

    run = p.add_argument_group("execution")
    run.add_argument("-j", "--jobs", type=_jobs, metavar="N",
                     help="worker processes (default: 1 for fewer than 20 files, else up to 4; 0: automatic)")
    run.add_argument("--no-cache", action="store_true",
                     help="analyse every file, neither reading nor writing the result cache "
                          "(env GRADWARDEN_NO_CACHE=1)")
    run.add_argument("--cache-dir", metavar="DIR",
                     help="where results are cached (default: .gradwarden_cache in the project root; "
                          "env GRADWARDEN_CACHE_DIR)")

    # --fix, --unsafe-fixes, --diff, --fix-only: added by the fixer through register_check_options.
    _import_check_extensions()
    for hook in _CHECK_OPTION_HOOKS:
        hook(p)
    return p


def _add_rule_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser("rule", help="explain a rule", description="Print a rule's documentation (Markdown).")
    p.set_defaults(handler=cmd_rule)
    p.add_argument("code", nargs="?", metavar="CODE", help="a rule code (GW201) or name (saved-tensor-modified)")
    p.add_argument("--all", action="store_true", help="every rule")
    p.add_argument("--output-format", choices=("text", "json"), default="text")


def _add_clean_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser("clean", help="remove the result cache",
                       description="Remove the result cache of the current project (and any "
                                   ".gradwarden_cache folder below the working directory).")
    p.set_defaults(handler=cmd_clean)
    p.add_argument("--cache-dir", metavar="DIR", help="the cache to remove (default: as `check` finds it)")


def _add_rules_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser("rules", help="list the rules", description="List every rule.")
    p.set_defaults(handler=cmd_rules)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--markdown", action="store_true", help="the full documentation page (docs/rules.md)")
    g.add_argument("--json", action="store_true", help="as JSON")


# --------------------------------------------------------------------------- entry point
def _bare_color_flag(argv: List[str]) -> List[str]:
    """``--color`` with no value means ``--color=always`` (argparse cannot tell an optional
    value from the path that follows it)."""
    out: List[str] = []
    for i, arg in enumerate(argv):
        if arg == "--":
            return out + argv[i:]
        if arg == "--color" and (i + 1 >= len(argv) or argv[i + 1] not in COLOR_CHOICES):
            out.append("--color=always")
        else:
            out.append(arg)
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    args_list = _bare_color_flag(list(sys.argv[1:] if argv is None else argv))
    if args_list[:1] == ["--version"]:  # what argparse would print, without building the parser
        print(f"gradwarden {__version__}")
        return EXIT_OK
    modules = _subcommand_modules_for(args_list)
    if modules == []:  # check, rule(s), clean: a short-lived process
        code = _with_fewer_collections(lambda: _main(args_list, modules))
        if argv is None and sys._getframe(1).f_globals.get("__name__") == "__main__":
            _exit_without_teardown(code)  # the process's own entry (console script, python -m)
        return code
    return _main(args_list, modules)


def _exit_without_teardown(code: int) -> None:
    """End a short-lived command's process (``check``, ``rule(s)``, ``clean``, when
    :func:`main` is called by the process's ``__main__``: the console script, ``python -m
    gradwarden``) without the interpreter's teardown of the heap: its exit frees every object
    the run kept (the engine, the parse cache, the answers of a ``check`` over a tree) one by
    one and collects them once more, which took 3.9 s of CPU after a ``check --jobs 1`` of
    timm's 304 files had printed its report (benchmarks/README.md, cost9). What the
    interpreter does at exit for others still happens first: threads joined, ``atexit``
    functions run, the standard streams flushed. Called from elsewhere (tests), main returns."""
    try:
        import threading

        threading._shutdown()  # type: ignore[attr-defined]  # what Py_FinalizeEx does first
    except Exception:  # noqa: BLE001
        pass
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except Exception:  # noqa: BLE001 - a closed pipe: the exit status Python gives it
            if stream is sys.stdout:
                code = 120
    os._exit(code if isinstance(code, int) else EXIT_ERROR)


def _with_fewer_collections(run: Callable[[], int]) -> int:
    """Imports allocate many objects that live as long as the process (modules, classes,
    dataclass methods): with the default thresholds the collector runs some 25 times over them
    for nothing, about a tenth of a small ``check``. Cycles are still collected, less often."""
    import gc

    saved = gc.get_threshold()
    gc.set_threshold(max(saved[0], 50_000), *saved[1:])
    try:
        return run()
    finally:
        gc.set_threshold(*saved)


def _main(args_list: List[str], modules: Optional[List[str]]) -> int:
    parser = build_parser(subcommand_modules=modules)
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # --help, --version, usage errors
        return int(exc.code) if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_ERROR)
    handler: Optional[Handler] = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        os.getcwd()
    except OSError:  # the folder we were started in was deleted (a removed checkout)
        print("error: the working directory no longer exists; cd into an existing folder", file=sys.stderr)
        return EXIT_ERROR
    try:
        return handler(args)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `gradwarden check | head`: stop quietly, like other Unix tools (and keep Python from
        # complaining when it flushes stdout at exit).
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            pass
        return EXIT_ERROR
    except Exception as exc:  # noqa: BLE001 - a bug of ours: say so, with the traceback, exit 2
        import traceback

        traceback.print_exc(file=sys.stderr)
        print(f"error: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_ERROR


def error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


# --------------------------------------------------------------------------- check
def resolve_settings(args: argparse.Namespace, first_path: Optional[Path]) -> Settings:
    """The config file (searched from the first path, or named with --config), then the
    command-line overrides on top. Raises ConfigError."""
    from pathlib import Path

    from gradwarden.config import ConfigError, apply_inline_options, load_settings, parse_inline_option

    explicit: Optional[Path] = None
    inline: List[str] = []
    for value in args.config:
        if "=" in value and not Path(value).is_file():
            inline.append(value)
        elif explicit is not None:
            raise ConfigError("--config names more than one file")
        else:
            explicit = Path(value)
    if args.isolated:
        if explicit is not None:
            raise ConfigError("--isolated and a --config file cannot be used together")
        from gradwarden.config import default_settings

        settings = default_settings(Path(os.getcwd()))
    else:
        settings = load_settings(first_path, explicit)
    for text in inline:
        settings = apply_inline_options(settings, parse_inline_option(text), source=f"--config {text!r}")
    severity: Dict[str, str] = {}
    for item in args.severity_override:
        code, sep, level = item.partition("=")
        if not sep or not code.strip() or not level.strip():
            raise ConfigError(f"--severity-override: expected CODE=LEVEL, got {item!r}")
        severity[code.strip()] = level.strip()
    return settings.override(
        select=args.select,
        extend_select=args.extend_select,
        ignore=args.ignore,
        severity=severity,
        exclude=args.exclude,
        extend_exclude=args.extend_exclude,
        respect_gitignore=args.respect_gitignore,
        jobs=args.jobs,
        fail_on=getattr(args, "fail_on", None),
        source="command line",
    )


def collect(args: argparse.Namespace, stderr: TextIO) -> CheckRun:
    """Stage 1: settings, files, analysis, noqa, selection. Raises ConfigError."""
    from pathlib import Path

    from gradwarden.config import ConfigError
    from gradwarden.discovery import discover, display_path

    paths: List[str] = list(args.paths)
    if not paths:
        paths = ["-"] if args.stdin_filename else ["."]
    use_stdin = "-" in paths
    if use_stdin and paths.count("-") > 1:
        raise ConfigError("standard input (-) can be named only once")
    first: Optional[Path] = None
    if paths[0] == "-":
        first = Path(args.stdin_filename) if args.stdin_filename else None
    else:
        first = Path(paths[0])
    settings = resolve_settings(args, first)
    verbose = args.verbose
    if verbose:
        where = settings.config_file or "none (defaults)"
        print(f"gradwarden {__version__}: config file: {where}", file=stderr)

    started = time.monotonic()
    from gradwarden.engine.front.imports import set_root_hints

    # the folders named here are projects: a script in one of their subfolders without a marker
    # (pyproject.toml, .git) still imports the packages beside it
    set_root_hints([p for p in paths if p != "-"] + ["."])
    found = discover([Path(p) for p in paths if p != "-"], exclude=settings.exclude,
                     respect_gitignore=settings.respect_gitignore, include_notebooks=True)
    from gradwarden.checkrun import CheckRun

    run = CheckRun(settings)
    for missing in found.missing:
        run.usage_errors.append(f"{missing}: no such file or directory")
    if not found.files and not found.missing and not use_stdin and not args.silent:
        print("warning: No Python files found under the given path(s)", file=stderr)
    files = [(p, display_path(p)) for p in found.files]
    jobs = settings.jobs or None
    from gradwarden import runner

    n_total = len(files) + (1 if use_stdin else 0)
    effective_jobs = jobs or runner.default_jobs(len(files))
    if verbose:
        print(f"checking {n_total} file(s) with {effective_jobs} job(s)", file=stderr)
    progress = _ProgressBar(stderr, len(files)) if _want_progress(args, stderr, len(files)) else None
    from gradwarden.cache import for_check, run_cached

    result_cache = run.result_cache = for_check(args, settings, runner.analyze_source, stderr)
    outcomes = []
    if use_stdin:
        name = args.stdin_filename or "-"
        data = _read_stdin()
        run.stdin_data = data
        outcomes.append(runner.check_bytes(data, name, ignore_noqa=args.ignore_noqa, keep_source=args.show_source))
    try:
        options = dict(jobs=jobs, ignore_noqa=args.ignore_noqa, keep_source=args.show_source, progress=progress)
        if result_cache is None:
            outcomes += runner.run(files, **options)
        else:
            outcomes += run_cached(result_cache, files, run=runner.run, **options)
    finally:
        if progress:
            progress.close()
    for outcome in outcomes:
        if outcome.error:
            run.errors.append(outcome.error)
        run.diagnostics.extend(settings.apply(outcome.diagnostics))
        if args.show_source:
            run.sources[outcome.filename] = outcome.source
    if len(outcomes) > 1:
        run.diagnostics = runner.merge_findings(run.diagnostics)
    if args.show_source:  # a finding made in a module the run did not list (a script's helper)
        for d in run.diagnostics:
            if d.filename not in run.sources and os.path.isfile(d.filename):
                from gradwarden.noqa import read_source_file

                run.sources[d.filename] = read_source_file(d.filename)
    run.files_checked = len(outcomes)
    if verbose:
        cached = f" ({result_cache.hits} from the cache in {result_cache.folder})" if result_cache else ""
        print(f"checked {run.files_checked} file(s) in {time.monotonic() - started:.2f}s{cached}", file=stderr)
    return run


def _read_stdin() -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is not None:
        return stream.read()
    text = sys.stdin.read()
    return text.encode("utf-8") if isinstance(text, str) else text


def report(args: argparse.Namespace, run: CheckRun, stdout: TextIO, stderr: TextIO) -> int:
    """Stage 2: print, and choose the exit code."""
    for message in run.usage_errors + run.errors:
        error_to(stderr, message)
    diags = run.diagnostics
    fmt = args.output_format
    if not args.silent:
        from gradwarden.cli_report import extras, fixable_summary
        from gradwarden.formats import summary_line

        found = extras(args, run)  # notebook cells, and what a fix run would do
        text = _render(args, run, stdout, found)
        if fmt == "text" and not args.quiet and (diags or not (run.errors or run.usage_errors)):
            text += summary_line(diags) + "\n"  # never "All checks passed!" when files were missed
            text += fixable_summary(run, found)
        if args.output_file:
            from pathlib import Path

            try:
                Path(args.output_file).parent.mkdir(parents=True, exist_ok=True)
                Path(args.output_file).write_text(text, encoding="utf-8")
            except OSError as exc:
                error_to(stderr, f"cannot write {args.output_file}: {exc.strerror or exc}")
                return EXIT_ERROR
        else:
            stdout.write(text)
        if run.errors and not args.quiet:
            n = len(run.errors)
            error_to(stderr, f"{n} file{'s' if n != 1 else ''} could not be checked")
    stdout.flush()
    if run.errors or run.usage_errors or getattr(run, "fix_errors", None):
        return EXIT_ERROR
    if run.settings.fails(diags) and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_OK


def error_to(stream: TextIO, message: str) -> None:
    print(f"error: {message}", file=stream)


def _render(args: argparse.Namespace, run: CheckRun, stdout: TextIO, found) -> str:
    from gradwarden.formats import (format_github, format_json, format_json_lines, format_sarif,
                                    format_statistics, format_text)

    diags = run.diagnostics
    fmt = args.output_format
    nbs, fixes = found.notebooks, found.fixes
    if args.statistics:
        return format_statistics(diags, output_format=fmt)
    if fmt == "json":
        return format_json(diags, notebooks=nbs, fixes=fixes)
    if fmt == "json-lines":
        return format_json_lines(diags, notebooks=nbs, fixes=fixes)
    if fmt == "sarif":
        from gradwarden.cli_report import source_reader

        limits: List[str] = []
        text = format_sarif(diags, errors=run.errors, notebooks=nbs, fixes=fixes, read=source_reader(args, run),
                            warnings=limits)
        for message in limits:
            print(f"warning: {message}", file=sys.stderr)
        return text
    if fmt == "github":
        return format_github(diags, notebooks=nbs)
    if fmt == "html":
        from gradwarden.cli_report import source_reader
        from gradwarden.formats import format_html

        return format_html(diags, read=source_reader(args, run), notebooks=nbs, errors=run.errors,
                           files_checked=run.files_checked)
    color = _use_color(args.color, stdout) and not args.output_file
    return format_text(diags, color=color, show_source=args.show_source, sources=run.sources, notebooks=nbs,
                       fixes=fixes)


def cmd_check(args: argparse.Namespace) -> int:
    from gradwarden.config import ConfigError
    from gradwarden.formats import OUTPUT_FORMATS

    stdout, stderr = sys.stdout, sys.stderr
    if args.output_format not in OUTPUT_FORMATS:  # only possible through the environment
        error_to(stderr, f"GRADWARDEN_OUTPUT_FORMAT: unknown output format {args.output_format!r} "
                         f"(expected one of {', '.join(OUTPUT_FORMATS)})")
        return EXIT_ERROR
    try:
        run = collect(args, stderr)
    except ConfigError as exc:
        error_to(stderr, str(exc))
        return EXIT_ERROR
    for stage in _CHECK_STAGES:
        code = stage(args, run, stdout, stderr)
        if code is not None:
            return code
    return report(args, run, stdout, stderr)


# --------------------------------------------------------------------------- terminal
def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return False


def _use_color(choice: str, stream: TextIO) -> bool:
    if choice == "always":
        return True
    if choice == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR") or os.environ.get("CLICOLOR_FORCE"):
        return True
    return _isatty(stream) and os.environ.get("TERM") != "dumb"


def _want_progress(args: argparse.Namespace, stderr: TextIO, n_files: int) -> bool:
    if args.no_progress or args.quiet or args.silent or n_files <= PROGRESS_THRESHOLD:
        return False
    return _isatty(stderr) and os.environ.get("TERM") != "dumb"


class _ProgressBar:
    WIDTH = 30

    def __init__(self, stream: TextIO, total: int) -> None:
        self.stream = stream
        self.total = total
        self.last = -1.0
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self.last < 0.1:
            return
        self.last = now
        filled = int(self.WIDTH * done / max(total, 1))
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        self.stream.write(f"\r[{bar}] {done}/{total} files")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * (self.WIDTH + 30) + "\r")
            self.stream.flush()


# --------------------------------------------------------------------------- rules
def _find_rule(key: str):
    from gradwarden.rules import all_rules, get_rule

    rule = get_rule(key)
    if rule is None:
        for r in all_rules():
            if r.name == key.strip().lower():
                return r
    return rule


def cmd_rule(args: argparse.Namespace) -> int:
    from gradwarden.formats import rules_json
    from gradwarden.rules import all_rules

    if args.all:
        if args.code:
            error("give a rule code or --all, not both")
            return EXIT_ERROR
        rules = all_rules()
    elif args.code:
        rule = _find_rule(args.code)
        if rule is None:
            error(f"unknown rule `{args.code}` (`gradwarden rules` lists them)")
            return EXIT_ERROR
        rules = [rule]
    else:
        error("give a rule code (e.g. `gradwarden rule GW201`) or --all")
        return EXIT_ERROR
    if args.output_format == "json":
        sys.stdout.write(rules_json(rules))
    else:
        sys.stdout.write("\n".join(r.render() for r in rules))
    return EXIT_OK


def cmd_clean(args: argparse.Namespace) -> int:
    from gradwarden.cache import clean_here

    return clean_here(args.cache_dir, sys.stdout, sys.stderr)


def cmd_rules(args: argparse.Namespace) -> int:
    from gradwarden.formats import rules_json, rules_markdown, rules_table
    from gradwarden.rules import all_rules

    rules = all_rules()
    if args.markdown:
        sys.stdout.write(rules_markdown(rules))
    elif args.json:
        sys.stdout.write(rules_json(rules))
    else:
        sys.stdout.write(rules_table(rules))
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
