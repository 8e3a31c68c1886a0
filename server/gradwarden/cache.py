"""The result cache of ``gradwarden check``: a re-run over unchanged files analyses nothing.

One entry per checked file and configuration, a small JSON file named by a hash of the file's
absolute path, its displayed name, the effective configuration and ``--ignore-noqa``. An entry
holds what the runner produced for the file (``runner.Outcome``: diagnostics after ``# noqa``,
before the configuration's selection, which ``check`` applies to every outcome) and what it
was computed from, all compared before it is used:

- the sha256 of the file's bytes;
- the engine: gradwarden's version, the op table (sha256 of ``optable.json``), a stamp of the
  sources that compute what is cached (engine, rules, noqa, notebooks, the fixer: size and
  mtime of each file, so that an edited checkout never reuses results of the code it
  replaced), and the analyser function;
- for a script that follows project imports, every file the import resolution read (its
  sha256) or looked for and did not find (creating it later changes the answer).

The fixes the text, JSON and SARIF reports show (``[*]``, exact edits; realising them imports
libcst and, for exact edits, runs the fixer) are kept the same way in ``fixes/``, keyed by the
file's text, its reported diagnostics and the files the fix runs followed.

Where: ``--cache-dir DIR``, else ``$GRADWARDEN_CACHE_DIR``, else ``.gradwarden_cache/`` in the
project root (the folder of the configuration file in use, else the working directory), like
ruff's ``.ruff_cache/``: it holds a ``.gitignore`` (``*``) and a ``CACHEDIR.TAG`` so that git
and backup tools skip it. ``--no-cache`` (or ``GRADWARDEN_NO_CACHE=1``) bypasses it;
``gradwarden clean`` removes it.

Safe under concurrent runs: an entry is written to a temporary file in the same folder, then
renamed over the old one (readers see the old entry or the new one, never half of one). An
entry that cannot be read, parsed or decoded is ignored (the file is analysed again and the
entry rewritten). The cache never fails a check: a folder that cannot be written only means
nothing is stored (one warning).
"""
from __future__ import annotations

import dataclasses
import json
import os
import sys
from enum import Enum
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, TextIO, Tuple

from gradwarden import __version__
from gradwarden.engine import diagnostic as _diagnostic_module
from gradwarden.engine.diagnostic import Diagnostic

CACHE_DIR_NAME = ".gradwarden_cache"
ENV_CACHE_DIR = "GRADWARDEN_CACHE_DIR"
ENV_NO_CACHE = "GRADWARDEN_NO_CACHE"
ENTRY_FORMAT = 1
GITIGNORE = "# Automatically created by gradwarden.\n*\n"
# https://bford.info/cachedir/ (also what `gradwarden clean` looks for before deleting).
CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by gradwarden.\n")

_PACKAGE = Path(__file__).resolve().parent
# What the cached results are computed by (their size and mtime go into the engine stamp):
# the analysis, # noqa, notebooks' programs, and the fixer behind the reports' fixes.
_STAMPED = ("engine", "rules", "noqa.py", "runner.py", "notebook.py", "lsp/documents.py", "fixes", "fixability.py")
_OPTABLE = _PACKAGE / "engine" / "domain" / "data" / "optable.json"

# Settings fields that choose files or processes, not results (left out of the key).
_WALK_ONLY_FIELDS = ("config_file", "exclude", "respect_gitignore", "jobs")


# --------------------------------------------------------------------------- keys
def _sha256(data: bytes) -> str:
    import hashlib  # here: `check --no-cache` imports this module but hashes nothing

    return hashlib.sha256(data).hexdigest()


def _file_digest(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as fh:
            return _sha256(fh.read())
    except OSError:
        return None


def _engine_stamp() -> str:
    parts: List[str] = []
    for name in _STAMPED:
        top = _PACKAGE / name
        if top.is_file():
            found = [str(top)]
        else:
            found = []
            for root, dirs, files in os.walk(top):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                found += [os.path.join(root, f) for f in sorted(files) if f.endswith((".py", ".json"))]
        for path in found:
            try:
                st = os.stat(path)
            except OSError:
                continue
            parts.append(f"{os.path.relpath(path, _PACKAGE)}:{st.st_size}:{st.st_mtime_ns}")
    return _sha256("\n".join(parts).encode())


def engine_fingerprint(analyzer: Callable[..., Any]) -> str:
    """Everything about gradwarden itself that a cached result depends on."""
    optable = _file_digest(str(_OPTABLE)) or "none"
    who = f"{getattr(analyzer, '__module__', '?')}.{getattr(analyzer, '__qualname__', repr(analyzer))}"
    return _sha256(f"{__version__}|{ENTRY_FORMAT}|{optable}|{_engine_stamp()}|{who}".encode())


def _canonical(value: Any) -> Any:
    """A JSON-able, order-stable form of a settings value (dataclasses, enums, paths, tuples)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _canonical(getattr(value, f.name)) for f in dataclasses.fields(value) if f.repr}
    if isinstance(value, Enum):
        return value.name
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def settings_fingerprint(settings: Any) -> str:
    """The effective configuration: every Settings field but those that only choose files."""
    fields = {f.name: _canonical(getattr(settings, f.name)) for f in dataclasses.fields(settings)
              if f.name not in _WALK_ONLY_FIELDS}
    return _sha256(json.dumps(fields, sort_keys=True).encode())


# --------------------------------------------------------------------------- diagnostics <-> JSON
# Every class a Diagnostic is made of lives in engine.diagnostic; sequences in them are tuples.
# Only those classes can come out of an entry (a JSON file names no code to run).
_CLASSES: Dict[str, type] = {
    name: cls for name, cls in vars(_diagnostic_module).items()
    if isinstance(cls, type) and cls.__module__ == _diagnostic_module.__name__
    and (dataclasses.is_dataclass(cls) or issubclass(cls, Enum))
}

def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {"__t": type(value).__name__}
        out.update({f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)})
        return out
    if isinstance(value, Enum):
        return {"__e": type(value).__name__, "v": value.name}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    raise TypeError(f"cannot cache a {type(value).__name__}")


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if "__e" in value:
            return _CLASSES[value["__e"]][value["v"]]
        cls = _CLASSES[value["__t"]]
        return cls(**{k: _decode(v) for k, v in value.items() if k != "__t"})
    if isinstance(value, list):
        return tuple(_decode(v) for v in value)
    return value


def diagnostics_to_data(diags: Sequence[Diagnostic]) -> List[Any]:
    return [_encode(d) for d in diags]


def diagnostics_from_data(data: Any) -> List[Diagnostic]:
    diags = [_decode(d) for d in data]
    if not all(isinstance(d, Diagnostic) for d in diags):
        raise TypeError("an entry holds something other than diagnostics")
    return diags


# --------------------------------------------------------------------------- the cache
class ResultCache:
    """Entries under ``<folder>/<version>/``; ``hits``/``misses``/``stored`` count this run."""

    def __init__(self, folder: Path, settings: Any, *, ignore_noqa: bool, analyzer: Callable[..., Any],
                 warn: Optional[TextIO] = None) -> None:
        self.folder = Path(folder)
        self.entries = self.folder / __version__
        self.engine = engine_fingerprint(analyzer)
        self.config = settings_fingerprint(settings)
        self.ignore_noqa = ignore_noqa
        self.warn = warn
        self.hits = 0
        self.misses = 0
        self.stored = 0
        self.fix_hits = 0  # files whose report fixes came from the cache
        self.fix_misses = 0
        self._prepared = False
        self._write_failed = False

    def entry_path(self, path: str, display: str) -> Path:
        key = json.dumps([os.path.abspath(path), display, self.config, self.ignore_noqa])
        return self.entries / f"{_sha256(key.encode())[:32]}.json"

    # ---- reading
    def lookup(self, path: str, display: str, digest: str) -> Optional[List[Diagnostic]]:
        """The diagnostics cached for this file's content, or None (absent, stale, corrupted)."""
        try:
            with open(self.entry_path(path, display), "rb") as fh:
                entry = json.loads(fh.read())
            if not (isinstance(entry, dict) and entry.get("engine") == self.engine
                    and entry.get("content") == digest):
                return None
            followed = entry.get("followed") or {}
            if any(_file_digest(dep) != want for dep, want in followed.items()):
                return None
            return diagnostics_from_data(entry["diagnostics"])
        except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):  # absent or corrupted
            return None

    # ---- writing
    def store(self, path: str, display: str, digest: str, followed: Dict[str, Optional[str]],
              diags: Sequence[Diagnostic]) -> None:
        try:
            entry = {"engine": self.engine, "content": digest, "followed": followed,
                     "diagnostics": diagnostics_to_data(diags)}
        except TypeError:  # something the codec does not know: just not cached
            return
        if self._write_entry(self.entry_path(path, display), entry):
            self.stored += 1

    # ---- the fixes a report shows (``[*]``, ``fix.edits``): gradwarden.fixability
    def index_fixes(self, diags: Sequence[Diagnostic], source_of: Callable[[str], Optional[str]],
                    analyze: Callable[..., Any], edits: bool = True) -> Any:
        """``fixability.index_fixes``, per file from the cache when the file's text, its
        diagnostics and the files its analysis followed are unchanged (knowing what a fix run
        fixes imports libcst and runs the fixer: a warm re-run does neither)."""
        from gradwarden.engine.front.imports import following
        from gradwarden.fixability import Chosen, FixIndex, index_fixes

        out = FixIndex()
        by_file: Dict[str, List[Diagnostic]] = {}
        for d in diags:
            if d.fixes:
                by_file.setdefault(d.filename, []).append(d)
        for filename, file_diags in by_file.items():
            source = source_of(filename)
            if source is None:
                continue
            # an entry made for a report with edits answers one without (text after JSON)
            if any(self._load_fixes(*self._fixes_entry(filename, source, file_diags, flag), file_diags, out, Chosen)
                   for flag in ((True,) if edits else (False, True))):
                self.fix_hits += 1
                continue
            path, key = self._fixes_entry(filename, source, file_diags, edits)
            with following() as followed:
                part = index_fixes(file_diags, lambda name, _s=source: _s if name == filename else source_of(name),
                                   analyze, edits)
            out.chosen.update(part.chosen)
            out.realised.update(part.realised)
            self.fix_misses += 1
            position = {id(d): i for i, d in enumerate(file_diags)}
            entry = {
                "engine": self.engine, "key": key, "followed": dict(followed),
                "chosen": [[position[k], _encode(c.fix), c.safe] for k, c in part.chosen.items() if k in position],
                "realised": [[position[k], _encode(list(fs))] for k, fs in part.realised.items() if k in position],
            }
            self._write_entry(path, entry)
        return out

    def _fixes_entry(self, filename: str, source: str, diags: Sequence[Diagnostic], edits: bool) -> Tuple[Path, str]:
        """Where a file's fixes are kept (one entry per file and configuration, like its
        results), and the key of what they were computed from (the text and its diagnostics)."""
        where = json.dumps([os.path.abspath(filename), filename, self.config, self.ignore_noqa, edits])
        key = _sha256(json.dumps([_sha256(source.encode("utf-8", "surrogatepass")), diagnostics_to_data(diags)],
                                 sort_keys=True).encode())
        return self.entries / "fixes" / f"{_sha256(where.encode())[:32]}.json", key

    def _load_fixes(self, path: Path, key: str, diags: Sequence[Diagnostic], out: Any, chosen_type: type) -> bool:
        try:
            with open(path, "rb") as fh:
                entry = json.loads(fh.read())
            if not (isinstance(entry, dict) and entry.get("engine") == self.engine and entry.get("key") == key):
                return False
            if any(_file_digest(dep) != want for dep, want in (entry.get("followed") or {}).items()):
                return False
            chosen = {id(diags[i]): chosen_type(_decode(fix), bool(safe)) for i, fix, safe in entry["chosen"]}
            realised = {id(diags[i]): tuple(_decode(fixes)) for i, fixes in entry["realised"]}
        except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError):
            return False
        out.chosen.update(chosen)
        out.realised.update(realised)
        return True

    def _write_entry(self, path: Path, entry: Dict[str, Any]) -> bool:
        if self._write_failed:
            return False
        try:
            data = json.dumps(entry, separators=(",", ":")).encode()
        except (TypeError, ValueError):  # something the codec does not know: just not cached
            return False
        try:
            self._prepare()
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, data)
        except OSError as exc:
            self._write_failed = True
            if self.warn is not None:
                print(f"warning: cannot write the cache in {self.folder}: {exc.strerror or exc} "
                      f"(--no-cache skips it)", file=self.warn)
            return False
        return True

    def _prepare(self) -> None:
        if self._prepared:
            return
        self.entries.mkdir(parents=True, exist_ok=True)
        for name, text in ((".gitignore", GITIGNORE), ("CACHEDIR.TAG", CACHEDIR_TAG)):
            if not (self.folder / name).exists():
                write_atomic(self.folder / name, text.encode())
        self._prepared = True


_MODE: Optional[int] = None


def _file_mode() -> int:
    """What a plainly created file gets under the user's umask (mkstemp makes 0600 files)."""
    global _MODE
    if _MODE is None:
        umask = os.umask(0o022)
        os.umask(umask)
        _MODE = 0o666 & ~umask
    return _MODE


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it over ``path``."""
    from gradwarden.atomicio import replace_atomically

    replace_atomically(path, data, _file_mode(), prefix=".tmp-", suffix=".part")


# --------------------------------------------------------------------------- where
def default_folder(settings: Any) -> Path:
    """``$GRADWARDEN_CACHE_DIR``, else ``.gradwarden_cache`` beside the configuration file in
    use, else in the working directory."""
    env = os.environ.get(ENV_CACHE_DIR)
    if env:
        return Path(env)
    config_file = getattr(settings, "config_file", None)
    base = Path(config_file).parent if config_file else Path(os.getcwd())
    return base / CACHE_DIR_NAME


def disabled_by_environment() -> bool:
    return os.environ.get(ENV_NO_CACHE, "").strip().lower() not in ("", "0", "false", "no")


def for_check(args: Any, settings: Any, analyzer: Callable[..., Any], warn: TextIO) -> Optional[ResultCache]:
    """The cache ``check`` uses with these options (``--no-cache``, ``--cache-dir``), or None."""
    if getattr(args, "no_cache", False) or disabled_by_environment():
        return None
    folder = Path(args.cache_dir) if getattr(args, "cache_dir", None) else default_folder(settings)
    return ResultCache(folder, settings, ignore_noqa=bool(getattr(args, "ignore_noqa", False)),
                       analyzer=analyzer, warn=warn)


# --------------------------------------------------------------------------- a cached run
def _source_text(display: str, data: bytes) -> Optional[str]:
    """What ``runner.check_bytes`` keeps as the source (a notebook: its program)."""
    from gradwarden.engine.front.source import decode_source

    if display.lower().endswith(".ipynb"):
        from gradwarden.notebook import NotebookError, program_text

        try:
            return program_text(data)
        except NotebookError:
            return None
    return decode_source(data)[0]


def run_cached(cache: ResultCache, files: Sequence[Tuple[Path, str]], *, run: Callable[..., List[Any]],
               progress: Optional[Callable[[int, int], None]] = None, **run_kwargs: Any) -> List[Any]:
    """``runner.run`` over ``files``, answering unchanged files from ``cache``: the others are
    analysed (``run(misses, record=True, ...)``) and stored. Outcomes in input order."""
    from gradwarden.runner import Outcome

    total = len(files)
    results: List[Optional[Any]] = [None] * total
    misses: List[Tuple[int, Tuple[Path, str]]] = []
    keep_source = bool(run_kwargs.get("keep_source"))
    for i, (path, display) in enumerate(files):
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            misses.append((i, (path, display)))  # the runner reports it
            continue
        diags = cache.lookup(str(path), display, _sha256(data))
        if diags is None:
            misses.append((i, (path, display)))
            continue
        outcome = Outcome(display, diagnostics=diags)
        if keep_source:
            outcome.source = _source_text(display, data)
        results[i] = outcome
    cache.hits = total - len(misses)
    cache.misses = len(misses)
    if progress and cache.hits:
        progress(cache.hits, total)
    shifted = (lambda done, _n: progress(cache.hits + done, total)) if progress else None
    fresh = run([f for _, f in misses], record=True, progress=shifted, **run_kwargs) if misses else []
    for (i, (path, display)), outcome in zip(misses, fresh):
        results[i] = outcome
        if outcome.error is None and outcome.digest is not None:
            cache.store(str(path), display, outcome.digest, outcome.followed or {}, outcome.diagnostics)
    return results  # type: ignore[return-value]


# --------------------------------------------------------------------------- gradwarden clean
def is_our_cache(folder: Path) -> bool:
    try:
        return (folder / "CACHEDIR.TAG").read_text(encoding="utf-8", errors="replace") == CACHEDIR_TAG
    except OSError:
        return False


def find_caches(start: Path) -> List[Path]:
    """``.gradwarden_cache`` folders under ``start`` (hidden folders and node_modules skipped)."""
    found: List[Path] = []
    for root, dirs, _files in os.walk(start):
        if CACHE_DIR_NAME in dirs:
            found.append(Path(root) / CACHE_DIR_NAME)
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__")]
    return found


def clean(folders: Sequence[Path], out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Remove each folder that is a gradwarden cache (CACHEDIR.TAG says so); refuse others."""
    status = 0
    for folder in folders:
        if not folder.exists():
            continue
        if not is_our_cache(folder):
            print(f"error: {folder} is not a gradwarden cache (no gradwarden CACHEDIR.TAG); not removed", file=err)
            status = 2
            continue
        try:
            import shutil

            shutil.rmtree(folder)
        except OSError as exc:
            print(f"error: cannot remove {folder}: {exc.strerror or exc}", file=err)
            status = 2
            continue
        print(f"Removed {folder}", file=out)
    return status


def clean_here(cache_dir: Optional[str], out: TextIO, err: TextIO) -> int:
    """``gradwarden clean``: the cache ``check`` would use from here, and those below."""
    if cache_dir:
        return clean([Path(cache_dir)], out, err)
    from gradwarden.config import ConfigError, load_settings

    try:
        settings: Any = load_settings(Path(os.getcwd()), None)
    except ConfigError:
        settings = None
    folders = [default_folder(settings)]
    folders += [f for f in find_caches(Path(os.getcwd())) if f.resolve() != folders[0].resolve()]
    return clean(folders, out, err)
