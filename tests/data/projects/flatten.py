#!/usr/bin/env python3
"""Diagnostic: check each project flattened into one file, to tell cross-file gaps from pattern gaps.

A project's modules are concatenated in import order (depth first from the entry, the entry
last); imports of the project's own modules are replaced by ``pass`` (keeping every line where it
was, so each line of the flat file maps back to ``relative/path.py:LINE``), and the
``if __name__ == "__main__":`` blocks of modules other than the entry are dropped. The checker
runs on that one file and its findings are mapped back and scored like ``score_projects.py``.

This is an approximation, good for a diagnosis only: module namespaces merge (a name defined in
two modules keeps the last definition), ``import pkg.mod`` followed by ``pkg.mod.x`` is not
rewritten, and names reached through ``sys.path`` insertions are matched by their last
components. A hazard found flattened but not in the project is a gap in following or reporting
across files; one missed even flattened needs a pattern the engine lacks.

usage: flatten.py [DIR] [--cmd "gradwarden check --output-format json"] [--verbose] [--keep DIR]
"""
from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

import score_projects as sp  # noqa: E402


def module_names(root: Path) -> Dict[str, Path]:
    """Dotted name -> file, for every module of the project; also every dotted suffix (``lib/x.py``
    is importable as ``x`` once ``lib`` is on sys.path)."""
    out: Dict[str, Path] = {}
    for rel in sp.project_files(root):
        if rel.suffix != ".py":
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        for i in range(len(parts)):
            out.setdefault(".".join(parts[i:]), rel)
    return out


def _absolute(module: str, level: int, current: Path) -> str:
    if not level:
        return module
    package = list(current.with_suffix("").parts)
    package = package[:-1]  # the module's package (for __init__.py, the package itself)
    if level > 1:
        package = package[: len(package) - (level - 1)]
    return ".".join(package + ([module] if module else []))


def _imported(node: ast.AST, current: Path, mods: Dict[str, Path]) -> List[Path]:
    """The project files an import statement (or importlib.import_module("literal")) reaches."""
    out: List[Path] = []
    if isinstance(node, ast.ImportFrom):
        full = _absolute(node.module or "", node.level, current)
        for alias in node.names:
            for cand in (f"{full}.{alias.name}" if full else alias.name, full):
                if cand in mods:
                    out.append(mods[cand])
    elif isinstance(node, ast.Import):
        out += [mods[a.name] for a in node.names if a.name in mods]
    elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
          and node.args):
        arg = node.args[0]
        if isinstance(arg, ast.Constant) and arg.value in mods:
            out.append(mods[arg.value])
        elif isinstance(arg, (ast.BinOp, ast.JoinedStr)):
            # `"models." + name + "_model"`, `f"losses.{name}"`: every module the literal ends allow
            # (a diagnostic may over-include; the checked file only gets longer)
            pieces = _concat(arg) if isinstance(arg, ast.BinOp) else [
                v.value if isinstance(v, ast.Constant) else None for v in arg.values]
            head = pieces[0] if isinstance(pieces[0], str) else ""
            tail = pieces[-1] if isinstance(pieces[-1], str) else ""
            if head.startswith("."):
                # `import_module("." + name, package=__name__)`: the modules of this package
                level = len(head) - len(head.lstrip("."))
                head = _absolute("", level, current) + "." + head[level:]
            if head:
                out += [f for n, f in sorted(mods.items()) if n.startswith(head) and n.endswith(tail)]
    elif (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "load" and node.args
          and isinstance(node.args[0], ast.Constant) and node.args[0].value in (".", "./") and "hubconf" in mods
          and any(k.arg == "source" and getattr(k.value, "value", None) == "local" for k in node.keywords)):
        # `torch.hub.load(".", name, source="local")`: the project's own `hubconf.py`
        out.append(mods["hubconf"])
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith(".py") and \
            node.value[:-3].replace("/", ".") in mods:
        # a project file named by its path (`"configs/default.py"`, run with `exec` or `runpy`)
        out.append(mods[node.value[:-3].replace("/", ".")])
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "." in node.value and node.value in mods:
        # a dotted module path in a table read at run time (a package's lazy `__getattr__`:
        # `{"TextClassifier": "textcls.modeling.classifier"}` given to `import_module`)
        out.append(mods[node.value])
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.rpartition(".")[0] in mods:
        # a dotted path in a config (Hydra's `_target_: models.net.Net`), imported at run time
        out.append(mods[node.value.rpartition(".")[0]])
    return out


def _concat(node: ast.AST) -> list:
    """The operands of a chain of ``+``: literal strings as themselves, anything else as None."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _concat(node.left) + _concat(node.right)
    return [node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None]


def flatten(root: Path, entry: str) -> Tuple[str, List[Tuple[str, int]]]:
    """(flat source, for each of its lines the ``(relative path, line)`` it came from)."""
    mods = module_names(root)
    order: List[Path] = []
    seen = set()

    def visit(rel: Path) -> None:
        if rel in seen:
            return
        seen.add(rel)
        for node in ast.walk(ast.parse((root / rel).read_text(encoding="utf-8"))):
            for dep in _imported(node, rel, mods):
                visit(dep)
        order.append(rel)

    visit(Path(entry))
    lines: List[str] = []
    where: List[Tuple[str, int]] = []
    for rel in order:
        src = (root / rel).read_text(encoding="utf-8").splitlines()
        drop = set()
        for node in ast.parse("\n".join(src)).body:
            own_import = isinstance(node, (ast.Import, ast.ImportFrom)) and (
                _imported(node, rel, mods) or (isinstance(node, ast.ImportFrom) and node.level))
            other_main = (rel.as_posix() != entry and isinstance(node, ast.If)
                          and "__main__" in ast.unparse(node.test))
            if own_import or other_main:
                drop.update(range(node.lineno, node.end_lineno + 1))
        for i, text in enumerate(src, 1):
            indent = text[: len(text) - len(text.lstrip())]
            lines.append(indent + "pass" if i in drop else text)
            where.append((rel.as_posix(), i))
        lines.append("")
        where.append(("", 0))
    return "\n".join(lines) + "\n", where


def check_flat(project: "sp.Project", cmd: Sequence[str], keep: Optional[Path] = None) -> List["sp.Finding"]:
    text, where = flatten(project.path, project.entry)
    with tempfile.TemporaryDirectory(prefix="gw-flat-") as tmp:
        flat = (keep or Path(tmp)) / (Path(project.name).name + ".py")
        flat.parent.mkdir(parents=True, exist_ok=True)
        flat.write_text(text, encoding="utf-8")
        proc = subprocess.run(list(cmd) + [str(flat)], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              timeout=sp.CHECK_TIMEOUT)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{project}: checker exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    out = []
    for d in json.loads(proc.stdout or "[]"):
        rel, line = where[int(d["location"]["row"]) - 1]
        out.append(sp.Finding(rel, line, str(d.get("code", "")), str(d.get("severity", "error")),
                              str(d.get("message", ""))))
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", nargs="?", default=str(sp.HERE))
    ap.add_argument("--cmd", default="gradwarden check --output-format json")
    ap.add_argument("--keep", help="write the flat files into this folder")
    ap.add_argument("-j", "--jobs", type=int, default=sp.default_jobs())
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    projects = sp.load_projects(Path(args.dir).resolve())
    cmd = sp.command(args.cmd)
    keep = Path(args.keep).resolve() if args.keep else None
    found = sp.run_all(projects, lambda p: check_flat(p, cmd, keep), args.jobs)
    print(f"== `{args.cmd} FLAT.py` on each project flattened into one file")
    print("\n".join(sp.score(projects, found).lines(prefix="flat ", verbose=args.verbose)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
