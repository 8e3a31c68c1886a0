"""The names of the editor settings and the shapes they arrive in (stdlib only: the start-up
front, ``front.py``, reads ``diagnosticMode`` from ``initializationOptions`` before pygls is
imported; ``options.py`` parses the rest)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict

DIAGNOSTIC_MODES = ("auto", "push", "pull")

# normalised key (see norm_key) -> ServerOptions field
ALIASES = {
    "select": "select",
    "extendselect": "extend_select",
    "ignore": "ignore",
    "severity": "severity",
    "severityoverrides": "severity",
    "linton": "lint_on",
    "run": "lint_on",  # ruff-lsp's name: "onType" | "onSave"
    "debouncems": "debounce_ms",
    "debounce": "debounce_ms",
    "diagnosticmode": "diagnostic_mode",
    "configfile": "config_file",
    "config": "config_file",
    "useprojectconfig": "use_project_config",
    "interpreter": "interpreter",
    "workers": "workers",
    "analysistimeout": "analysis_timeout",
    "pullwaitms": "pull_wait_ms",
}


def norm_key(key: str) -> str:
    return key.replace("_", "").replace("-", "").lower()


def unwrap(raw: Any) -> Dict[str, Any]:
    """The gradwarden settings inside whatever shape the client sent."""
    if not isinstance(raw, Mapping):
        return {}
    for wrapper in ("gradwarden", "settings"):
        inner = raw.get(wrapper)
        if isinstance(inner, Mapping):
            return unwrap(inner) if wrapper == "settings" else dict(inner)
    return dict(raw)


def diagnostic_mode_of(raw: Any, default: str = "auto") -> str:
    """The ``diagnosticMode`` that ``options.parse_options(raw)`` settles on (the last valid
    spelling wins; a bad value keeps the default)."""
    mode = default
    for key, value in unwrap(raw).items():
        if ALIASES.get(norm_key(str(key))) == "diagnostic_mode" and isinstance(value, str) and value in DIAGNOSTIC_MODES:
            mode = value
    return mode
