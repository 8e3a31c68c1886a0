"""Resolving names imported from the user's own project (``from .models import Generator``).

A training script usually imports its models from a sibling module; without them the step /
backward ordering hazards of the script are invisible. When a module is analysed as a script
(it has top-level code worth running), names imported from modules of the same project are
resolved to their source files: first by a direct lookup of the module path next to the file
and up to the project root, then, for what that cannot find (sys.path tricks, namespace
packages), with jedi. Only files inside the project are followed, never site-packages, and
only on this path (a library module is analysed without following imports), so the lint of
a large library stays fast.
"""
from __future__ import annotations

import ast
import copy
import os
from collections import OrderedDict
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from gradwarden.engine import entry
from gradwarden.engine.front import listings
from gradwarden.engine.front.source import SourceText, decode_source

MAX_FOREIGN_BYTES = 2_000_000
MAX_TEXT_BYTES = 64 * 1024  # a text file the project's code opens and parses itself (a config)
_ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")

# The other files an analysis depended on, for callers that cache results per file
# (gradwarden.cache): absolute path -> sha256 of the bytes read, or None for a path that was
# looked for and not found (creating it later could change the result). Set by following().
_FOLLOWED: ContextVar[Optional[Dict[str, Optional[str]]]] = ContextVar("gradwarden_followed", default=None)


# Texts that stand for files on disk while a block runs (the language server: the document
# being edited, as the analysis of a script importing it must see it): absolute path -> bytes.
_OVERLAY: ContextVar[Optional[Dict[str, bytes]]] = ContextVar("gradwarden_overlay", default=None)


@contextmanager
def overlaid(texts: Dict[str, bytes]) -> Iterator[None]:
    """Read ``texts`` instead of those files (resolved absolute paths) while the block runs."""
    token = _OVERLAY.set(texts)
    try:
        yield
    finally:
        _OVERLAY.reset(token)


@contextmanager
def following() -> Iterator[Dict[str, Optional[str]]]:
    """Record, while the block runs, the project files that import resolution reads or probes."""
    followed: Dict[str, Optional[str]] = {}
    token = _FOLLOWED.set(followed)
    try:
        yield followed
    finally:
        _FOLLOWED.reset(token)


def _record(path: Path, data: Optional[bytes]) -> None:
    followed = _FOLLOWED.get()
    if followed is not None:
        import hashlib  # only when recording for the result cache

        followed[os.path.abspath(path)] = hashlib.sha256(data).hexdigest() if data is not None else None
        if _probes is not None:
            _probes.append((path, data))


_probes: Optional[List[Tuple[Path, Optional[bytes]]]] = None  # what _record saw while an answer was found


class ParsedModule:
    """What parsing a project module gives, independent of the analysis that imports it: its
    text, tree, statements and trigger index. Shared by the analyses of one process (see
    _parsed); the analyses only read it."""

    def __init__(self, text: str, tree: ast.Module) -> None:
        self.src = SourceText(text)
        self.tree = tree
        self._statements: Optional[List[ast.stmt]] = None
        self._def_ids: Optional[List[int]] = None
        self._triggers = None

    @property
    def statements(self) -> List[ast.stmt]:
        """Every statement of the module, nested ones included (statements only sit in the
        bodies of statements, handlers and match cases, so expressions are not descended)."""
        if self._statements is None:
            out: List[ast.stmt] = []
            todo = list(self.tree.body)
            while todo:
                stmt = todo.pop()
                out.append(stmt)
                for field in ("body", "orelse", "finalbody"):
                    sub = getattr(stmt, field, None)
                    if sub:
                        todo.extend(sub)
                for handler in getattr(stmt, "handlers", ()):
                    todo.extend(handler.body)
                for case in getattr(stmt, "cases", ()):
                    todo.extend(case.body)
            self._statements = out
        return self._statements

    @property
    def def_ids(self) -> List[int]:
        """The ids of the module's function and class definitions (``triggers._defs``): every
        analysis that follows an import of the module asks, and the walk is the same each time."""
        if self._def_ids is None:
            from gradwarden.engine.front.triggers import _defs

            self._def_ids = [id(node) for node, _ in _defs(self.tree.body, None)]
        return self._def_ids

    @property
    def triggers(self):
        """The textual trigger index of this module's own lines (never the importer's)."""
        if self._triggers is None:
            from gradwarden.engine.front.triggers import Triggers

            self._triggers = Triggers(self.tree, self.src)
        return self._triggers


# Parsed project modules by (path, bytes): the files of one project import the same modules
# (a lint run over a package parses its __init__ files once instead of once per importer; a
# language-server worker re-analyses on every edit). Keyed by the bytes read, so an edited
# module is parsed afresh; bounded by the size of the sources held, least recently used first
# out. A library's files import its package modules over and over: at 1.5 MB monai's 438
# files made 792 parses and torch-geometric's 655 made 789 (the bound evicted modules imported
# again a few files later); at 4 MB 507 and 666. A tree held takes about 20x its source in
# memory (monai: max RSS 111 -> 163 MB with 2.5 MB more held).
MAX_PARSED_BYTES = 4_000_000
_PARSED: "OrderedDict[Tuple[str, bytes], ParsedModule]" = OrderedDict()
_parsed_bytes = 0
_parses = 0  # parses made by this process (runner.py: has an analysis loaded a package?)


def parses_made() -> int:
    """How many project modules this process has parsed so far (cache hits not counted)."""
    return _parses


def parsed_already(key: Tuple[str, bytes]) -> Optional[ParsedModule]:
    """The cached parse of (resolved path, bytes), if any (analyze_source asks it first: a
    module that other files of the run imported is not parsed twice)."""
    hit = _PARSED.get(key)
    if hit is not None:
        _PARSED.move_to_end(key)
    return hit


def _parsed(path: Path, data: bytes) -> Optional[ParsedModule]:
    """The parse of ``data`` (the bytes of ``path``); None when it does not decode. Raises
    SyntaxError, ValueError, RecursionError like ast.parse."""
    global _parsed_bytes, _parses
    key = (str(path), data)
    hit = parsed_already(key)
    if hit is not None:
        return hit
    text, _ = decode_source(data)
    if text is None:
        return None
    parsed = ParsedModule(text, ast.parse(text, filename=str(path)))
    _parses += 1
    if len(data) <= MAX_PARSED_BYTES:
        _PARSED[key] = parsed
        _parsed_bytes += len(data)
        while _parsed_bytes > MAX_PARSED_BYTES:
            (_, old), _ = _PARSED.popitem(last=False)
            _parsed_bytes -= len(old)
    return parsed


class ForeignModule:
    """A project module whose definitions a script uses: its parse (shared) and what this
    analysis made of it (its globals)."""

    def __init__(self, path: Path, parsed: ParsedModule) -> None:
        self.path = path
        self.parsed = parsed
        self.src = parsed.src
        self.tree = parsed.tree
        self.globals: Dict[str, object] = {}
        self.loaded = False

    @property
    def triggers(self):
        return self.parsed.triggers


# Folders a run names as the project (the command line's folders and working directory, the
# language server's workspace folders): a file inside one without a marker between them
# belongs to that project (a script in ``tools/`` still sees the packages beside ``tools/``).
_ROOT_HINTS: List[Path] = []


def set_root_hints(folders: List[str]) -> None:
    """The folders this process's analyses take as project roots when no marker says otherwise
    (the CLI: the folders it was given and the working directory; the server: its workspace)."""
    hints = []
    for f in folders:
        try:
            p = Path(f).resolve()
        except (OSError, RuntimeError):
            continue
        if p.is_dir() and p not in hints:
            hints.append(p)
    _ROOT_HINTS[:] = hints


def project_root(filename: str) -> Optional[Path]:
    try:
        here = Path(filename).resolve().parent
    except OSError:
        return None
    scope = entry.run_answers()  # a check's run: one listing per folder (front/listings.py)
    if scope is None:
        return _root_of(here, None)
    # the modules of one folder share its answer (torch-geometric: 503 files, 58 folders)
    key = ("root of", str(here), tuple(map(str, _ROOT_HINTS)))
    hit = scope.get(key)
    if hit is None:
        hit = scope[key] = (_root_of(here, scope),)
    return hit[0]


def _root_of(here: Path, scope: Optional[dict]) -> Path:
    for d in [here, *here.parents][:6]:
        folder = str(d)
        if any(listings.exists(os.path.join(folder, m), scope) for m in _ROOT_MARKERS):
            return d
    # no marker: the outermost folder the run names as a project that holds the file (the
    # folder given on the command line, the workspace), else the file's own folder
    for hint in sorted(_ROOT_HINTS, key=lambda h: len(h.parts)):
        if hint == here or hint in here.parents:
            if len(here.parts) - len(hint.parts) <= 5 and hint.parent != hint:
                return hint
    return here


def path_insertions(tree: ast.Module, filename: str) -> List[Path]:
    """The folders a script puts on ``sys.path`` (``sys.path.insert(0, os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "lib"))``, ``sys.path.append("third_party")``,
    ``Path(__file__).parent / ".."``), where the call's text says which: ``__file__`` with its
    ``dirname``/``.parent`` steps, then the string literals joined to it (relative literals
    alone: from the script's folder). Anything else (a variable, an environment lookup) is not
    followed."""
    out: List[Path] = []
    try:
        here = Path(filename).resolve().parent
    except OSError:
        return out
    bound: Dict[str, ast.expr] = {}  # module-level names bound once, so far (`ROOT = Path(__file__)...`)
    once = _bound_once(tree)
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in once:
            bound[node.targets[0].id] = _inlined(node.value, bound)
        for call in _path_calls(node):
            arg = call.args[-1] if call.args else None
            if arg is None:
                continue
            arg = _inlined(arg, bound)
            parts = [n.value for n in ast.walk(arg) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
            names = [n.id for n in ast.walk(arg) if isinstance(n, ast.Name)]
            others = [n for n in names if n not in ("os", "__file__", "Path", "str", "pathlib", "osp", "path")]
            if others:
                continue
            base = here
            if "__file__" in names:
                steps = sum(1 for n in ast.walk(arg) if (isinstance(n, ast.Attribute) and n.attr in ("dirname", "parent"))
                            or (isinstance(n, ast.Name) and n.id == "dirname"))
                # `Path(__file__).resolve().parents[1]`: the file's folder is `parents[0]`
                ups = [n for n in ast.walk(arg) if isinstance(n, ast.Attribute) and n.attr == "parents"]
                if ups:
                    index = [n.slice for n in ast.walk(arg) if isinstance(n, ast.Subscript) and n.value in ups]
                    if len(ups) != 1 or len(index) != 1 or not (isinstance(index[0], ast.Constant) and
                                                                 type(index[0].value) is int and index[0].value >= 0):
                        continue
                    steps += index[0].value + 1
                for _ in range(max(0, steps - 1)):
                    base = base.parent
            elif not parts:
                continue
            target = base.joinpath(*parts) if parts else base
            try:
                target = target.resolve()
            except (OSError, RuntimeError):
                continue
            if target.is_dir() and target not in out:
                out.append(target)
    return out


def runs_project_code(tree: ast.Module, resolver: "ImportResolver") -> bool:
    """Is this a program that runs code of the project's other modules: module-level code that
    runs (an ``if __name__ == "__main__":`` block, a call) and an import that ``resolver`` finds
    in the project? Its own text may hold no trigger at all (``main()`` calls a trainer that
    calls a helper that writes in place): then only the modules it imports can tell."""
    runs = any(isinstance(s, (ast.If, ast.For, ast.While, ast.With)) or
               (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)) for s in tree.body)
    if not runs or resolver.root is None:
        return False
    for s in tree.body:
        if isinstance(s, ast.ImportFrom) and s.module != "__future__":
            if resolver.find(s.module or "", s.level, None) is not None or \
                    (s.module and resolver.find_dir(s.module, s.level)):
                return True
        elif isinstance(s, ast.Import):
            for alias in s.names:
                if resolver.find(alias.name, 0, None) is not None or resolver.find_dir(alias.name, 0):
                    return True
    return False


def imported_top_level_calls(tree: ast.Module, filename: str) -> List[Tuple[str, int]]:
    """A script without a main block (a notebook export, ``from models.wrap2 import run;
    run(O())``): the modules (name, level 0) whose imported names its module-level code calls.
    Empty for a module of a regular package (a folder with ``__init__.py``, a relative import):
    a library's module-level calls (registrations, logging) run on import, not as a program."""
    if not filename or os.path.exists(os.path.join(os.path.dirname(os.path.abspath(filename)), "__init__.py")):
        return []
    bound: Dict[str, str] = {}
    for s in tree.body:
        if isinstance(s, ast.ImportFrom):
            if s.level:
                return []
            for a in s.names:
                if a.name != "*" and s.module:
                    bound[a.asname or a.name] = s.module
        elif isinstance(s, ast.Import):
            for a in s.names:
                bound[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
    if not bound:
        return []
    out: List[Tuple[str, int]] = []
    for s in tree.body:
        if not (isinstance(s, (ast.For, ast.While, ast.With)) or
                isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)):
            continue
        for node in ast.walk(s):
            if isinstance(node, ast.Call):
                f = node.func
                while isinstance(f, ast.Attribute):
                    f = f.value
                if isinstance(f, ast.Name) and f.id in bound and (bound[f.id], 0) not in out:
                    out.append((bound[f.id], 0))
    return out


def calls_project_code(calls: Sequence[Tuple[str, int]], resolver: "ImportResolver") -> bool:
    """Does this script's module-level code call a name it imports from a module of the project
    (``calls``: what :func:`imported_top_level_calls` found; the module found by ``resolver``
    inside the analysed root, not a site package)?"""
    if resolver.root is None:
        return False
    return any(resolver.find(name, level, None) is not None or bool(resolver.find_dir(name, level))
               for name, level in calls)


def _bound_once(tree: ast.Module) -> Set[str]:
    """The names the module's top level binds exactly once, by a plain assignment (a path
    variable, ``FILE = Path(__file__).resolve()``; ``ROOT = FILE.parents[1]``), and nowhere else."""
    counts: Dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            counts[node.id] = counts.get(node.id, 0) + 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for n in node.names:
                counts[n] = counts.get(n, 0) + 2
    return {stmt.targets[0].id for stmt in tree.body
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and counts.get(stmt.targets[0].id) == 1}


def _inlined(expr: ast.expr, bound: Dict[str, ast.expr]) -> ast.expr:
    """``expr`` with the names in ``bound`` replaced by the expressions they were bound to (a
    path spelled through a variable reads as the call spelling it out)."""
    if not bound or not any(isinstance(n, ast.Name) and n.id in bound for n in ast.walk(expr)):
        return expr

    class _Inline(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            value = bound.get(node.id)
            return copy.deepcopy(value) if value is not None and isinstance(node.ctx, ast.Load) else node

    return _Inline().visit(copy.deepcopy(expr))


def _path_calls(node: ast.stmt) -> Iterator[ast.Call]:
    """``sys.path.insert(...)`` / ``sys.path.append(...)`` calls at the top of a script (also
    inside a top-level ``if``/``try``)."""
    todo: List[ast.stmt] = [node]
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            f = stmt.value.func
            if isinstance(f, ast.Attribute) and f.attr in ("insert", "append") and \
                    isinstance(f.value, ast.Attribute) and f.value.attr == "path" and \
                    isinstance(f.value.value, ast.Name) and f.value.value.id == "sys":
                yield stmt.value
        elif isinstance(stmt, (ast.If, ast.Try)):
            todo.extend(stmt.body)
            todo.extend(getattr(stmt, "orelse", ()))


class _Lookups:
    """File-system answers shared by the resolvers of one analysis (the script's and those of
    the modules it follows): a followed package's modules ask the same questions many times.
    Per analysis only, so that a long-running process sees files appear and change."""

    def __init__(self) -> None:
        self.roots: Dict[str, Optional[Path]] = {}
        self.found: Dict[tuple, Optional[Path]] = {}
        self.resolved: Dict[Path, Path] = {}
        self.by_name: Dict[str, Path] = {}
        self.listed: dict = {}  # folder listings (front/listings.py) where no run keeps them
        self.extra: List[Path] = []  # folders the script put on sys.path (path_insertions)

    def resolve_name(self, filename: str) -> Path:
        """``resolve(Path(filename))`` without building the Path again for a name seen before."""
        out = self.by_name.get(filename)
        if out is None:
            out = self.by_name[filename] = self.resolve(Path(filename))
        return out

    def resolve(self, path: Path) -> Path:
        """``path.resolve()``, kept for the analysis and, in a ``check``, for the run (its links
        do not change while it runs: torch-geometric's analyses resolved the same 600 module
        paths 4,300 times, each an lstat per component)."""
        out = self.resolved.get(path)
        if out is None:
            run = entry.run_answers()
            if run is None:
                out = path.resolve()
            else:
                key = ("resolved", str(path))
                hit = run.get(key)
                if hit is None:
                    hit = run[key] = (path.resolve(),)
                out = hit[0]
            self.resolved[path] = out
        return out


class ImportResolver:
    def __init__(self, filename: str, lookups: Optional[_Lookups] = None, tree: Optional[ast.Module] = None) -> None:
        self.filename = filename
        self._lookups = lookups if lookups is not None else _Lookups()
        roots = self._lookups.roots
        if filename not in roots:
            run = entry.run_answers()
            if run is not None and ("root", filename) in run:
                roots[filename] = run[("root", filename)][0]
            else:
                roots[filename] = project_root(filename) if filename and os.path.exists(filename) else None
                if run is not None:
                    run[("root", filename)] = (roots[filename], ())
        self.root = roots[filename]
        self.cache: Dict[Path, Optional[ForeignModule]] = {}
        # the script's sys.path insertions of the project's own folders: searched by every
        # module of this analysis, as Python does once the script ran them
        if lookups is None:
            self._lookups.extra = [p for p in path_insertions(tree, filename) if self._inside_root(p)] \
                if tree is not None and self.root is not None else []

    def _where(self) -> tuple:
        """The root and the sys.path insertions, as str, for the keys of the run's answers: a
        Path hashes its parts again at every lookup (torch-geometric: 17,600 probe keys)."""
        return (str(self.root), tuple(map(str, self._lookups.extra)))

    def _scope(self) -> dict:
        """Where folder listings are kept: the run's answers (a ``check``), else this analysis's."""
        run = entry.run_answers()
        return run if run is not None else self._lookups.listed

    def _inside_root(self, p: Path) -> bool:
        return self.root is not None and (p == self.root or self.root in p.parents)

    def for_module(self, filename: str) -> "ImportResolver":
        """The resolver of a followed module's own imports: same analysis, same caches."""
        nested = ImportResolver(filename, self._lookups)
        nested.cache = self.cache
        return nested

    def find(self, module: str, level: int, name: Optional[str] = None) -> Optional[Path]:
        """The file of ``module`` (or of ``module.name`` when that is a submodule)."""
        if self.root is None:
            return None
        key = (self.filename, module, level, name)
        found = self._lookups.found
        if key not in found:
            found[key] = self._kept(key, lambda: self._find(module, level, name))
        return found[key]

    def _kept(self, key: tuple, answer: Any) -> Any:
        """``answer()``, or what it gave an earlier analysis of this run over files that do not
        change while it runs (``entry.files_fixed``: a ``check`` and its workers, never the
        language server), the probes it recorded then recorded again for this one
        (gradwarden.cache keys on them). Every file of a library that runs its package's
        modules asks the same questions again (monai: 3,336 look-ups over 438 files, each a
        dozen stat calls; a jedi look-up, 0.1-0.3 s, for the few names the direct look-up
        cannot place), and each analysis kept its answers for itself only."""
        global _probes
        run = entry.run_answers()
        if run is None:
            return answer()
        recording = _FOLLOWED.get() is not None
        rkey = key + self._where() + (recording,)
        hit = run.get(rkey)
        if hit is not None:
            for path, data in hit[1]:
                _record(path, data)
            return hit[0]
        outer, _probes = _probes, []
        try:
            out = answer()
            probes = tuple(_probes)
        finally:
            _probes = outer if outer is None else outer + _probes
        run[rkey] = (out, probes)
        return out

    def find_path(self, rel: str) -> Optional[Path]:
        """``runpy.run_path("configs/base.py")``: that file of the project, the path taken from the
        project root (where a script is run from) or from the running file's folder."""
        if self.root is None or not rel.endswith(".py"):
            return None
        here = self._lookups.resolve_name(self.filename).parent
        for base in (self.root, here):
            f = base / rel
            if f.is_file() and self._inside(f):
                return f
        return None

    def text_lines(self, rel: str) -> Optional[List[str]]:
        """``open(path)`` of a text file of the project that the code spells out (a ``.yaml`` or
        ``.txt`` config parsed by the project's own loader): its lines, kept as dependencies of the
        result as a followed module is; None for a Python file (``find_path``), one outside the
        project, over ``MAX_TEXT_BYTES`` or not UTF-8."""
        if self.root is None or rel.endswith(".py") or not rel:
            return None
        here = self._lookups.resolve_name(self.filename).parent
        for base in (self.root, here):
            f = base / rel
            if not (f.is_file() and self._inside(f)):
                continue
            overlay = _OVERLAY.get()
            data = overlay.get(str(self._lookups.resolve(f))) if overlay else None
            try:
                if data is None:
                    data = _read(f)
                    _record(f, data)
                if len(data) > MAX_TEXT_BYTES:
                    return None
                return data.decode("utf-8").splitlines(keepends=True)
            except (OSError, UnicodeDecodeError):
                return None
        return None

    def find_dir(self, module: str, level: int) -> bool:
        """Is ``module`` a folder of the project (a namespace package, without ``__init__.py``)?"""
        if self.root is None or not module:
            return False
        key = (self.filename, module, level, "/")
        found = self._lookups.found
        if key not in found:
            found[key] = self._kept(key, lambda: self._find_dir(module.split("."), level))
        return found[key] is not None

    def _find_dir(self, parts: List[str], level: int) -> Optional[Path]:
        """The first base holding the folder ``parts`` inside the root (a str path per base)."""
        if not _plain(parts):
            return next((d for d in self._bases(level) if d.joinpath(*parts).is_dir()
                         and self._inside(d.joinpath(*parts))), None)
        scope = self._scope()
        for d in self._bases(level):
            q = os.path.join(str(d), *parts)
            if listings.is_dir(q, scope) and self._inside(Path(q)):
                return d
        return None

    def _bases(self, level: int) -> Sequence[Path]:
        """The folders a module is looked for in (kept for the run in a ``check``: every module of
        a package asks for its own folder's, torch-geometric 6,900 times, with pathlib parents)."""
        run = entry.run_answers()
        if run is None:
            return self._bases_now(level)
        key = ("bases", self.filename, level) + self._where()
        hit = run.get(key)
        if hit is None:
            hit = run[key] = tuple(self._bases_now(level))
        return hit

    def _bases_now(self, level: int) -> List[Path]:
        here = self._lookups.resolve_name(self.filename).parent
        if level:
            base = here
            for _ in range(level - 1):
                base = base.parent
            return [base]
        # the file's folder, its parents up to the root, then the script's sys.path insertions;
        # the parents inside the root are the first of ``here.parents`` (nearest first), up to
        # the root itself (none when the file is not below the root)
        parents = here.parents
        inside: List[Path] = []
        if self.root in parents:
            for p in parents:
                inside.append(p)
                if p == self.root:
                    break
        return [here, *inside, *self._lookups.extra]

    def _find(self, module: str, level: int, name: Optional[str]) -> Optional[Path]:
        bases = self._bases(level)
        parts = module.split(".") if module else []
        if not parts and level and name is None:
            # `from . import register`: the package itself, whose `__init__.py` defines the name
            init = bases[0] / "__init__.py"
            return init if listings.is_file(str(init), self._scope()) and self._inside(init) else None
        recording = _FOLLOWED.get() is not None
        for base in bases:
            for cand in ([parts + [name]] if name else []) + [parts]:
                if not cand:
                    continue
                found, absent = self._probe(base, cand, recording)
                for f in absent:
                    _record(f, None)  # absent today: its appearance would change the answer
                if found is not None:
                    return found
        # jedi only for a package that exists in the project (stdlib and site-packages imports
        # are not followed, and asking jedi about them costs milliseconds each)
        top = parts[0] if parts else (name or "")
        if level or not top or not any(self._present(b, top) for b in bases):
            return None
        return self._jedi(module, level, name)

    def _probe(self, base: Path, cand: List[str], recording: bool) -> Tuple[Optional[Path], Tuple[Path, ...]]:
        """The module ``cand`` (dotted parts) under ``base``: its file (``.py``, else a package's
        ``__init__.py``) inside the root, and the candidates before it absent from disk (recorded
        only when ``recording``). Kept for the run (``entry.files_fixed``): the modules of one
        folder ask the same probes (every ``import torch`` of a library probes each folder up
        to the root for ``torch.py`` and ``torch/__init__.py``)."""
        run = entry.run_answers()
        key = ("probe", str(base), tuple(cand), str(self.root), recording)
        if run is not None:
            hit = run.get(key)
            if hit is not None:
                return hit
        out: Tuple[Optional[Path], Tuple[Any, ...]] = (None, ())
        if not _plain(cand):
            p = base.joinpath(*cand)
            absent: List[Any] = []
            for f in (p.with_suffix(".py"), p / "__init__.py"):
                if f.is_file() and self._inside(f):
                    out = (f, tuple(absent))
                    break
                if recording and not f.exists():
                    absent.append(f)
            else:
                out = (None, tuple(absent))
        else:
            # str paths and the folders' listings (front/listings.py): the same answers as
            # base.joinpath(*cand).with_suffix(".py") / "__init__.py" probed one by one
            scope = self._scope()
            q = os.path.join(str(base), *cand)
            absent = []
            for s in (q + ".py", os.path.join(q, "__init__.py")):
                if listings.is_file(s, scope):
                    f = Path(s)
                    if self._inside(f):
                        out = (f, tuple(absent))
                        break
                if recording and not listings.exists(s, scope):
                    absent.append(s)  # _record takes its absolute path, str or Path alike
            else:
                out = (None, tuple(absent))
        if run is not None:
            run[key] = out
        return out

    @staticmethod
    def _present(base: Path, top: str) -> bool:
        """Is there a ``top`` folder or ``top.py`` in ``base`` (kept for the run, as ``_probe``)?"""
        run = entry.run_answers()
        key = ("present", str(base), top)
        if run is not None:
            hit = run.get(key)
            if hit is not None:
                return hit[0]
        if _plain([top]):
            scope = run  # none: probed one by one, as before
            folder = str(base)
            out = listings.exists(os.path.join(folder, top), scope) or \
                listings.exists(os.path.join(folder, f"{top}.py"), scope)
        else:
            out = (base / top).exists() or (base / f"{top}.py").exists()
        if run is not None:
            run[key] = (out,)
        return out

    def _inside(self, f: Path) -> bool:
        try:
            self._lookups.resolve(f).relative_to(self.root)  # type: ignore[arg-type]
        except ValueError:
            return False
        return "site-packages" not in f.parts

    def _jedi(self, module: str, level: int, name: Optional[str]) -> Optional[Path]:
        try:
            import jedi  # optional: only for what the direct lookup cannot find
        except ImportError:
            return None
        code = f"from {'.' * level}{module} import {name}" if name else f"import {module}"
        try:
            script = jedi.Script(code, path=self.filename, project=jedi.Project(str(self.root)))
            for d in script.goto(1, len(code) - 1, follow_imports=True):
                if d.module_path and self._inside(Path(d.module_path)):
                    return Path(d.module_path)
        except Exception:  # noqa: BLE001 - jedi failing only means "not resolved"
            return None
        return None

    def load(self, path: Path) -> Optional[ForeignModule]:
        path = self._lookups.resolve(path)
        if path in self.cache:
            return self.cache[path]
        mod: Optional[ForeignModule] = None
        try:
            overlay = _OVERLAY.get()
            data = overlay.get(str(path)) if overlay else None
            if data is None:
                data = _read(path)
                _record(path, data)
            if len(data) <= MAX_FOREIGN_BYTES and path != self._lookups.resolve_name(self.filename):
                parsed = _parsed(path, data)
                if parsed is not None:
                    mod = ForeignModule(path, parsed)
        except OSError:
            _record(path, None)
            mod = None
        except (SyntaxError, ValueError, RecursionError):
            mod = None
        self.cache[path] = mod
        return mod


def _read(path: Path) -> bytes:
    """``path.read_bytes()``, kept for the run in a ``check`` (``entry.run_answers``: its files do
    not change while it runs): every analysis that follows a module reads it again
    (torch-geometric: 4,300 reads of some 600 modules), and the parse cache's key hashes the
    bytes anew for each new bytes object. A file too large to follow is not kept; a read that
    failed fails again without asking the disk."""
    run = entry.run_answers()
    if run is None:
        return path.read_bytes()
    key = ("bytes", str(path))
    hit = run.get(key)
    if hit is None:
        try:
            data = path.read_bytes()
        except OSError as exc:
            # the message, not the exception: raised again, it would carry the frames of every
            # analysis that raised it (and keep them alive for the run)
            run[key] = hit = (None, str(exc))
        else:
            if len(data) > MAX_FOREIGN_BYTES:
                return data
            run[key] = hit = (data, None)
    if hit[1] is not None:
        raise OSError(hit[1])
    return hit[0]


def _plain(parts: Sequence[str]) -> bool:
    """Dotted-name parts that ``os.path.join`` joins as ``Path.joinpath`` does (no empty part,
    no ``.``, no separator): then a str path stands for the Path."""
    return all(p and "." not in p and os.sep not in p and (os.altsep is None or os.altsep not in p) for p in parts)
