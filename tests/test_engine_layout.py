"""The engine's layout, measured from its source (``ast``), so that it stays what
docs/architecture.md says: rooms by concern that import each other in one direction only, and
no class or module too large to read.

- ``engine/`` has at least four sub-packages (rooms); each one's ``__init__`` docstring says its
  job and, in a ``May import:`` sentence, which rooms it may import — the import direction test
  reads that sentence, so the docstring and the rule cannot drift apart;
- no class is over ``MAX_CLASS`` lines, no module over ``MAX_MODULE`` (the generated op table is
  data, ``domain/data/optable.json``, not a module; the modules of ``runtime/`` too), and no class
  counting what it inherits from the package is over ``MAX_WITH_BASES``.

``python tests/test_engine_layout.py`` prints the layout: every module's lines, its classes, and
the largest classes with what they inherit.
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Dict, List, Set, Tuple

from test_import_graph import PACKAGE, import_graph

ENGINE = PACKAGE / "engine"
# the runtime bridge (parent side and the child's instrumentation) is held to the same module size
RUNTIME = PACKAGE / "runtime"
MAX_CLASS = 700
MAX_MODULE = 1000
MAX_WITH_BASES = 1500
# modules at the top of engine/: the shared models and the ways in, which every room may use
SHARED = {"diagnostic", "events", "entry"}
TOP = {"analyze", "assembly", "diagnostic", "events", "entry"}


def rooms() -> Dict[str, str]:
    """room -> its __init__ docstring."""
    out = {}
    for init in sorted(ENGINE.glob("*/__init__.py")):
        out[init.parent.name] = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    return out


def allowed(doc: str) -> Set[str]:
    """The engine modules and rooms a room's docstring lets it import (its ``May import:``
    sentence names them as ``engine.X``; ``gradwarden.X`` outside the engine)."""
    _, sep, rest = doc.partition("May import:")
    assert sep, "no `May import:` sentence"
    names = set(re.findall(r"``engine\.(\w+)``", rest))
    names |= {"gradwarden." + n for n in re.findall(r"``gradwarden\.(\w+)``", rest)}
    return names


def _room_of(module: str) -> str:
    """``gradwarden.engine.front.source`` -> ``front``; a top module -> its name; outside -> the
    package's top-level name (``gradwarden.rules``)."""
    parts = module.split(".")
    if parts[:2] == ["gradwarden", "engine"] and len(parts) > 2:
        return parts[2]
    return ".".join(parts[:2])


def test_engine_has_rooms_with_their_job_and_imports_said():
    found = rooms()
    assert len(found) >= 4, found
    for room, doc in found.items():
        assert len(doc.split("\n\n")[0]) > 80, f"{room}: its docstring does not say its job"
        assert allowed(doc), f"{room}: its docstring does not say what it may import"


# the modules at the top of engine/ are not in a room: what each may import
TOP_ALLOWED = {
    "diagnostic": set(),
    "events": {"diagnostic"},
    "entry": {"diagnostic"},
    "assembly": {"state", "front", "domain", "interp", "checks", "diagnostic", "events", "entry", "gradwarden.rules"},
    "analyze": {"front", "assembly", "incremental", "diagnostic", "events", "entry"},
}


def test_rooms_import_only_what_their_docstring_allows():
    graph = import_graph()
    docs = rooms()
    assert set(docs) & set(TOP_ALLOWED) == set()
    bad: List[str] = []
    for mod, targets in sorted(graph.items()):
        if not mod.startswith("gradwarden.engine."):
            continue
        room = _room_of(mod)
        ok = allowed(docs[room]) if room in docs else TOP_ALLOWED[room]
        for target, line in sorted(targets.items()):
            other = _room_of(target)
            if target == "gradwarden.engine" or other == room or other in ok:
                continue
            bad.append(f"{mod} (line {line}) imports {target}: `{room}` may import {sorted(ok)}")
    assert not bad, "\n".join(bad)


def test_the_direction_test_catches_a_wrong_import():
    doc = rooms()["front"]
    assert "interp" not in allowed(doc)  # the front end knows nothing of the interpreter
    assert {"state", "domain"} <= allowed(rooms()["interp"])
    assert "checks" not in allowed(rooms()["domain"]) and "interp" not in allowed(rooms()["domain"])


# --------------------------------------------------------------------------- sizes
def _modules() -> Dict[str, ast.Module]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = ast.parse(path.read_text(encoding="utf-8"))
    return out


def classes() -> Dict[Tuple[str, str], Tuple[int, List[Tuple[str, str]]]]:
    """(module, class) -> (its lines, its bases defined in the package, as (module, class))."""
    mods = _modules()
    out = {}
    for mod, tree in mods.items():
        names: Dict[str, Tuple[str, str]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("gradwarden"):
                for a in node.names:
                    names[a.asname or a.name] = (node.module, a.name)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                names.setdefault(node.name, (mod, node.name))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = [names[b.id] for b in node.bases if isinstance(b, ast.Name) and b.id in names]
                out[(mod, node.name)] = (node.end_lineno - node.lineno + 1, bases)
    return out


def with_bases(cls: Tuple[str, str], table) -> Tuple[int, List[Tuple[str, str]]]:
    """Lines of a class and of every class of the package it inherits from (each once)."""
    seen: List[Tuple[str, str]] = []
    todo = [cls]
    while todo:
        c = todo.pop()
        if c in seen or c not in table:
            continue
        seen.append(c)
        todo.extend(table[c][1])
    return sum(table[c][0] for c in seen), seen


def test_no_class_or_module_too_large():
    table = classes()
    big = [f"{m}.{c}: {n} lines" for (m, c), (n, _) in table.items() if m.startswith("gradwarden.engine") and n > MAX_CLASS]
    assert not big, f"classes over {MAX_CLASS} lines: {big}"
    long = [str(p) for root in (ENGINE, RUNTIME) for p in root.rglob("*.py")
            if len(p.read_text(encoding="utf-8").splitlines()) > MAX_MODULE]
    assert not long, f"modules over {MAX_MODULE} lines: {long}"
    heavy = []
    for cls in table:
        if cls[0].startswith("gradwarden.engine"):
            n, chain = with_bases(cls, table)
            if n > MAX_WITH_BASES:
                heavy.append(f"{cls[0]}.{cls[1]}: {n} lines with {[c for _, c in chain[1:]]}")
    assert not heavy, f"classes over {MAX_WITH_BASES} lines with what they inherit: {heavy}"


def test_the_size_measure_counts_inherited_lines():
    table = {("m", "A"): (10, []), ("m", "B"): (5, [("m", "A")]), ("m", "C"): (1, [("m", "B"), ("m", "A")])}
    assert with_bases(("m", "C"), table)[0] == 16  # A once, though reached twice


def main() -> None:
    table = classes()
    for path in sorted(ENGINE.rglob("*.py")):
        rel = path.relative_to(ENGINE)
        n = len(path.read_text(encoding="utf-8").splitlines())
        mod = "gradwarden.engine." + ".".join(rel.with_suffix("").parts).replace(".__init__", "")
        cls = ", ".join(f"{c} {k}" for (m, c), (k, _) in sorted(table.items()) if m == mod and k >= 40)
        print(f"{str(rel):<32} {n:>5}  {cls}")
    print()
    ranked = sorted(((with_bases(c, table), c) for c in table if c[0].startswith("gradwarden.engine")),
                    key=lambda x: -x[0][0])
    for (n, chain), (m, c) in ranked[:12]:
        extra = f" (with {' + '.join(f'{b} {table[(bm, b)][0]}' for bm, b in chain[1:])})" if len(chain) > 1 else ""
        print(f"{n:>5}  {m}.{c}{extra}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    main()
