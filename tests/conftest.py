"""Fixtures shared by the top-level tests; the helpers live in case_support.py (importable by
name from any test module: a `conftest` module name would clash with tests/lsp/conftest.py)."""
import pytest

import trace_guard
from case_support import *  # noqa: F401,F403 - re-export the fixtures (cases_dir, all_cases, ...)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    trace_guard.start(config)  # a private TMPDIR for the run, git status recorded


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    trace_guard.finish(session, exitstatus)  # anything left behind fails the run


# The suite runs one test file per core (pyproject: ``-n auto --dist loadfile``), and files are
# handed out in collection order: the longest ones go first, so that no core is left with a
# long file at the end while the other idles (the slowest durations of every run are printed).
LONGEST_FIRST = (
    "tests/vscode/test_vscode_e2e.py",
    "tests/test_runtime_fidelity.py",
    "tests/test_runtime_cases.py",
    "tests/lsp/test_robustness.py",
    "tests/test_runtime_patterns.py",
    "tests/test_runtime_messages.py",
    "tests/test_variants.py",
    "tests/test_projects.py",
    "tests/test_runtime_exit_status.py",
)


def pytest_collection_modifyitems(session, config, items):
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}

    def key(item):
        path = item.nodeid.split("::", 1)[0]
        return rank.get(path, len(rank))

    items.sort(key=key)  # stable: the order within a file, and of the other files, is kept
