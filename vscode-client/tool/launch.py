# -*- coding: utf-8 -*-
"""Run gradwarden from the libraries bundled in the VS Code extension.

    python launch.py --probe         one JSON line: can this interpreter run the server?
    python launch.py serve ...       any gradwarden command line (the extension runs `serve`)

The extension ships gradwarden and its dependencies under ``../bundled/libs``
(``vscode-client/scripts/bundle_libs.py``): what all supported CPython versions share in
``libs/common`` (pure-Python distributions in ``libs/common.zip``) and what differs per minor
version in ``libs/cp3XY``. This script puts them first on ``sys.path`` (and in ``PYTHONPATH``
for the child processes of the server, listed again in ``GRADWARDEN_BUNDLED_LIBS``) and hands
over to ``gradwarden.cli.main``.

``GRADWARDEN_IMPORT_STRATEGY=fromEnvironment`` prefers a gradwarden installed in the
interpreter's environment, and falls back to the bundled one.

Kept parseable by old interpreters (no f-strings, no annotations) so that a Python 2.7 or 3.6
gets a clear "needs Python 3.9+" answer instead of a SyntaxError.
"""
from __future__ import print_function

import json
import os
import sys

MIN_PYTHON = (3, 9)
HERE = os.path.dirname(os.path.abspath(__file__))
LIBS = os.path.join(os.path.dirname(HERE), "bundled", "libs")
STRATEGY_ENV = "GRADWARDEN_IMPORT_STRATEGY"
BUNDLE_ENV = "GRADWARDEN_BUNDLED_LIBS"  # what was put on the path, for the server's children


def bundle_tag(version_info=None):
    v = version_info or sys.version_info
    return "cp%d%d" % (v[0], v[1])


def bundled_versions(libs=LIBS):
    """The CPython versions the bundle was built for, e.g. ["3.9", ..., "3.14"] (BUNDLE.json)."""
    try:
        with open(os.path.join(libs, "BUNDLE.json")) as fh:
            return [str(v) for v in json.load(fh).get("pythons", [])]
    except (OSError, ValueError, AttributeError):
        return []


def bundle_paths(libs=LIBS, version_info=None):
    """(paths, error): the folders to put first on sys.path, or why this Python cannot use the bundle."""
    v = version_info or sys.version_info
    version = "%d.%d" % (v[0], v[1])
    if tuple(v[:2]) < MIN_PYTHON:
        return None, "Python %s is too old: gradwarden needs Python %d.%d or newer" % ((version,) + MIN_PYTHON)
    if getattr(sys, "abiflags", "").find("t") >= 0 or _free_threaded():
        return None, "free-threaded Python %st is not supported; use a regular (GIL) build" % version
    common = os.path.join(libs, "common")
    if not os.path.isdir(common):
        return None, "the extension's bundled libraries are missing (%s); reinstall the extension" % common
    versions = bundled_versions(libs)
    if version not in versions:
        return None, ("this build of the extension has no libraries for Python %s (it has: %s); "
                      "choose one of those interpreters" % (version, ", ".join(versions) or "none"))
    # libs/cp3X holds what differs for this version (it may be absent: then everything is common);
    # each folder's pure-Python distributions sit in a zip beside it (lean_bundle.py), imported
    # from there after the folder.
    specific = os.path.join(libs, bundle_tag(v))
    paths = []
    for folder in (specific, common):
        if os.path.isdir(folder):
            paths.append(folder)
        if os.path.isfile(folder + ".zip"):
            paths.append(folder + ".zip")
    return paths, None


def _free_threaded():
    try:
        import sysconfig

        return bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    except Exception:  # noqa: BLE001
        return False


def _find_spec(name):
    try:
        import importlib.util

        return importlib.util.find_spec(name) is not None
    except Exception:  # noqa: BLE001 - a broken package counts as absent
        return False


def _dist_version(name):
    try:
        from importlib import metadata

        return metadata.version(name)
    except Exception:  # noqa: BLE001
        return None


def activate(strategy=None):
    """Put gradwarden on the path; returns (where_from, error)."""
    strategy = strategy or os.environ.get(STRATEGY_ENV) or "useBundled"
    if strategy == "fromEnvironment" and tuple(sys.version_info[:2]) >= MIN_PYTHON and _find_spec("gradwarden"):
        return "environment", None
    paths, error = bundle_paths()
    if error:
        return None, error
    sys.path[0:0] = paths
    # The server's analysis workers are `python -c ...` children: they find the bundle through
    # PYTHONPATH. GRADWARDEN_BUNDLED_LIBS names these entries, so that a child running the user's
    # own code (the debug run) can take them out again.
    os.environ[BUNDLE_ENV] = os.pathsep.join(paths)
    rest = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(paths + ([rest] if rest else []))
    return "bundled", None


def probe():
    info = {
        "ok": False,
        "python": "%d.%d.%d" % tuple(sys.version_info[:3]),
        "executable": sys.executable,
        "bundle": bundle_tag(),
        "torch": _find_spec("torch"),
        "torchVersion": None,
        "gradwarden": None,
        "gradwardenFrom": None,
        "error": None,
    }
    if info["torch"]:
        info["torchVersion"] = _dist_version("torch")
    where, error = activate()
    if error:
        info["error"] = error
        return info
    try:
        import gradwarden
        import libcst  # noqa: F401 - the compiled parser is the part that can fail
        from libcst import parse_module

        parse_module("x = 1\n")
        import pygls  # noqa: F401
        import lsprotocol  # noqa: F401

        info["gradwarden"] = getattr(gradwarden, "__version__", None)
        info["gradwardenFrom"] = where
        info["ok"] = True
    except Exception as exc:  # noqa: BLE001 - report it, never crash the probe
        info["error"] = "importing the server failed: %s: %s" % (type(exc).__name__, exc)
    return info


def main(argv):
    if argv[:1] == ["--probe"]:
        print(json.dumps(probe()))
        return 0
    where, error = activate()
    if error:
        print("gradwarden: " + error, file=sys.stderr)
        return 3
    from gradwarden.cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
