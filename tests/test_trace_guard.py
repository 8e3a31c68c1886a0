"""The suite's trace guard (tests/trace_guard.py) sees what a test leaves in the checkout: an
untracked file, and an ignored path that is not a build output (screenshots, a tool's cache)."""
from __future__ import annotations

import shutil
import uuid

import trace_guard


def test_an_ignored_folder_left_in_the_checkout_is_a_trace():
    # /tests/artifacts/ is git-ignored (a developer's screenshots): the suite must not write it
    folder = trace_guard.REPO / "tests" / "artifacts" / f"probe-{uuid.uuid4().hex}"
    existed = folder.parent.exists()
    before = trace_guard._git_status()
    assert before is not None
    folder.mkdir(parents=True)
    try:
        (folder / "shot.png").write_bytes(b"")
        after = trace_guard._git_status()
    finally:
        shutil.rmtree(folder if existed else folder.parent)
    assert "!! tests/artifacts/" in set(after) - set(before) or existed
    assert trace_guard._git_status() == before


def test_build_outputs_and_bytecode_are_not_traces():
    for path in (".cache/editor-stack/", "vscode-client/out/", "server/gradwarden/__pycache__/", "build/"):
        assert trace_guard._is_build_output(path), path
    for path in (".hypothesis/", ".pytest_cache/", ".gradwarden_cache/", "tests/artifacts/", "benchmarks/.cache/"):
        assert not trace_guard._is_build_output(path), path
