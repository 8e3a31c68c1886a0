"""Bundle gradwarden and its dependencies into ``vscode-client/bundled/libs`` for the .vsix.

The extension runs the server with the user's own Python (3.9+) and no pip install, like the
Python tool extensions built on Microsoft's template (a bundled ``libs`` folder put first on
``sys.path``). libcst ships a compiled parser per CPython minor version and platform, so:

* every supported Python version gets its own ``pip install --target`` for the target platform
  (``--python-version 3.X --platform <tags> --only-binary=:all:``: wheels only, no builds, so any
  target can be bundled from any machine);
* pip evaluates environment markers (``tomli; python_version < "3.11"``) against the Python
  running pip, not the target: the missing requirements are found by evaluating every installed
  distribution's markers for the target version and platform, and installed until closed;
* what versions share moves to ``libs/common``: a top-level entry whose files agree wherever two
  versions have the same file (the compiled modules carry the ABI in their names,
  ``native.cpython-311-x86_64-linux-gnu.so``, so libcst's six parsers live side by side in one
  package and Python imports its own); a version with another variant of it keeps that in
  ``libs/cp3X``, which comes first on its path.

Then ``lean_bundle.py`` makes it lean: what the server never uses is pruned (jedi's
third-party stubs, libcst's tests, yaml's optional C speed-ups), the compiled modules are
stripped, and the pure-Python distributions go into ``libs/common.zip``. jedi is pinned to one
version for every Python (:data:`CONSTRAINTS`), so that it ships once.

``vscode-client/tool/launch.py`` puts ``libs/cp3X`` + ``libs/common`` (and their zips) on the
path at run time.
torch is never bundled (it is an optional extra; the debug run uses the user's own torch).
The third-party part is cached in ``bundled/deps-cache`` (or ``$GRADWARDEN_BUNDLE_CACHE``) under a key of gradwarden's
requirements, the target and the versions, so a rebuild after a change to gradwarden's own code
only reinstalls gradwarden.

    python vscode-client/scripts/bundle_libs.py [--target linux-x64] [--pythons 3.9,...,3.14]
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Sequence

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO / "vscode-client" / "bundled" / "libs"
# GRADWARDEN_BUNDLE_CACHE: a cache that outlives the checkout (the tests point it into the
# editor-stack cache, so that a fresh CI clone does not reinstall the same libraries).
DEFAULT_CACHE = Path(os.environ.get("GRADWARDEN_BUNDLE_CACHE") or REPO / "vscode-client" / "bundled" / "deps-cache")
DEFAULT_PYTHONS = ("3.9", "3.10", "3.11", "3.12", "3.13", "3.14")
# One version for every bundled Python, so that each ships once: jedi 0.20 needs Python 3.10+,
# 0.19.2 runs on all of them (and resolves project imports, all gradwarden asks of it).
CONSTRAINTS = ("jedi==0.19.2",)


def _manylinux(arch: str) -> List[str]:
    return [f"manylinux_2_{minor}_{arch}" for minor in (17, 24, 28, 31, 34)] + [f"manylinux2014_{arch}"]


def _macos(arch: str) -> List[str]:
    tags = []
    for major, minors in ((10, range(9, 16)), (11, [0]), (12, [0]), (13, [0]), (14, [0])):
        for minor in minors:
            if arch == "arm64" and major < 11:
                continue
            tags += [f"macosx_{major}_{minor}_{arch}", f"macosx_{major}_{minor}_universal2"]
    return tags


# VS Code's platform-specific extension targets -> pip platform tags.
TARGETS: Dict[str, List[str]] = {
    "linux-x64": _manylinux("x86_64"),
    "linux-arm64": _manylinux("aarch64"),
    "alpine-x64": ["musllinux_1_1_x86_64", "musllinux_1_2_x86_64"],
    "alpine-arm64": ["musllinux_1_1_aarch64", "musllinux_1_2_aarch64"],
    "darwin-x64": _macos("x86_64"),
    "darwin-arm64": _macos("arm64"),
    "win32-x64": ["win_amd64"],
    "win32-arm64": ["win_arm64"],
}


def log(msg: str) -> None:
    print(f"[bundle-libs] {msg}", file=sys.stderr, flush=True)


# pip before 24.1 checks a wheel's Requires-Python against the interpreter running pip, not
# against ``--python-version`` (pip 23.2.1, the one a fresh Python 3.11 venv carries, refuses
# ``pyyaml-ft`` for a 3.13 target: "3.11.7 not in '>=3.13'"). Such a pip is replaced, for this
# script only, by a newer one installed into a folder beside the dependency cache.
MIN_PIP = (24, 1)
_PIP: List[str] = []


def _version_tuple(text: str) -> tuple:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:2])


def pip_command(cache: Path) -> List[str]:
    if _PIP:
        return _PIP
    probe = subprocess.run([sys.executable, "-c", "import pip; print(pip.__version__)"],
                           capture_output=True, text=True)
    if probe.returncode == 0 and _version_tuple(probe.stdout) >= MIN_PIP:
        _PIP[:] = [sys.executable, "-m", "pip"]
        return _PIP
    tool = cache.parent / "pip-tool"
    if not (tool / "pip" / "__init__.py").is_file():
        log(f"pip {probe.stdout.strip() or '?'} is older than {'.'.join(map(str, MIN_PIP))}: "
            f"installing a newer pip into {tool} for bundling")
        shutil.rmtree(tool, ignore_errors=True)
        run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             "--target", tool, "pip>=" + ".".join(map(str, MIN_PIP))])
    _PIP[:] = [sys.executable, str(tool / "pip")]  # ``python <dir>/pip`` runs that pip's __main__
    return _PIP


def run(cmd: Sequence[str], **kw) -> None:
    log("$ " + " ".join(str(c) for c in cmd))
    proc = subprocess.run([str(c) for c in cmd], **kw)
    if proc.returncode != 0:
        raise SystemExit(f"bundle-libs: command failed (exit {proc.returncode}): {' '.join(str(c) for c in cmd)}")


def _can_build_offline() -> bool:
    """Whether this interpreter's setuptools can build the wheel without an isolated build
    environment: setuptools 70.1+ has ``bdist_wheel`` itself, older ones need ``wheel``. Looked
    up, not imported: importing setuptools after pip's vendored packaging trips its distutils shim."""
    from importlib import metadata

    try:
        version = _version_tuple(metadata.version("setuptools"))
    except metadata.PackageNotFoundError:
        return False
    return version >= (70, 1) or importlib.util.find_spec("wheel") is not None


# what the wheel is made of (pyproject.toml: the package under server/, its readme and license)
WHEEL_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "server")


def wheel_source(project: Path, dest: Path) -> Path:
    """A copy of what the wheel is built from, without build outputs. setuptools builds in the
    project's own ``build/`` folder and never empties it, so a module moved or removed since an
    earlier build there would ship in the wheel (a .vsix once carried the whole engine of before
    its restructure beside the new one, and grew past its size limit)."""
    junk = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    dest.mkdir(parents=True, exist_ok=True)
    for name in WHEEL_SOURCES:
        src = project / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=junk)
        elif src.is_file():
            shutil.copy2(src, dest / name)
    return dest


def build_wheel(project: Path, out: Path) -> Path:
    isolation: List[str] = ["--no-build-isolation"] if _can_build_offline() else []
    source = wheel_source(project, out.parent / "wheel-source")
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", *isolation, "-w", out, source])
    wheels = sorted(out.glob("gradwarden-*.whl"))
    if not wheels:
        raise SystemExit(f"bundle-libs: no gradwarden wheel built in {out}")
    return wheels[-1]


# --------------------------------------------------------------------------- markers
try:
    from packaging.markers import Marker
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
except ImportError:  # pragma: no cover - pip always vendors it
    from pip._vendor.packaging.markers import Marker  # type: ignore
    from pip._vendor.packaging.requirements import Requirement  # type: ignore
    from pip._vendor.packaging.utils import canonicalize_name  # type: ignore

_PLATFORM_ENV = {  # target -> (sys_platform, platform_system, platform_machine, os_name)
    "linux-x64": ("linux", "Linux", "x86_64", "posix"),
    "linux-arm64": ("linux", "Linux", "aarch64", "posix"),
    "alpine-x64": ("linux", "Linux", "x86_64", "posix"),
    "alpine-arm64": ("linux", "Linux", "aarch64", "posix"),
    "darwin-x64": ("darwin", "Darwin", "x86_64", "posix"),
    "darwin-arm64": ("darwin", "Darwin", "arm64", "posix"),
    "win32-x64": ("win32", "Windows", "AMD64", "nt"),
    "win32-arm64": ("win32", "Windows", "ARM64", "nt"),
}


def marker_env(version: str, target: str) -> Dict[str, str]:
    sys_platform, system, machine, os_name = _PLATFORM_ENV[target]
    return {
        "python_version": version, "python_full_version": version + ".0", "implementation_name": "cpython",
        "implementation_version": version + ".0", "platform_python_implementation": "CPython",
        "sys_platform": sys_platform, "platform_system": system, "platform_machine": machine,
        "os_name": os_name, "platform_release": "", "platform_version": "", "extra": "",
    }


def _metadata_requirements(dist_info: Path) -> List[str]:
    try:
        text = (dist_info / "METADATA").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    head = text.split("\n\n", 1)[0]
    return [line.split(":", 1)[1].strip() for line in head.splitlines() if line.startswith("Requires-Dist:")]


def missing_requirements(target: Path, env: Dict[str, str]) -> List[str]:
    installed = {canonicalize_name(d.name[: -len(".dist-info")].rpartition("-")[0]) for d in target.glob("*.dist-info")}
    missing: List[str] = []
    for dist_info in sorted(target.glob("*.dist-info")):
        for line in _metadata_requirements(dist_info):
            req = Requirement(line)
            if req.marker is not None and not req.marker.evaluate(env):
                continue
            if canonicalize_name(req.name) in installed:
                continue
            spec = f"{req.name}{req.specifier}"
            if spec not in missing:
                missing.append(spec)
    return missing


def tree_files(path: Path) -> Dict[str, Path]:
    if path.is_file():
        return {"": path}
    return {str(p.relative_to(path)): p for p in path.rglob("*") if p.is_file()}


def clean(target: Path) -> None:
    for junk in ("bin", "share"):
        shutil.rmtree(target / junk, ignore_errors=True)
    for cache in list(target.rglob("__pycache__")):
        shutil.rmtree(cache, ignore_errors=True)


def pip_install(version: str, platforms: List[str], target: Path, reqs: Sequence[str]) -> None:
    cmd = [*pip_command(DEFAULT_CACHE), "install", "--quiet", "--disable-pip-version-check", "--no-compile",
           "--target", target, "--only-binary=:all:", "--implementation", "cp", "--python-version", version]
    for tag in platforms:
        cmd += ["--platform", tag]
    with tempfile.NamedTemporaryFile("w", suffix="-constraints.txt", delete=False) as fh:
        fh.write("\n".join(CONSTRAINTS) + "\n")
    try:
        run(cmd + ["--constraint", fh.name] + list(reqs))
    finally:
        os.unlink(fh.name)


def install_for(version: str, target_name: str, wheel: Path, target: Path) -> None:
    platforms = TARGETS[target_name]
    pip_install(version, platforms, target, [str(wheel)])
    env = marker_env(version, target_name)
    for _ in range(10):  # the closure under the target's markers
        missing = missing_requirements(target, env)
        if not missing:
            break
        log(f"python {version}: also needs {', '.join(missing)} (markers for the target)")
        extra = target.parent / (target.name + "-extra")
        pip_install(version, platforms, extra, missing)
        for entry in extra.iterdir():
            if not (target / entry.name).exists():
                shutil.move(str(entry), str(target / entry.name))
        shutil.rmtree(extra)
    else:
        raise SystemExit(f"bundle-libs: requirements for Python {version} do not close: {missing}")
    clean(target)


def _mergeable(entries: List[Path]) -> bool:
    """Every file present in two or more of the trees has the same bytes everywhere."""
    if all(e.name.endswith(".dist-info") for e in entries):
        return True  # same name-version; RECORD/WHEEL tags differ, harmless at run time
    if any(e.is_file() != entries[0].is_file() for e in entries):
        return False
    seen: Dict[str, bytes] = {}
    for entry in entries:
        for rel, path in tree_files(entry).items():
            data = path.read_bytes()
            if seen.setdefault(rel, data) != data:
                return False
    return True


def _largest_cluster(entries: List[Path]) -> List[Path]:
    """The largest set of the entries that merge into one (greedy, in version order)."""
    best: List[Path] = []
    for i, seed in enumerate(entries):
        cluster = [seed]
        for other in entries[i + 1:]:
            if _mergeable(cluster + [other]):
                cluster.append(other)
        if len(cluster) > len(best):
            best = cluster
    return best


def dedupe(per_version: Dict[str, Path], common: Path) -> None:
    """Move to ``common`` every top-level entry that at least two versions share (merged: their
    files agree wherever they overlap). ``libs/cp3X`` comes first on the path, so a version with
    a different variant (jedi 0.19 on 3.9, 0.20 elsewhere) keeps it there and it shadows the
    common one; an entry some versions lack is harmless to them (pure Python, or a compiled
    module whose ABI tag they never import)."""
    common.mkdir(parents=True, exist_ok=True)
    names = sorted(set().union(*(set(p.name for p in d.iterdir()) for d in per_version.values())))
    for name in names:
        entries = [d / name for d in per_version.values() if (d / name).exists()]
        cluster = _largest_cluster(entries)
        if len(cluster) < 2 and len(per_version) > 1:
            continue
        dest = common / name
        for entry in cluster:
            if entry.is_file():
                if not dest.exists():
                    shutil.move(str(entry), str(dest))
                else:
                    entry.unlink()
                continue
            for rel, path in tree_files(entry).items():
                if not (dest / rel).exists():
                    (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.move(str(path), str(dest / rel))
            shutil.rmtree(entry)


def packages_in(folder: Path) -> Dict[str, str]:
    out = {}
    for info in folder.glob("*.dist-info"):
        name, _, version = info.name[: -len(".dist-info")].partition("-")
        out[name] = version
    return out


def wheel_requirements(wheel: Path) -> List[str]:
    import zipfile

    with zipfile.ZipFile(wheel) as zf:
        meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        head = zf.read(meta).decode("utf-8", "replace").split("\n\n", 1)[0]
    return sorted(line.split(":", 1)[1].strip() for line in head.splitlines() if line.startswith("Requires-Dist:"))


def deps_key(wheel: Path, target: str, versions: Sequence[str]) -> str:
    h = hashlib.sha256()
    h.update(json.dumps([wheel_requirements(wheel), target, list(versions)]).encode())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()[:16]  # lean_bundle.py runs after the cache: not part of the key


def is_ours(name: str) -> bool:
    return name == "gradwarden" or (name.startswith("gradwarden-") and name.endswith(".dist-info"))


def build_dependencies(wheel: Path, target: str, versions: Sequence[str], libs: Path) -> None:
    """The full tree (gradwarden included) for ``versions``, deduplicated into ``libs``."""
    per_version: Dict[str, Path] = {}
    for version in versions:
        tag = "cp" + version.replace(".", "")
        per_version[tag] = libs / tag
        install_for(version, target, wheel, per_version[tag])
    dedupe(per_version, libs / "common")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default=os.environ.get("GRADWARDEN_VSCODE_TARGET", "linux-x64"), choices=sorted(TARGETS))
    ap.add_argument("--pythons", default=",".join(DEFAULT_PYTHONS), help="comma-separated Python versions")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--project", type=Path, default=REPO)
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                    help="where the third-party part is kept, keyed by the requirements, target and versions")
    ap.add_argument("--no-cache", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    versions = [v.strip() for v in args.pythons.split(",") if v.strip()]
    out: Path = args.out.resolve()
    pip_command(args.cache.resolve())
    with tempfile.TemporaryDirectory(prefix="gw-bundle-") as tmp_name:
        tmp = Path(tmp_name)
        wheel = build_wheel(args.project.resolve(), tmp / "wheel")
        libs = tmp / "libs"
        key = deps_key(wheel, args.target, versions)
        cached = args.cache.resolve() / f"{args.target}-{key}"
        if not args.no_cache and (cached / ".complete").is_file():
            log(f"third-party libraries from the cache ({cached.name}); installing gradwarden itself")
            shutil.copytree(cached, libs, ignore=shutil.ignore_patterns(".complete"))
            pip_install(versions[0], TARGETS[args.target], tmp / "own", ["--no-deps", str(wheel)])
            for entry in (tmp / "own").iterdir():
                if is_ours(entry.name):
                    shutil.move(str(entry), str(libs / "common" / entry.name))
        else:
            build_dependencies(wheel, args.target, versions, libs)
            if not args.no_cache:
                if args.cache.exists():
                    shutil.rmtree(args.cache)  # one entry: the current one
                shutil.copytree(libs, cached, ignore=lambda d, names: [n for n in names if is_ours(n)])
                (cached / ".complete").write_text(time.strftime("%Y-%m-%dT%H:%M:%S") + "\n")
        per_version = {d.name: d for d in sorted(libs.iterdir()) if d.name.startswith("cp")}
        manifest = {
            "target": args.target,
            "pythons": versions,
            "common": packages_in(libs / "common"),
            "per_version": {tag: packages_in(d) for tag, d in per_version.items()},
        }
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from lean_bundle import make_lean

        manifest["zipped"] = make_lean(libs, args.target)
        (libs / "BUNDLE.json").write_text(json.dumps(manifest, indent=2) + "\n")
        if out.exists():
            shutil.rmtree(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(libs), str(out))
    files = [p for p in out.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    log(f"{args.target}: {', '.join(versions)} -> {out} ({size / 1e6:.1f} MB, {len(files)} files) "
        f"in {time.monotonic() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
