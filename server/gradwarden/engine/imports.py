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
import hashlib
import os
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Dict, Iterator, Optional

from gradwarden.engine.source import SourceText, decode_source

MAX_FOREIGN_BYTES = 2_000_000
_ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")

# The other files an analysis depended on, for callers that cache results per file
# (gradwarden.cache): absolute path -> sha256 of the bytes read, or None for a path that was
# looked for and not found (creating it later could change the result). Set by following().
_FOLLOWED: ContextVar[Optional[Dict[str, Optional[str]]]] = ContextVar("gradwarden_followed", default=None)


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
        followed[os.path.abspath(path)] = hashlib.sha256(data).hexdigest() if data is not None else None


class ForeignModule:
    """A project module whose definitions a script uses."""

    def __init__(self, path: Path, text: str, tree: ast.Module) -> None:
        self.path = path
        self.src = SourceText(text)
        self.tree = tree
        self.globals: Dict[str, object] = {}
        self.loaded = False
        self._triggers = None

    @property
    def triggers(self):
        """The textual trigger index of this module's own lines (never the importer's)."""
        if self._triggers is None:
            from gradwarden.engine.triggers import Triggers

            self._triggers = Triggers(self.tree, self.src)
        return self._triggers


def project_root(filename: str) -> Optional[Path]:
    try:
        here = Path(filename).resolve().parent
    except OSError:
        return None
    for d in [here, *here.parents][:6]:
        if any((d / m).exists() for m in _ROOT_MARKERS):
            return d
    return here


class ImportResolver:
    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.root = project_root(filename) if filename and os.path.exists(filename) else None
        self.cache: Dict[Path, Optional[ForeignModule]] = {}
        self._found: Dict[tuple, Optional[Path]] = {}

    def find(self, module: str, level: int, name: Optional[str] = None) -> Optional[Path]:
        """The file of ``module`` (or of ``module.name`` when that is a submodule)."""
        if self.root is None:
            return None
        key = (module, level, name)
        if key not in self._found:
            self._found[key] = self._find(module, level, name)
        return self._found[key]

    def _find(self, module: str, level: int, name: Optional[str]) -> Optional[Path]:
        here = Path(self.filename).resolve().parent
        if level:
            base = here
            for _ in range(level - 1):
                base = base.parent
            bases = [base]
        else:
            bases = [here, *[p for p in here.parents if self.root in (p, *p.parents)]]
        parts = module.split(".") if module else []
        for base in bases:
            for cand in ([parts + [name]] if name else []) + [parts]:
                if not cand:
                    continue
                p = base.joinpath(*cand)
                for f in (p.with_suffix(".py"), p / "__init__.py"):
                    if f.is_file() and self._inside(f):
                        return f
                    if _FOLLOWED.get() is not None and not f.exists():
                        _record(f, None)  # absent today: its appearance would change the answer
        # jedi only for a package that exists in the project (stdlib and site-packages imports
        # are not followed, and asking jedi about them costs milliseconds each)
        top = parts[0] if parts else (name or "")
        if level or not top or not any((b / top).exists() or (b / f"{top}.py").exists() for b in bases):
            return None
        return self._jedi(module, level, name)

    def _inside(self, f: Path) -> bool:
        try:
            f.resolve().relative_to(self.root)  # type: ignore[arg-type]
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
        path = path.resolve()
        if path in self.cache:
            return self.cache[path]
        mod: Optional[ForeignModule] = None
        try:
            data = path.read_bytes()
            _record(path, data)
            if len(data) <= MAX_FOREIGN_BYTES and path != Path(self.filename).resolve():
                text, _ = decode_source(data)
                if text is not None:
                    mod = ForeignModule(path, text, ast.parse(text, filename=str(path)))
        except OSError:
            _record(path, None)
            mod = None
        except (SyntaxError, ValueError, RecursionError):
            mod = None
        self.cache[path] = mod
        return mod
