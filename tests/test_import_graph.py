"""No import circles between the modules of the package (imports inside functions and under
``TYPE_CHECKING`` count too: a late import hides a circle, it does not remove it).

Each circle found is printed as its modules and the import lines that tie them. The lower
layers are ordered: engine (semantics, interpreter) → rules → formats / runner → fixes → CLI
and server; a module that needs something from a higher layer gets it passed in.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set

PACKAGE = Path(__file__).resolve().parent.parent / "server" / "gradwarden"



def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> Dict[str, Dict[str, int]]:
    """module -> {imported module of this package: line of the first such import}."""
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: Dict[str, Dict[str, int]] = {m: {} for m in paths}
    for mod, path in paths.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found = [(a.name, "") for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                found = [(base, a.name) for a in node.names]
            else:
                continue
            for base, name in found:
                target = f"{base}.{name}" if f"{base}.{name}" in paths else base
                if target in paths and target != mod:
                    graph[mod].setdefault(target, node.lineno)
    return graph


def circles(graph: Dict[str, Dict[str, int]]) -> List[Set[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    out: List[Set[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = set()
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    comp.add(m)
                    if m == node:
                        break
                if len(comp) > 1:
                    out.append(comp)
    return out


def _describe(graph: Dict[str, Dict[str, int]], comp: Set[str]) -> str:
    lines = [", ".join(sorted(comp))]
    for a in sorted(comp):
        for b, line in sorted(graph[a].items()):
            if b in comp:
                lines.append(f"  {a} -> {b} (line {line})")
    return "\n".join(lines)


def test_the_detector_finds_a_circle():
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}, "d": {"a": 4}}
    assert circles(graph) == [{"a", "b", "c"}]
    assert circles({"a": {"b": 1}, "b": {}}) == []


def test_no_import_circles():
    graph = import_graph()
    assert len(graph) > 50  # the package was found and read
    found = circles(graph)
    assert not found, "import circles:\n" + "\n".join(_describe(graph, c) for c in found)
