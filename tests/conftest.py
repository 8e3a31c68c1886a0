"""Fixtures shared by the top-level tests; the helpers live in case_support.py (importable by
name from any test module: a `conftest` module name would clash with tests/lsp/conftest.py)."""
from case_support import *  # noqa: F401,F403 - re-export the fixtures (cases_dir, all_cases, ...)
