"""Make the bundled libraries lean (run by bundle_libs.py after the install and the merge).

The .vsix carries one platform's libraries for six CPython versions. What makes it big is
not what the server needs:

* jedi's third-party typeshed stubs, Python 2 stubs and django-stubs (1,300 files for jedi
  0.19): gradwarden asks jedi only where a *project* module lives (``engine/front/imports.py``),
  which needs its Python 3 stdlib stubs at most;
* libcst's test suite, code generator and codemod framework (250 files): the fixers use its
  parser, nodes, matchers and metadata;
* PyYAML's (and pyyaml-ft's) compiled speed-ups: libcst imports yaml only in its codemod
  command line, never on the server's path, and yaml falls back to pure Python without them;
* the symbol tables of the compiled modules (``strip --strip-unneeded``: the libcst parser is
  5.4 MB, 4.1 MB stripped; only ELF targets, and only when ``strip`` is installed);
* thousands of small pure-Python files: the distributions that import from a zip
  (:data:`ZIPPABLE`) go into ``<folder>.zip`` beside their folder (``launch.py`` puts the zip
  on ``sys.path`` after the folder). What reads its own files by path stays a folder:
  gradwarden (its op table), libcst (its compiled parser), jedi and parso (stubs, grammars).

Everything here is deterministic (sorted zip entries, fixed timestamps), so two builds of the
same inputs give the same package.
"""
from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Dict, List

# Top-level import names (and their .dist-info) that work from a zip: pure Python, no file
# read through __file__.
ZIPPABLE = (
    "pygls", "lsprotocol", "cattrs", "cattr", "attr", "attrs", "typing_extensions", "tomli",
    "exceptiongroup", "yaml", "_yaml", "yaml_ft", "_yaml_ft",
)
PRUNE = (
    "jedi/third_party/typeshed/stubs",  # jedi 0.20: third-party stubs (an absent folder is skipped)
    "jedi/third_party/typeshed/stdlib/2",  # jedi 0.19: Python 2's stdlib stubs
    "jedi/third_party/django-stubs",
    # libcst's code generator, codemod framework and its command line: the fixers use the parser,
    # the nodes, matchers and metadata only (the bundle test imports every module left)
    "libcst/codemod", "libcst/codegen", "libcst/testing", "libcst/tool.py", "libcst/__main__.py",
)
# Folders jedi lists (os.listdir, unguarded): emptied, with a note, instead of removed.
EMPTY = ("jedi/third_party/typeshed/third_party",)  # jedi 0.19: third-party stubs
ZIP_DATE = (2020, 1, 1, 0, 0, 0)


def log(msg: str) -> None:
    print(f"[lean-bundle] {msg}", flush=True)


def _top_level_names(dist_info: Path) -> List[str]:
    names = []
    top = dist_info / "top_level.txt"
    if top.is_file():
        names = [n.strip() for n in top.read_text(encoding="utf-8").splitlines() if n.strip()]
    if not names:  # no top_level.txt (newer build backends): the RECORD's first path parts
        record = dist_info / "RECORD"
        if record.is_file():
            for line in record.read_text(encoding="utf-8").splitlines():
                first = line.split(",", 1)[0].split("/", 1)[0]
                if first and not first.endswith((".dist-info", ".data")) and first != "..":
                    names.append(first[:-3] if first.endswith(".py") else first)
    return sorted(set(names))


def _is_zippable(folder: Path, entry: Path) -> bool:
    if entry.name.endswith(".dist-info"):
        names = _top_level_names(entry)
        return bool(names) and all(n in ZIPPABLE for n in names)
    stem = entry.name[:-3] if entry.name.endswith(".py") else entry.name
    if stem not in ZIPPABLE:
        return False
    native = [p for p in ([entry] if entry.is_file() else entry.rglob("*")) if p.suffix in (".so", ".pyd", ".dylib")]
    return not native


def prune(folder: Path) -> int:
    removed = 0
    for rel in PRUNE + EMPTY:
        target = folder / rel
        if target.is_file():
            target.unlink()
            removed += 1
        elif target.exists():
            removed += sum(1 for p in target.rglob("*") if p.is_file())
            shutil.rmtree(target)
            if rel in EMPTY:
                target.mkdir()
                (target / "PRUNED.txt").write_text("Emptied by gradwarden's lean_bundle.py: the server never "
                                                   "asks jedi about third-party packages.\n")
    for tests in sorted(folder.glob("libcst/**/tests"), reverse=True):
        if tests.is_dir():
            removed += sum(1 for p in tests.rglob("*") if p.is_file())
            shutil.rmtree(tests)
    for pkg in ("yaml", "yaml_ft"):  # the optional C speed-ups (pure Python without them)
        for so in (folder / pkg).glob("_yaml*") if (folder / pkg).is_dir() else ():
            if so.suffix in (".so", ".pyd"):
                so.unlink()
                removed += 1
    for cache in list(folder.rglob("__pycache__")):
        shutil.rmtree(cache, ignore_errors=True)
    return removed


def strip_natives(folder: Path, target: str) -> int:
    """Strip the ELF modules' symbol tables (linux and alpine targets, when ``strip`` exists)."""
    strip = shutil.which("strip")
    if strip is None or not target.startswith(("linux", "alpine")):
        return 0
    saved = 0
    for so in sorted(folder.rglob("*.so")):
        with so.open("rb") as fh:
            if fh.read(4) != b"\x7fELF":
                continue
        before = so.stat().st_size
        proc = subprocess.run([strip, "--strip-unneeded", str(so)], capture_output=True, text=True)
        if proc.returncode != 0:  # a foreign architecture this strip cannot read: keep it as it is
            log(f"cannot strip {so.name}: {proc.stderr.strip()}")
            continue
        saved += before - so.stat().st_size
    return saved


def zip_pure(folder: Path) -> int:
    """Move the zippable entries of ``folder`` into ``<folder>.zip``; returns the files moved."""
    entries = [e for e in sorted(folder.iterdir()) if _is_zippable(folder, e)]
    if not entries:
        return 0
    archive = folder.parent / (folder.name + ".zip")
    files: Dict[str, Path] = {}
    for entry in entries:
        for p in ([entry] if entry.is_file() else sorted(entry.rglob("*"))):
            if p.is_file():
                files[p.relative_to(folder).as_posix()] = p
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, files[name].read_bytes())
    for entry in entries:
        if entry.is_dir():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    return len(files)


def count(folder: Path) -> int:
    return sum(1 for p in folder.rglob("*") if p.is_file())


def make_lean(libs: Path, target: str) -> List[str]:
    """Prune, strip and zip every folder of ``libs``; returns the zips written (relative names)."""
    folders = [d for d in sorted(libs.iterdir()) if d.is_dir()]
    before = count(libs)
    removed = sum(prune(d) for d in folders)
    saved = sum(strip_natives(d, target) for d in folders)
    zipped = sum(zip_pure(d) for d in folders)
    log(f"{before} files -> {count(libs)} (pruned {removed}, zipped {zipped}); "
        f"stripped {saved / 1e6:.1f} MB of symbols")
    return sorted(d.name + ".zip" for d in folders if (libs / (d.name + ".zip")).is_file())
