"""``gradwarden check --fix | --unsafe-fixes | --diff | --fix-only`` (ruff's conventions).

- ``--fix``: apply the safe fixes, write the files back, then report what remains;
- ``--unsafe-fixes``: also apply unsafe fixes (they change gradient flow: ``.detach()``,
  recomputation, reordering a step);
- ``--diff``: print a unified diff of what ``--fix`` would change, write nothing (exit 1 when
  there is a change, 0 otherwise);
- ``--fix-only``: apply the fixes, report nothing but the count (exit 0).

Files are rewritten atomically (temporary file + rename) in their own encoding, BOM and
newline style; a second run changes nothing. Standard input (``-``) is fixed to standard
output.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Dict, List, Optional, TextIO

from gradwarden import cli
from gradwarden.engine.diagnostic import Diagnostic


def add_fix_options(parser: argparse.ArgumentParser) -> None:
    have = set(parser._option_string_actions)  # another hook may already define some
    group = parser.add_argument_group("fixes")

    def add(flag: str, **kw) -> None:
        if flag not in have:
            group.add_argument(flag, **kw)

    add("--fix", action="store_true", default=False,
        help="apply the safe fixes and write the files back (then report what remains)")
    add("--unsafe-fixes", action="store_true", default=False,
        help="with --fix/--diff/--fix-only: also apply unsafe fixes (they change gradient flow)")
    add("--diff", action="store_true", default=False,
        help="print a unified diff of the fixes instead of writing them (exit 1 when there are changes)")
    add("--fix-only", action="store_true", default=False,
        help="apply the fixes and report nothing else (implies --fix)")


def fix_stage(args: argparse.Namespace, run: "cli.CheckRun", stdout: TextIO, stderr: TextIO) -> Optional[int]:
    """Between collect and report: fix the files that have fixable diagnostics. Returns an exit
    code to stop there (``--diff``, ``--fix-only``), or None to go on and report."""
    fix = bool(getattr(args, "fix", False))
    diff = bool(getattr(args, "diff", False))
    fix_only = bool(getattr(args, "fix_only", False))
    unsafe = bool(getattr(args, "unsafe_fixes", False))
    if not (fix or diff or fix_only):
        return None
    from gradwarden.atomicio import writable_reason
    from gradwarden.fixes.apply import decode, encode, unified_diff
    from gradwarden.fixes.pipeline import fix_text
    from gradwarden.runner import diagnose

    by_file: Dict[str, List[Diagnostic]] = {}
    for d in run.diagnostics:
        by_file.setdefault(d.filename, []).append(d)
    stdin_name = (args.stdin_filename or "-") if "-" in list(args.paths or []) or \
        (not args.paths and args.stdin_filename) else None
    settings = run.settings
    n_fixed = 0
    changed_files = 0
    remaining: List[Diagnostic] = []
    diffs: List[str] = []
    errors: List[str] = []
    stdin_text: Optional[str] = None
    for filename in sorted(by_file):
        diags = by_file[filename]
        if not any(d.fixes for d in diags):
            remaining += diags
            continue
        is_stdin = stdin_name is not None and filename == stdin_name
        if not is_stdin and not diff:
            # a file this user may not write is left alone, its findings reported as they are
            reason = writable_reason(filename)
            if reason is not None:
                errors.append(f"{filename}: cannot fix: {reason}; left unchanged")
                remaining += diags
                continue
        try:
            if is_stdin:
                data = run.stdin_data or b""
            else:
                data = Path(filename).read_bytes()
            dec = None if filename.lower().endswith(".ipynb") else decode(data)
        except (OSError, SyntaxError, UnicodeDecodeError, LookupError) as exc:
            errors.append(f"{filename}: cannot fix: {exc}")
            remaining += diags
            continue

        def analyze(text: str, _name: str = filename) -> List[Diagnostic]:
            return diagnose(text, _name, settings, ignore_noqa=args.ignore_noqa)

        if dec is None:  # a notebook: fix its cells, keep the rest of its JSON (gradwarden.notebook)
            from gradwarden.notebook import fix_notebook, notebook_diff

            nbfix = fix_notebook(data, filename, unsafe=unsafe, analyze=analyze)
            if nbfix.error:
                errors.append(f"{filename}: cannot fix: {nbfix.error}")
            if is_stdin:
                stdin_text = nbfix.data.decode("utf-8")
            if not nbfix.count:
                remaining += diags
                continue
            if diff:
                diffs.append(notebook_diff(nbfix, filename))
            elif not is_stdin and not _write(filename, nbfix.data, errors):
                remaining += diags
                continue
            n_fixed += nbfix.count
            changed_files += 1
            remaining += nbfix.remaining
            continue
        outcome = fix_text(dec.text, filename, unsafe=unsafe, analyze=analyze, diagnostics=diags)
        if is_stdin:
            stdin_text = outcome.source
        if not outcome.count:
            remaining += diags
            continue
        if diff:
            diffs.append(unified_diff(dec.text, outcome.source, filename))
        elif not is_stdin:
            try:
                payload = encode(dec, outcome.source)
            except UnicodeEncodeError as exc:
                errors.append(f"{filename}: cannot write the fixed text in its encoding {dec.encoding}: {exc.reason}; "
                              "left unchanged")
                remaining += diags
                continue
            if not _write(filename, payload, errors):
                remaining += diags
                continue
        n_fixed += outcome.count
        changed_files += 1
        remaining += outcome.remaining
    if stdin_name is not None and not diff:
        if stdin_text is None:
            stdin_text = _stdin_source(run, stdin_name)
        if stdin_text is not None:
            stdout.write(stdin_text)
            stdout.flush()
    for message in errors:
        cli.error_to(stderr, message)
    quiet = getattr(args, "quiet", False) or getattr(args, "silent", False)
    if diff:
        for text in diffs:
            stdout.write(text)
        stdout.flush()
        if not quiet and n_fixed:
            what = "fix" if n_fixed == 1 else "fixes"
            print(f"Would apply {n_fixed} {what} to {changed_files} file(s).", file=stderr)
        if errors:
            return cli.EXIT_ERROR
        return cli.EXIT_FINDINGS if n_fixed else cli.EXIT_OK
    if not quiet and (n_fixed or fix_only):
        what = "fix" if n_fixed == 1 else "fixes"
        print(f"Applied {n_fixed} {what} in {changed_files} file(s).", file=stderr)
    if fix_only:
        return cli.EXIT_ERROR if errors or run.errors else cli.EXIT_OK
    run.diagnostics = sorted(remaining, key=lambda d: d.sort_key())
    if stdin_name is not None:
        # the fixed source went to stdout: the report goes to stderr
        code = cli.report(args, run, stderr, stderr)
        return cli.EXIT_ERROR if errors else code
    # printed above, once; the report shows the findings of those files as they still are, and
    # the run exits 2 (what was asked could not be done), never "could not be checked"
    run.fix_errors.extend(errors)
    return None


def _write(filename: str, data: bytes, errors: List[str]) -> bool:
    """Rewrite ``filename`` (atomicio: refused, and left as it was, when this user may not
    write it); on failure one message in ``errors``."""
    from gradwarden.atomicio import NotWritable
    from gradwarden.fixes.apply import write_atomic

    try:
        write_atomic(filename, data)
    except NotWritable as exc:
        errors.append(f"{filename}: cannot fix: {exc.reason}; left unchanged")
        return False
    except OSError as exc:
        errors.append(f"{filename}: cannot write: {exc.strerror or exc}; left unchanged")
        return False
    return True


def _stdin_source(run: "cli.CheckRun", name: str) -> Optional[str]:
    from gradwarden.fixes.apply import decode

    if run.stdin_data is None:
        return None
    try:
        return decode(run.stdin_data).text
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return run.stdin_data.decode("utf-8", errors="replace")


def register() -> None:
    """Called by ``gradwarden.cli`` each time it builds its parser (idempotent)."""
    if add_fix_options not in cli._CHECK_OPTION_HOOKS:
        cli.register_check_options(add_fix_options)
    if fix_stage not in cli._CHECK_STAGES:
        cli.register_check_stage(fix_stage)
