"""Editor settings: what ``initializationOptions`` and ``workspace/didChangeConfiguration`` (or
``workspace/configuration``, section ``gradwarden``) may say, and how they combine with the
project's ``[tool.gradwarden]``.

Keys (camelCase as editors send them; ``snake_case`` and ``kebab-case`` are accepted too)::

    {
      "select": ["GW2"],            # replaces the project's selection (like --select)
      "extendSelect": ["GW6"],
      "ignore": ["GW404"],
      "severity": {"GW404": "warning"},
      "lintOn": "type",             # "type" (as you type, debounced) | "save"
      "debounceMs": 100,            # quiet time before analysing while typing
      "diagnosticMode": "auto",     # "auto" (pull when the client can) | "push" | "pull"
      "configFile": null,           # a config file to use instead of searching
      "useProjectConfig": true,     # false: ignore pyproject.toml / gradwarden.toml
      "interpreter": ["/path/python"],  # the runtime bridge's Python (gradwarden.debugRun)
      "workers": 2,                 # analysis worker processes (0: threads)
      "analysisTimeout": 60,        # seconds before an analysis is abandoned
      "pullWaitMs": 1000            # pull diagnostics: how long a request waits for a running
                                    # analysis before it is answered with the last result
                                    # (a workspace/diagnostic/refresh follows the new one)
    }

Everything may also sit under a ``"gradwarden"`` key (``{"gradwarden": {...}}``), or under
``"settings"`` (the shape some clients use for initializationOptions).
A bad value is reported (``ConfigError`` text) and that key keeps its previous value.
"""
from __future__ import annotations

import os
import shlex
import threading
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple

from gradwarden.config import ConfigError, Settings, check_selector, default_settings, load_settings, parse_severity
from gradwarden.lsp.option_keys import ALIASES as _ALIASES
from gradwarden.lsp.option_keys import DIAGNOSTIC_MODES, unwrap
from gradwarden.lsp.option_keys import norm_key as _norm_key

LINT_ON = ("type", "save")
DEFAULT_DEBOUNCE_MS = 100
DEFAULT_PULL_WAIT_MS = 1000


@dataclass(frozen=True)
class ServerOptions:
    select: Optional[Tuple[str, ...]] = None
    extend_select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    severity: Tuple[Tuple[str, str], ...] = ()
    lint_on: str = "type"
    debounce_ms: int = DEFAULT_DEBOUNCE_MS
    diagnostic_mode: str = "auto"
    config_file: Optional[str] = None
    use_project_config: bool = True
    interpreter: Optional[Tuple[str, ...]] = None
    workers: int = 2
    analysis_timeout: float = 60.0
    pull_wait_ms: int = DEFAULT_PULL_WAIT_MS

    def summary(self) -> Dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def parse_options(raw: Any, base: Optional[ServerOptions] = None) -> Tuple[ServerOptions, List[str]]:
    """(options, problems): ``raw`` layered over ``base`` (defaults when None). Unknown keys and
    bad values are reported in ``problems`` and ignored."""
    opts = base or ServerOptions()
    problems: List[str] = []
    data = unwrap(raw)
    changes: Dict[str, Any] = {}
    for key, value in data.items():
        name = _ALIASES.get(_norm_key(str(key)))
        where = f"editor settings: `{key}`"
        if name is None:
            if _norm_key(str(key)) in ("enable", "trace", "logfile", "loglevel", "path", "args"):
                continue  # client-side settings (VS Code extension), not ours
            problems.append(f"{where}: unknown setting (ignored)")
            continue
        try:
            changes[name] = _convert(name, value, where)
        except ConfigError as exc:
            problems.append(str(exc))
    return replace(opts, **changes), problems


def _selectors(value: Any, where: str) -> Tuple[str, ...]:
    if isinstance(value, str):
        value = [v for v in value.replace(",", " ").split() if v]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of rule codes or prefixes, got {value!r}")
    return tuple(check_selector(v, where) for v in value)


def _convert(name: str, value: Any, where: str) -> Any:
    if name == "select":
        return None if value is None else _selectors(value, where)
    if name in ("extend_select", "ignore"):
        return () if value is None else _selectors(value, where)
    if name == "severity":
        if value is None:
            return ()
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: expected a table of code = level, got {value!r}")
        out = []
        for code, level in value.items():
            sel = check_selector(str(code), where)
            parse_severity(level, f"{where} for `{code}`")
            out.append((sel, str(level)))
        return tuple(out)
    if name == "lint_on":
        text = str(value).strip().lower().replace("on", "", 1) if isinstance(value, str) else value
        if text in ("type", "save"):
            return text
        raise ConfigError(f"{where}: expected \"type\" or \"save\", got {value!r}")
    if name == "pull_wait_ms":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value > 60000:
            raise ConfigError(f"{where}: expected milliseconds between 0 and 60000, got {value!r}")
        return int(value)
    if name == "debounce_ms":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value > 10000:
            raise ConfigError(f"{where}: expected milliseconds between 0 and 10000, got {value!r}")
        return int(value)
    if name == "diagnostic_mode":
        if value in DIAGNOSTIC_MODES:
            return value
        raise ConfigError(f"{where}: expected one of {', '.join(DIAGNOSTIC_MODES)}, got {value!r}")
    if name == "config_file":
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a path, got {value!r}")
        return os.path.expanduser(value)
    if name == "use_project_config":
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{where}: expected true or false, got {value!r}")
    if name == "interpreter":
        if value is None or value == "" or value == []:
            return None
        if isinstance(value, str):
            return tuple(shlex.split(value))
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
            return tuple(value)
        raise ConfigError(f"{where}: expected a command (a path or a list of strings), got {value!r}")
    if name == "workers":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 16:
            raise ConfigError(f"{where}: expected a number of workers between 0 and 16, got {value!r}")
        return value
    if name == "analysis_timeout":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ConfigError(f"{where}: expected a positive number of seconds, got {value!r}")
        return float(value)
    raise ConfigError(f"{where}: unknown setting")  # pragma: no cover


# --------------------------------------------------------------------------- settings per file
class SettingsResolver:
    """Settings for a file: the project's config (nearest pyproject.toml / gradwarden.toml,
    cached per folder) with the editor's choices layered on top. Never raises: a broken config
    file is reported once through ``problems`` and the defaults are used instead."""

    def __init__(self, options: ServerOptions, root: Optional[Path] = None) -> None:
        self.options = options
        self.root = Path(root or os.getcwd())
        self._cache: Dict[Tuple[str, Optional[str]], Settings] = {}
        self._reported: set = set()
        self.problems: List[str] = []
        self.generation = 0
        self._lock = threading.Lock()

    def update(self, options: ServerOptions) -> None:
        with self._lock:
            self.options = options
            self._cache.clear()
            self._reported.clear()
            self.generation += 1

    def invalidate(self) -> None:
        with self._lock:
            self._cache.clear()
            self._reported.clear()
            self.generation += 1

    def take_problems(self) -> List[str]:
        with self._lock:
            out, self.problems = self.problems, []
        return out

    def for_file(self, filename: Optional[str]) -> Settings:
        folder = str(Path(filename).parent) if filename and os.path.isabs(filename) else str(self.root)
        key = (folder, self.options.config_file)
        with self._lock:
            cached = self._cache.get(key)
        if cached is not None:
            return cached
        settings = self._load(folder)
        with self._lock:
            self._cache[key] = settings
        return settings

    def _load(self, folder: str) -> Settings:
        opts = self.options
        base: Settings
        try:
            if not opts.use_project_config:
                base = default_settings(self.root)
            else:
                explicit = Path(opts.config_file) if opts.config_file else None
                base = load_settings(Path(folder) if os.path.isdir(folder) else self.root, explicit)
        except ConfigError as exc:
            self._report(f"gradwarden: configuration ignored: {exc}")
            base = default_settings(self.root)
        try:
            return base.override(
                select=opts.select,
                extend_select=opts.extend_select,
                ignore=opts.ignore,
                severity=dict(opts.severity),
                source="editor settings",
            )
        except ConfigError as exc:  # already validated; defensive
            self._report(f"gradwarden: editor settings ignored: {exc}")
            return base

    def _report(self, message: str) -> None:
        with self._lock:
            if message not in self._reported:
                self._reported.add(message)
                self.problems.append(message)


__all__ = ["ServerOptions", "SettingsResolver", "parse_options", "unwrap", "DEFAULT_DEBOUNCE_MS"]
