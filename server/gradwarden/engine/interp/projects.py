"""The modules of the user's own project, as a script's imports reach them.

``from models import Generator``, ``import utils.sampling as sampling``, ``from .config import
cfg``, ``from pkg import submodule``: a name imported from a module of the same project (found
by ``engine.front.imports``) is that module's value, computed by running the module's
definitions and assignments once per analysis, on the analysing path's own state: a registry
dict of classes, a config dict, a ``functools.partial`` bound at module level are the values the
importer then reads, with their containers in that state. A module itself (``import config``,
a package, a namespace folder without ``__init__.py``) is a ``project`` reference whose
attributes are looked up the same way. What is not found stays unknown.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from gradwarden.engine.diagnostic import Span
from gradwarden.engine.state.halt import Halt
from gradwarden.engine.state.model import (
    ConstV, DictV, NONE, RefV, SeqV, State, UNKNOWN, UnknownV, Value, fresh_id, join_states, ref_value,
)

# imports followed this many modules away from the analysed file (a script -> the module
# defining the class -> the helper it calls -> ...). A package's ``__init__.py`` on the way is
# not counted: Python runs it on the way to every submodule, and a repository three package
# levels deep (``vitlite/models/layers/block.py`` importing ``...utils.ops``) would otherwise
# end the chain at its own re-exports before reaching the module that defines anything.
MAX_FOREIGN_DEPTH = 4


def foreign_depth(stack: List[Any]) -> int:
    """How many modules away from the analysed file ``stack`` (the modules being run) is:
    its modules that are not a package's ``__init__.py``."""
    return sum(1 for fm, _ in stack if _counts(fm))


def _counts(fm: Any) -> bool:
    """Whether ``fm`` counts towards ``foreign_depth`` (not a package's ``__init__.py``), kept on
    the module object: the depth is asked at every import statement and module attribute a
    module's code reads (39,000 times over torch-geometric), and ``Path.name`` is Python code."""
    try:
        return fm._gw_counts
    except AttributeError:
        fm._gw_counts = flag = fm.path is None or fm.path.name != "__init__.py"
        return flag

# the statements of a followed module that run when it is imported (its definitions and
# module-level values; never its ``if __name__ == "__main__":`` block or top-level loops)
_RUN = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign,
        ast.AnnAssign)


class ProjectModule:
    """A module or package of the project, as a value: ``path`` its file (a package's
    ``__init__.py``; None for a namespace folder), ``dotted`` its name from ``base`` (the file
    whose imports found it, which resolves its submodules)."""

    __slots__ = ("path", "dotted", "base")

    def __init__(self, path: Optional[Path], dotted: str, base: str) -> None:
        self.path, self.dotted, self.base = path, dotted, base

    def __repr__(self) -> str:
        return f"ProjectModule({self.dotted!r})"


# A decorator run for its registration: a function of the user's code this small (statements,
# nested ones included). ``register(name)`` and ``Registry.register_module`` are a handful; a
# decorator that rewrites the class (a docstring generator of thousands of lines) is not run.
MAX_DECORATOR_STATEMENTS = 12
DECORATOR_WORK = 400  # statement visits one class decorator may take (what it calls included)


def _registers(fn: Value) -> bool:
    if not isinstance(fn, RefV) or fn.kind not in ("func", "method") or not isinstance(fn.target, tuple):
        return False
    fdef = fn.target[0] if fn.kind == "func" else fn.target[-1]
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    size = fdef.__dict__.get("_gw_statements")
    if size is None:
        # kept on the definition's node: a project module's tree is parsed once per run and its
        # decorators are asked about again by every analysis that runs the module
        size = fdef._gw_statements = sum(isinstance(n, ast.stmt) for n in ast.walk(fdef)) - 1
    return size <= MAX_DECORATOR_STATEMENTS


small_user_function = _registers  # a decorator small enough to run (interp/calls.py: wrappers at a call)


def _registration_call(stmt: ast.stmt) -> bool:
    """A module-level statement that is a call of a name or an attribute (``REGISTRY.register(Net)``)."""
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
        isinstance(stmt.value.func, (ast.Name, ast.Attribute))


def _segments(body: List[ast.stmt]) -> List[List[ast.stmt]]:
    """``body`` cut into runs of ordinary statements (even positions) and of module-level calls
    (odd positions), in order."""
    out: List[List[ast.stmt]] = [[]]
    for stmt in body:
        if _registration_call(stmt) != bool(len(out) % 2 == 0):
            out.append([])
        out[-1].append(stmt)
    return out


class ProjectImports:
    """Imports of the project's own modules for one interpreter (``it``): the statements role
    asks it for what an import binds, the expressions role for a module's attribute; and the
    registrations that importing them makes (class decorators that fill a registry)."""

    def __init__(self, it: Any) -> None:
        self.it = it
        # the resolver of each followed module's own imports, for this analysis: (the
        # analysis's resolver they were made from, module path -> resolver). A module's code
        # asks at every import statement and module attribute it reads (torch-geometric: 23,900
        # resolvers built for some 600 modules); they share the analysis's caches, so one per
        # module answers as a new one did. Never across analyses: each holds its analysis's
        # followed modules (their globals).
        self._nested: Optional[Tuple[Any, Dict[str, Any]]] = None

    # ---------------------------------------------------------------- registries
    def class_decorators(self, stmt: Any, cls: Value, st: State) -> None:
        """Run ``stmt``'s decorators that are small functions of the user's code on the class
        (or the module-level function),
        for what they do (``@register("mlp")``, ``@HEADS.register_module()`` put the class into
        a registry dict that a config key later looks up). The name stays bound to the class.
        Each runs on a fork of the path within ``DECORATOR_WORK`` statement visits of its own
        (a registration is a handful): one that needs more (it rewrites the class, builds a
        docstring) is given up quietly and the path goes on as if it had not run."""
        it = self.it
        for dec in reversed(stmt.decorator_list):
            work = st.fork()
            done = False
            limit, it.budget.limit = it.budget.limit, DECORATOR_WORK
            try:
                with it.allotment(stmt, quiet=True):
                    done = self._decorate(dec, cls, work)
            except Halt:
                done = False
            finally:
                it.budget.limit = limit
            if done:
                st.become(work)

    def user_decorated(self, stmt: Any, st: State) -> bool:
        """Is one of ``stmt``'s decorators (or decorator factories) a small function of the user's
        code? Looked up without running anything: most decorators (`@torch.jit.script`, a large
        library registry) are not, and the path is not forked for them."""
        for dec in stmt.decorator_list:
            f = dec.func if isinstance(dec, ast.Call) else dec
            if isinstance(f, (ast.Name, ast.Attribute)):
                try:
                    if _registers(self.it.ev.eval(f, st)):
                        return True
                except Halt:
                    continue
        return False

    def registration(self, call: ast.Call, st: State) -> None:
        """A module-level call of a followed module (``BACKBONES.register_module(Net)``,
        ``MODELS.update(resnet=ResNet)``): run, as a class decorator is, when what it calls is a
        small function of the user's code or a container's method, on a fork within
        ``DECORATOR_WORK`` statement visits; anything else (``main()``, ``train(cfg)``, a
        logging setup) is not run, as before."""
        it = self.it
        work = st.fork()
        limit, it.budget.limit = it.budget.limit, DECORATOR_WORK
        try:
            with it.allotment(call, quiet=True):
                fn = it.ev.eval(call.func, work)
                if not (_registers(fn) or isinstance(fn, RefV) and fn.kind == "boundseq"):
                    return
                it.ev.eval(call, work)
        except Halt:
            return
        finally:
            it.budget.limit = limit
        st.become(work)

    def _decorate(self, dec: ast.expr, cls: Value, st: State) -> bool:
        it = self.it
        if isinstance(dec, ast.Call) and not _registers(it.ev.eval(dec.func, st)):
            return False  # a factory that is not a small function of the user's code: not called
        fn = it.ev.eval(dec, st)
        if not _registers(fn):
            return False
        # a nested function carries the frame it closed over (statements.stmt_FunctionDef): a
        # decorator factory's names are there after the factory returned
        it.ev.call(fn, [cls], {}, st, dec)
        return True

    def _resolver(self) -> Any:
        if self.it.foreign_stack:
            return self._for_module(str(self.it.foreign_stack[-1][0].path))
        return self.it.resolver

    def _for_module(self, filename: str) -> Any:
        """``it.resolver.for_module(filename)``, made once per module and analysis."""
        top = self.it.resolver
        kept = self._nested
        if kept is None or kept[0] is not top:
            kept = self._nested = (top, {})
        resolver = kept[1].get(filename)
        if resolver is None:
            resolver = kept[1][filename] = top.for_module(filename)
        return resolver

    def active(self) -> bool:
        return self.it.resolver is not None and not self.it.standalone and \
            foreign_depth(self.it.foreign_stack) < MAX_FOREIGN_DEPTH

    # ---------------------------------------------------------------- import statements
    def module(self, dotted: str, level: int = 0) -> Value:
        """``import dotted`` (the value bound to its name), or UNKNOWN outside the project."""
        if not self.active():
            return UNKNOWN
        resolver = self._resolver()
        path = resolver.find(dotted, level, None)
        if path is None and not resolver.find_dir(dotted, level):
            return UNKNOWN
        return ref_value("project", dotted, ProjectModule(path, dotted, resolver.filename))

    def import_by_name(self, dotted: Any, node: ast.AST, st: State) -> Value:
        """``importlib.import_module("configs.retinanet")`` with a name the code spells out: that
        module of the project, run as ``import`` runs it (a relative or computed name: unknown)."""
        if not isinstance(dotted, str) or not dotted or dotted.startswith(".") or \
                not all(part.isidentifier() for part in dotted.split(".")):
            return UNKNOWN
        value = self.module(dotted)
        if isinstance(value, RefV):
            self.run_imported(dotted, node, st)
        return value

    def run_by_path(self, rel: Any, node: ast.AST, st: State) -> Value:
        """``runpy.run_path("configs/base.py")`` with a path the code spells out: that project
        file run as an import runs it; its globals as the dict ``run_path`` returns."""
        if not isinstance(rel, str) or not self.active():
            return UNKNOWN
        resolver = self._resolver()
        path = resolver.find_path(rel)
        fm = self.loaded(resolver, path, node, st) if path is not None else None
        if fm is None:
            return UNKNOWN
        return self.globals_dict(fm, st)

    def source_file(self, rel: str) -> Value:
        """``open("configs/default.py")`` of a project file the code spells out: that file, whose
        text ``read()`` gives and ``exec`` runs (a config loaded by hand); anything else: unknown."""
        if not self.active() or self._resolver().find_path(rel) is None:
            return UNKNOWN
        return ref_value("srcfile", rel)

    def text_file(self, rel: str, st: State) -> Value:
        """``open("configs/base.yaml")`` of a text file of the project (a config its own code parses
        line by line): the list of its lines, which iterating the file gives; anything else: unknown."""
        lines = self._resolver().text_lines(rel) if self.active() else None
        if lines is None:
            return UNKNOWN
        return self.it.ev.new_seq([ConstV(line) for line in lines], st)

    def exec_source(self, src: Value, ns: Value, node: ast.AST, st: State) -> Value:
        """``exec(compile(f.read(), ...), ns)``: the file run as ``runpy.run_path`` runs it, its
        globals bound in ``ns`` (a dict the code made)."""
        g = self.run_by_path(src.name, node, st) if isinstance(src, RefV) else UNKNOWN
        if isinstance(g, DictV) and isinstance(ns, DictV):
            for k, v in st.dicts.get(g.did, ()):
                self.it.ev.dict_set(ns, ConstV(k[1]), v, st)
        return NONE

    def spec_by_path(self, rel: Any) -> Value:
        """``importlib.util.spec_from_file_location(name, "configs/retinanet.py")`` with a path the
        code spells out (mmcv's ``Config.fromfile`` written by hand): that project file, as the
        module ``module_from_spec`` makes of it; the module runs (once, as an import runs it) when
        its names are read (``exec_module`` is the loader's, which the analysis does not see)."""
        if not isinstance(rel, str) or not self.active():
            return UNKNOWN
        resolver = self._resolver()
        path = resolver.find_path(rel)
        if path is None:
            return UNKNOWN
        return ref_value("project", path.stem, ProjectModule(path, path.stem, resolver.filename))

    @staticmethod
    def module_from_spec(spec: Value) -> Value:
        """``importlib.util.module_from_spec(spec)``: the module of a spec found above, else unknown."""
        return spec if isinstance(spec, RefV) and spec.kind == "project" else UNKNOWN

    @staticmethod
    def globals_dict(fm: Any, st: State) -> DictV:
        """A followed module's globals as a dict value (``run_path``'s result, ``module.__dict__``)."""
        d = DictV(fresh_id())
        st.own("dicts")[d.did] = tuple((("c", k), v) for k, v in fm.globals.items()
                                       if isinstance(k, str) and not k.startswith("__"))
        return d

    def run_imported(self, dotted: str, stmt: ast.AST, st: State) -> None:
        """``import a.b.c`` runs ``a``, ``a.b`` and ``a.b.c`` (a package that registers its
        classes when imported: ``import mmdet_lite.models``)."""
        if not self.active():
            return
        resolver = self._resolver()
        parts = dotted.split(".")
        for i in range(1, len(parts) + 1):
            path = resolver.find(".".join(parts[:i]), 0, None)
            if path is not None:
                self.loaded(resolver, path, stmt, st)

    def name_from(self, mod: str, level: int, name: str, stmt: ast.AST, st: State) -> Value:
        """``from mod import name``: the module's value for ``name``, or its submodule."""
        if not self.active():
            return UNKNOWN
        resolver = self._resolver()
        path = resolver.find(mod, level, None) if mod or level else None
        if path is not None:
            fm = self.loaded(resolver, path, stmt, st)
            if fm is not None:
                value = fm.globals.get(name)
                if value is not None and not isinstance(value, UnknownV):
                    return value
        sub = resolver.find(mod, level, name)
        if sub is not None and sub != path:
            self.loaded(resolver, sub, stmt, st)  # ``from . import mlp`` runs it (it may register classes)
            return ref_value("project", f"{mod}.{name}" if mod else name,
                             ProjectModule(sub, f"{mod}.{name}" if mod else name, resolver.filename))
        if resolver.find_dir(f"{mod}.{name}" if mod else name, level):
            return ref_value("project", name, ProjectModule(None, f"{mod}.{name}" if mod else name, resolver.filename))
        return UNKNOWN

    def star_names(self, mod: str, level: int, stmt: ast.AST, st: State) -> Dict[str, Value]:
        """``from mod import *`` of a module of the project: the names it lists in ``__all__``
        (a list or tuple of literal strings), else its names without a leading underscore, as
        Python binds them; nothing for a module outside the project."""
        if not self.active() or not (mod or level):
            return {}
        resolver = self._resolver()
        path = resolver.find(mod, level, None)
        fm = self.loaded(resolver, path, stmt, st) if path is not None else None
        if fm is None:
            return {}
        names = fm.globals
        listed = names.get("__all__")
        if isinstance(listed, SeqV):
            items = st.lists.get(listed.lid)
            if items is None or not all(isinstance(x, ConstV) and isinstance(x.value, str) for x in items):
                return {}  # an ``__all__`` the analysis cannot read: which names it binds is unknown
            return {x.value: names[x.value] for x in items if x.value in names}  # type: ignore[union-attr]
        return {k: v for k, v in names.items() if isinstance(k, str) and not k.startswith("_")}

    def attr(self, ref: RefV, attr: str, st: State, node: ast.AST) -> Value:
        """``module.attr`` of a project module: its value, else its submodule."""
        pm: ProjectModule = ref.target
        if self.it.resolver is None or foreign_depth(self.it.foreign_stack) >= MAX_FOREIGN_DEPTH:
            return UNKNOWN
        resolver = self._for_module(pm.base)
        if pm.path is not None:
            fm = self.loaded(resolver, pm.path, node, st)
            if fm is not None:
                if attr == "__dict__":
                    # a model class found by scanning a module's names (pix2pix's
                    # `find_model_using_name`: `for name, cls in modellib.__dict__.items()`): its
                    # globals in the order the module bound them (dunder names left out)
                    return self.globals_dict(fm, st)
                value = fm.globals.get(attr)
                if value is not None:
                    return value
        dotted = f"{pm.dotted}.{attr}"
        sub = resolver.find(dotted, 0, None)
        if sub is not None and sub != pm.path:
            return ref_value("project", dotted, ProjectModule(sub, dotted, pm.base))
        if resolver.find_dir(dotted, 0):
            return ref_value("project", dotted, ProjectModule(None, dotted, pm.base))
        return UNKNOWN

    def running_module(self) -> Value:
        """``sys.modules[__name__]`` in a project module the analysis is running: that module as
        ``import`` binds it (its globals, its submodules); in the entry script: unknown."""
        if not self.it.foreign_stack or not self.active():
            return UNKNOWN
        path = self.it.foreign_stack[-1][0].path
        parts = [] if path.name == "__init__.py" else [path.stem]
        folder = path.parent
        while (folder / "__init__.py").is_file() and folder.parent != folder:
            parts.insert(0, folder.name)  # the dotted name Python gives it from the nearest root
            folder = folder.parent
        if not parts:
            return UNKNOWN
        dotted = ".".join(parts)
        return ref_value("project", dotted, ProjectModule(path, dotted, str(path)))

    # ---------------------------------------------------------------- running a module once
    def loaded(self, resolver: Any, path: Path, node: ast.AST, st: State) -> Any:
        fm = resolver.load(path)
        if fm is None:
            return None
        if not fm.loaded:
            fm.loaded = True
            self.run_module(fm, self.it.span_of(node), st)
        return fm

    def run_module(self, fm: Any, anchor: Span, st: State) -> None:
        """Run ``fm``'s definitions and module-level values on ``st``'s containers, in a frame of
        its own (module-level: names do not reach the importer's), and keep that frame as the
        module's globals. A path the module's code ends (it raises) leaves ``st`` as it was."""
        it = self.it
        it.foreign_defs.update(dict.fromkeys(fm.parsed.def_ids, fm))
        it.foreign_stmts.update(dict.fromkeys(map(id, fm.parsed.statements), fm))
        body: List[ast.stmt] = [s for s in fm.tree.body if isinstance(s, _RUN) or _registration_call(s)]
        work = st.fork()
        outer_frames, outer_fi = work.frames, work.fi
        work.frames = [{"__name__": ConstV(fm.path.stem), "__file__": ConstV(str(fm.path))}]
        work.fi = 0
        work._shared.discard(("frame", 0))
        # while it runs, a module importing it back (`from . import register` in a submodule
        # the package's `__init__` imports at its end) sees the names defined so far, as Python does
        fm.globals = work.frames[0]
        it.foreign_stack.append((fm, anchor))
        exits: List[State] = [work]
        try:
            with it.allotment(fm.tree, quiet=True):
                for i, segment in enumerate(_segments(body)):
                    if i % 2:  # module-level calls: registrations, each run only if it is one
                        for stmt in segment:
                            for state in exits:
                                self.registration(stmt.value, state)  # type: ignore[attr-defined]
                    elif segment:
                        exits = it.stmts.exec_block(segment, exits)
                    if not exits:
                        break
        except Halt:
            exits = []
        finally:
            it.foreign_stack.pop()
        if not exits:
            fm.globals = dict(work.frames[0]) if work.frames else {}
            return
        done = exits[0] if len(exits) == 1 else join_states(exits)
        fm.globals = dict(done.frames[0])
        done.frames = list(outer_frames)
        done.fi = outer_fi
        st.become(done)
