"""The project's import graph: which of its files import which (for the language server, which
shows in a helper module what the analysis of a script that imports it found there).

Built from the import statements of every Python file under the project root (found by
``imports.project_root``: a marker, else the folder the run names as the project), each import
resolved as ``imports.ImportResolver`` resolves it (the script's ``sys.path`` insertions
included). Files are re-read only when their size or modification time changes, so a graph
kept by a long-running process follows edits at the cost of a ``stat`` per file. Bounded: a
root with more files than ``MAX_FILES`` (a home folder, a monorepo) is not walked at all.
"""
from __future__ import annotations

import ast
import os
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple

from gradwarden.engine.front.imports import ImportResolver, project_root

MAX_FILES = 400  # a larger tree (a library, a monorepo) is not walked: the language server stays responsive
MAX_FILE_BYTES = 2_000_000
RESCAN_S = 2.0  # the folder walk is reused this long (files are re-stat'ed on each question)
_SKIP_DIRS = {"__pycache__", "node_modules", "site-packages", "venv", ".venv", "env", "build", "dist"}


class _FileImports:
    __slots__ = ("stamp", "imports", "script")

    def __init__(self, stamp: Tuple[int, int], imports: List[Path], script: bool) -> None:
        self.stamp, self.imports, self.script = stamp, imports, script


class ProjectGraph:
    """The import edges between a project's files (absolute, resolved paths)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: Dict[Path, _FileImports] = {}
        self._walked: Optional[Tuple[float, List[Path]]] = None

    def files(self, rescan: bool = False) -> List[Path]:
        now = time.monotonic()
        if rescan or self._walked is None or now - self._walked[0] > RESCAN_S:
            self._walked = (now, list(_python_files(self.root)))
        return self._walked[1]

    def _imports(self, path: Path) -> Optional[_FileImports]:
        try:
            st = path.stat()
        except OSError:
            return None
        stamp = (st.st_size, st.st_mtime_ns)
        known = self._files.get(path)
        if known is not None and known.stamp == stamp:
            return known
        found: List[Path] = []
        script = False
        if st.st_size <= MAX_FILE_BYTES:
            try:
                tree = ast.parse(path.read_bytes())
            except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
                tree = None
            if tree is not None:
                resolver = ImportResolver(str(path), tree=tree)
                script = _is_script(tree)
                for module, level, names in _import_statements(tree):
                    for name in names or [None]:
                        target = resolver.find(module, level, name)
                        if target is not None:
                            found.append(target.resolve())
                found.extend(_dynamic_imports(tree, resolver))
        known = self._files[path] = _FileImports(stamp, found, script)
        return known

    def importers(self, target: Path, limit: int = 8) -> List[Path]:
        """The scripts (files with top-level code worth running) that import ``target``,
        directly or through other modules of the project, nearest first, at most ``limit``."""
        target = target.resolve()
        files = self.files()
        if target not in files and len(files) < MAX_FILES:  # made since the last walk (a new file)
            files = self.files(rescan=True)
        if len(files) >= MAX_FILES or target not in files:
            return []
        reverse: Dict[Path, Set[Path]] = {}
        scripts: Set[Path] = set()
        for f in files:
            info = self._imports(f)
            if info is None:
                continue
            if info.script:
                scripts.add(f)
            for dep in info.imports:
                reverse.setdefault(dep, set()).add(f)
        out: List[Path] = []
        seen = {target}
        todo = [target]
        while todo and len(out) < limit:
            nxt: List[Path] = []
            for t in todo:
                for f in sorted(reverse.get(t, ())):
                    if f in seen:
                        continue
                    seen.add(f)
                    nxt.append(f)
                    if f in scripts and len(out) < limit:
                        out.append(f)
            todo = nxt
        return out


def _python_files(root: Path) -> Iterator[Path]:
    n = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
        for name in sorted(names):
            if name.endswith(".py"):
                n += 1
                if n > MAX_FILES:
                    return
                yield Path(folder, name).resolve()


def _import_statements(tree: ast.Module) -> Iterator[Tuple[str, int, Optional[List[str]]]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, 0, None
        elif isinstance(node, ast.ImportFrom):
            yield node.module or "", node.level, [a.name for a in node.names if a.name != "*"]


def _is_script(tree: ast.Module) -> bool:
    """Does the module run code when executed (a ``__main__`` block, top-level calls or loops)?
    Only those are analysed as programs that follow their imports (``Triggers.script_mode``
    decides finally; this keeps modules of definitions only out)."""
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                             ast.Assign, ast.AnnAssign)):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        return True
    return False


_GRAPHS: Dict[Path, ProjectGraph] = {}


def graph_for(filename: str) -> Optional[ProjectGraph]:
    """The (kept) graph of the project holding ``filename``."""
    root = project_root(filename)
    if root is None:
        return None
    graph = _GRAPHS.get(root)
    if graph is None:
        graph = _GRAPHS[root] = ProjectGraph(root)
    return graph


def _dynamic_imports(tree: ast.Module, resolver: ImportResolver) -> Iterator[Path]:
    """The project files ``importlib.import_module(...)`` may load: a literal name, or a name built
    as ``"models." + opt.model + "_model"`` (pix2pix's model lookup): every module of that package
    the literal ends allow. An edge says only which files an analysis may read; what it finds is
    decided by running the script."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.args and
                getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"):
            continue
        pieces = _concat(node.args[0])
        if len(pieces) == 1 and isinstance(pieces[0], str):
            target = resolver.find(pieces[0], 0, None)
            if target is not None:
                yield target.resolve()
            continue
        head, tail = pieces[0], pieces[-1]
        if not isinstance(head, str) or "." not in head:
            continue
        package, start = head.rsplit(".", 1)
        tail = tail if isinstance(tail, str) else ""
        pkg = resolver.find(package, 0, None)
        folder = pkg.parent if pkg is not None and pkg.name == "__init__.py" else None
        if folder is None:
            continue
        for f in sorted(folder.glob(start + "*" + tail + ".py")):
            yield f.resolve()


def _concat(node: ast.expr) -> List[Optional[str]]:
    """The operands of a chain of ``+``: string literals as themselves, anything else as None."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _concat(node.left) + _concat(node.right)
    if isinstance(node, ast.JoinedStr):  # f"models.{name}_model": the literal parts, None between
        return [v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else None for v in node.values]
    return [node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None]
