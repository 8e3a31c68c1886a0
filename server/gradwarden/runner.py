"""Running the analysis over many files, in worker processes when there are many.

Each file is read as bytes and handed to the engine (which decodes it: PEP 263, BOM), then the
file's ``# noqa`` comments are applied. One file's failure never stops the run: an unexpected
exception becomes ``Outcome.error`` and the rest goes on. Results come back in the order of the
input, whatever the number of jobs.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Sequence, Tuple, Union

from gradwarden.engine.analyze import analyze_source
from gradwarden.engine.diagnostic import Diagnostic
from gradwarden.engine.entry import files_fixed, fewer_collections, fix_files_for_process
from gradwarden.engine.front.source import decode_source
from gradwarden.noqa import filter_noqa_by_file

if TYPE_CHECKING:  # pragma: no cover
    from concurrent.futures import Future

    from gradwarden.config import Settings

Analyzer = Callable[..., List[Diagnostic]]  # (bytes | str, filename) -> diagnostics
Progress = Callable[[int, int], None]  # (files done, files in all)

PARALLEL_THRESHOLD = 20  # fewer files than this: one process
MAX_AUTO_JOBS = 4


@dataclass
class Outcome:
    """What checking one file produced."""

    filename: str  # as displayed, and as the diagnostics name it
    diagnostics: List[Diagnostic] = field(default_factory=list)
    error: Optional[str] = None  # an internal error or an unreadable file (reported, never fatal)
    source: Optional[str] = None  # the decoded text, kept only when asked (--show-source)
    # With ``record=True`` (for the result cache): sha256 of the bytes analysed, and the other
    # files the analysis read or looked for (engine.front.imports.following: path -> sha256 | None).
    digest: Optional[str] = None
    followed: Optional[Dict[str, Optional[str]]] = None


def merge_findings(diags: Sequence[Diagnostic]) -> List[Diagnostic]:
    """The findings of a run's analyses, each once: a hazard in a helper module is found by
    every script that reaches it (and often by the helper's own analysis); it is reported once,
    in its file. Which one: a finding made with the backward its program runs outranks one that
    assumes a caller's backward (the helper analysed alone cannot see how its callers run it:
    under a non-reentrant checkpoint, say, the write does not raise); among equals, the most
    severe (the first with that severity)."""
    best: Dict[Tuple[str, str, int, int], int] = {}
    out: List[Diagnostic] = []
    for d in diags:
        key = (os.path.normcase(os.path.abspath(d.filename)), d.code, d.span.row, d.span.column)
        at = best.get(key)
        if at is None:
            best[key] = len(out)
            out.append(d)
        elif d.outranks(out[at]):
            out[at] = d
    return out


def default_jobs(n_files: int) -> int:
    if n_files < PARALLEL_THRESHOLD:
        return 1
    return max(1, min(MAX_AUTO_JOBS, os.cpu_count() or 1))


def diagnose(
    source: Union[str, bytes],
    filename: str,
    settings: Optional["Settings"] = None,
    *,
    ignore_noqa: bool = False,
) -> List[Diagnostic]:
    """One document, the whole pipeline: analyse, apply ``# noqa``, then the settings'
    selection and severities (for the language server; may raise what the engine raises)."""
    diags = list(analyze_source(source, filename))
    if not ignore_noqa:
        text = source if isinstance(source, str) else decode_source(source)[0]
        diags = filter_noqa_by_file(diags, filename, text)
    return settings.apply(diags) if settings is not None else diags


def check_bytes(
    data: bytes,
    filename: str,
    *,
    ignore_noqa: bool = False,
    keep_source: bool = False,
    analyzer: Optional[Analyzer] = None,
    record: bool = False,
) -> Outcome:
    """Analyse one file's content (never raises)."""
    analyze = analyzer if analyzer is not None else analyze_source
    out = Outcome(filename)
    digest: Optional[str] = None
    if record:  # of the file as read (the cache looks entries up by it), notebook or not
        import hashlib

        digest = hashlib.sha256(data).hexdigest()
    if filename.lower().endswith(".ipynb"):  # a notebook: its code cells as one program
        from gradwarden.notebook import NotebookError, parse_error, program_text

        try:
            data = program_text(data).encode("utf-8")
        except NotebookError as exc:
            out.diagnostics = [parse_error(filename, str(exc))]
            return out
    try:
        if record:
            from gradwarden.engine.front.imports import following

            out.digest = digest
            with following() as followed:
                diags = list(analyze(data, filename))
            out.followed = dict(followed)
        else:
            diags = list(analyze(data, filename))
        text: Optional[str] = None
        if not ignore_noqa or keep_source:
            text, _ = decode_source(data)
        if not ignore_noqa:
            diags = filter_noqa_by_file(diags, filename, text)
        out.diagnostics = diags
        if keep_source:
            out.source = text
    except Exception as exc:  # noqa: BLE001 - one file's failure must not end the run
        out.error = f"internal error while checking {filename}: {type(exc).__name__}: {exc}"
    return out


def check_path(
    path: str,
    filename: str,
    *,
    ignore_noqa: bool = False,
    keep_source: bool = False,
    analyzer: Optional[Analyzer] = None,
    record: bool = False,
) -> Outcome:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return Outcome(filename, error=f"cannot read {filename}: {exc.strerror or exc}")
    return check_bytes(data, filename, ignore_noqa=ignore_noqa, keep_source=keep_source, analyzer=analyzer,
                       record=record)


def _check_chunk(
    chunk: Sequence[Tuple[str, str]], ignore_noqa: bool, keep_source: bool, analyzer: Optional[Analyzer],
    record: bool = False,
) -> List[Outcome]:
    fix_files_for_process()  # a worker of this run: the tree does not change while it runs
    with fewer_collections():
        return [
            check_path(p, name, ignore_noqa=ignore_noqa, keep_source=keep_source, analyzer=analyzer, record=record)
            for p, name in chunk
        ]


def _picklable(obj: object) -> bool:
    import pickle

    try:
        pickle.dumps(obj)
    except Exception:  # noqa: BLE001
        return False
    return True


def run(
    files: Sequence[Tuple[Path, str]],
    *,
    jobs: Optional[int] = None,
    ignore_noqa: bool = False,
    keep_source: bool = False,
    progress: Optional[Progress] = None,
    analyzer: Optional[Analyzer] = None,
    record: bool = False,
) -> List[Outcome]:
    """Check ``files`` ((path, display name) pairs); one Outcome per file, in input order.

    ``jobs``: None or 0 picks automatically (see default_jobs). ``analyzer`` defaults to this
    module's ``analyze_source`` looked up at call time (tests may monkeypatch it); with several
    jobs it is sent to the workers by reference, so it must be a module-level function.
    ``record``: fill each Outcome's ``digest`` and ``followed`` (gradwarden.cache stores them).
    """
    analyze = analyzer if analyzer is not None else analyze_source
    items = [(str(p), name) for p, name in files]
    total = len(items)
    n_jobs = jobs if jobs else default_jobs(total)
    n_jobs = max(1, min(n_jobs, total or 1))
    if n_jobs > 1 and not _picklable(analyze):
        n_jobs = 1
    if n_jobs == 1:
        results: List[Outcome] = []
        with fewer_collections(), files_fixed():
            for i, (p, name) in enumerate(items):
                results.append(check_path(p, name, ignore_noqa=ignore_noqa, keep_source=keep_source,
                                          analyzer=analyze, record=record))
                if progress:
                    progress(i + 1, total)
        return results

    # A process pool is imported in _run_in_pool: it costs tens of milliseconds to import, and
    # most runs (one file from an editor or pre-commit, a warm cache) never start one.
    import gc

    forked = _forked_workers()
    # The run's answers (import look-ups, listings, module bytes) are kept from the priming
    # below into the pool: forked workers inherit them with the parses (fix_files_for_process).
    with files_fixed():
        primed: List[Outcome] = []
        if forked:
            primed = _prime(items, _chunk_size(total, n_jobs), ignore_noqa, keep_source, progress, total,
                            analyze, record)
            # Freeze the collector's view of what this process holds (the engine, the parses):
            # the workers' collections skip those objects instead of scanning (and copying) them.
            gc.freeze()
        try:
            rest = items[len(primed):]
            if not rest:
                return primed
            if len(rest) < PARALLEL_THRESHOLD:  # what is left is not worth a pool
                return primed + _run_here(rest, ignore_noqa, keep_source, progress, analyze, record,
                                          done=len(primed), total=total)
            return primed + _run_in_pool(rest, n_jobs, ignore_noqa, keep_source, progress, analyze, record,
                                         done=len(primed), total=total, parent_works=forked)
        finally:
            if forked:
                gc.unfreeze()


# How many project modules one analysis must parse to count as having loaded a package (the
# priming below stops there): torch-geometric's first importer of its package parses 540,
# monai's first ``__main__`` 163; an ordinary file 0-20.
PRIME_PARSES = 32


def _run_here(items: List[Tuple[str, str]], ignore_noqa: bool, keep_source: bool, progress: Optional[Progress],
              analyze: Analyzer, record: bool, *, done: int = 0, total: Optional[int] = None) -> List[Outcome]:
    """Check ``items`` in this process, in order (the caller holds the run's answers)."""
    total = len(items) if total is None else total
    results: List[Outcome] = []
    with fewer_collections():
        for p, name in items:
            results.append(check_path(p, name, ignore_noqa=ignore_noqa, keep_source=keep_source,
                                      analyzer=analyze, record=record))
            done += 1
            if progress:
                progress(done, total)
    return results


def _prime(items: List[Tuple[str, str]], budget: int, ignore_noqa: bool, keep_source: bool,
           progress: Optional[Progress], total: int, analyze: Analyzer, record: bool) -> List[Outcome]:
    """Before forking the workers, check the first files here, in order, until one of them
    has loaded a package of the project (``PRIME_PARSES`` modules parsed by its analysis) or
    ``budget`` files are done. Every worker then inherits those parses and the run's answers
    instead of making them again: a library's package is typically loaded by a few of its
    files, and with the files split between workers each worker's first importer parsed the
    whole package anew (torch-geometric: 540 modules, about 1 s of CPU, once per worker; monai's
    ``__main__`` scripts 155-163). Only where workers are forked: spawned workers inherit nothing."""
    from gradwarden.engine.analyze import preload
    from gradwarden.engine.front.imports import parses_made

    preload()  # what a first analysis loads lazily (the engine, the rules, the op table)
    results: List[Outcome] = []
    with fewer_collections():
        for p, name in items[:budget]:
            before = parses_made()
            results.append(check_path(p, name, ignore_noqa=ignore_noqa, keep_source=keep_source,
                                      analyzer=analyze, record=record))
            if progress:
                progress(len(results), total)
            if parses_made() - before >= PRIME_PARSES:
                break
    return results


def _forked_workers() -> bool:
    """Whether the pool's workers are forked from this process (Linux's default start method up
    to Python 3.13) and so inherit what it loaded and parsed. Spawned or forkserver workers
    (macOS, Windows) start from nothing: the engine is loaded by each, nothing is primed."""
    import multiprocessing

    return multiprocessing.get_start_method(allow_none=False) == "fork"


def _chunk_size(total: int, n_jobs: int) -> int:
    # Small chunks keep the workers busy to the end; big enough to amortise the pickling.
    return max(1, min(32, total // (n_jobs * 4) or 1))


def _run_in_pool(items: List[Tuple[str, str]], n_jobs: int, ignore_noqa: bool, keep_source: bool,
                 progress: Optional[Progress], analyze: Analyzer, record: bool, *, done: int = 0,
                 total: Optional[int] = None, parent_works: bool = False) -> List[Outcome]:
    """``parent_works``: this process is one of the ``n_jobs``: it forks one worker fewer and
    checks chunks itself, from the last one backwards, while the workers take them from the
    first; a chunk a worker has already taken is not taken back. (Its caches are warm and its
    memory its own: a forked worker's first writes to every inherited page copy it.)"""
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    total = len(items) if total is None else total
    size = _chunk_size(len(items), n_jobs)
    chunks = [items[i : i + size] for i in range(0, len(items), size)]
    by_chunk: Dict[int, List[Outcome]] = {}
    workers = n_jobs - 1 if parent_works else n_jobs
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(_check_chunk, chunk, ignore_noqa, keep_source, analyze, record) for chunk in chunks]
        pending: Dict["Future", int] = {fut: i for i, fut in enumerate(futures)}

        def collect(timeout: Optional[float]) -> None:
            nonlocal done
            finished, _ = wait(list(pending), timeout=timeout, return_when=FIRST_COMPLETED)
            for fut in finished:
                index = pending.pop(fut)
                try:
                    by_chunk[index] = fut.result()
                except Exception as exc:  # noqa: BLE001 - a worker died (BrokenProcessPool, ...)
                    by_chunk[index] = [
                        Outcome(name, error=f"internal error while checking {name}: worker failed: "
                                            f"{type(exc).__name__}: {exc}")
                        for _, name in chunks[index]
                    ]
                done += len(chunks[index])
                if progress:
                    progress(done, total)

        try:
            own = len(chunks) - 1
            while parent_works and own >= 0 and futures[own].cancel():  # not taken by a worker yet
                del pending[futures[own]]
                by_chunk[own] = _check_chunk(chunks[own], ignore_noqa, keep_source, analyze, record)
                done += len(chunks[own])
                if progress:
                    progress(done, total)
                own -= 1
                if pending:
                    collect(0)  # what the workers finished meanwhile, for the progress shown
            while pending:
                collect(None)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return [outcome for i in range(len(chunks)) for outcome in by_chunk[i]]
