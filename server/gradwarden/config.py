"""Settings: which rules run, at which severity, on which files.

Shared by the CLI and the language server, so nothing here knows about argparse or LSP.

Configuration lives in ``[tool.gradwarden]`` of a ``pyproject.toml``, or at the top level of a
``gradwarden.toml`` / ``.gradwarden.toml``; the nearest such file walking up from the first
checked path wins (a pyproject.toml without a ``[tool.gradwarden]`` table is skipped, as ruff
does). Keys::

    select = ["GW2", "GW401"]          # rule code prefixes, or "ALL" (default: ALL)
    extend-select = ["GW6"]
    ignore = ["GW404"]
    per-file-ignores = { "tests/*" = ["GW4"] }
    exclude = ["build", "third_party/**"]  # replaces the default exclusions
    extend-exclude = ["*_pb2.py"]
    severity = { GW404 = "warning", GW5 = "error" }   # error | warning | information | hint
    respect-gitignore = true
    jobs = 4                           # 0: automatic
    fail-on = "warning"                # exit 1 for findings at this severity or above (default:
                                       # warning; "information" fails on notes too, "error" only on errors)

Rule selection follows ruff: within one source (the file, then the command line) the more
specific selector wins (``select = ["GW201"]`` with ``ignore = ["GW2"]`` keeps GW201), a
``select`` in a later source replaces the earlier choice, ``extend-select``/``ignore`` amend it.
GW001 (the file does not parse) is always reported unless ignored by its exact code.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from gradwarden.discovery import DEFAULT_EXCLUDE, PathGlob
from gradwarden.engine.diagnostic import Diagnostic, Severity


def _toml() -> Any:
    """tomllib (tomli before 3.11), imported when a configuration is read: `--version` and
    `rules` never pay for it."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.9/3.10 only
        import tomli as tomllib
    return tomllib


CONFIG_FILENAMES: Tuple[str, ...] = (".gradwarden.toml", "gradwarden.toml", "pyproject.toml")
PARSE_ERROR_CODE = "GW001"
ALL_SELECTOR = "ALL"

KNOWN_KEYS: Tuple[str, ...] = (
    "select",
    "extend-select",
    "ignore",
    "per-file-ignores",
    "exclude",
    "extend-exclude",
    "severity",
    "respect-gitignore",
    "jobs",
    "fail-on",
)


class ConfigError(Exception):
    """A configuration (file or override) that cannot be used; the message names the key."""


def known_codes() -> Tuple[str, ...]:
    from gradwarden.rules import all_rules

    return tuple(r.code for r in all_rules())


def normalize_selector(text: str) -> str:
    return text.strip().upper()


def check_selector(selector: str, where: str) -> str:
    """Normalise ``selector`` and make sure it names at least one rule."""
    if not isinstance(selector, str):
        raise ConfigError(f"{where}: expected a rule code or prefix, got {selector!r}")
    sel = normalize_selector(selector)
    if sel == ALL_SELECTOR:
        return sel
    codes = known_codes()
    if not sel or not any(code.startswith(sel) for code in codes):
        import difflib  # only for a bad selector's hint: not on every run's path

        hint = difflib.get_close_matches(sel, codes, n=1)
        extra = f" (did you mean `{hint[0]}`?)" if hint else ""
        raise ConfigError(f"{where}: unknown rule selector `{selector}`{extra}")
    return sel


def _specificity(selector: str) -> int:
    return 0 if selector == ALL_SELECTOR else len(selector)


def _selects(selector: str, code: str) -> bool:
    return selector == ALL_SELECTOR or code.startswith(selector)


def parse_severity(value: Any, where: str) -> Severity:
    if isinstance(value, str):
        try:
            return Severity.parse(value)
        except KeyError:
            pass
    raise ConfigError(f"{where}: invalid severity {value!r} (expected error, warning, information or hint)")


@dataclass(frozen=True)
class Layer:
    """One source of rule choices: the config file, or the command line / editor settings."""

    select: Optional[Tuple[str, ...]] = None  # None: keep what earlier layers chose
    extend_select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    severity: Tuple[Tuple[str, Severity], ...] = ()

    def decide(self, code: str, enabled: bool) -> bool:
        state = False if self.select is not None else enabled
        ops = [(_specificity(s), 0, s, True) for s in (self.select or ()) + self.extend_select]
        ops += [(_specificity(s), 1, s, False) for s in self.ignore]
        for _, _, sel, add in sorted(ops, key=lambda o: (o[0], o[1])):
            if _selects(sel, code):
                state = add
        return state

    def severity_for(self, code: str) -> Optional[Severity]:
        best: Optional[Tuple[int, Severity]] = None
        for sel, sev in self.severity:
            if _selects(sel, code) and (best is None or _specificity(sel) >= best[0]):
                best = (_specificity(sel), sev)
        return best[1] if best else None


@dataclass(frozen=True)
class Settings:
    root: Path = field(default_factory=lambda: Path(os.getcwd()))  # anchors relative globs
    config_file: Optional[Path] = None
    layers: Tuple[Layer, ...] = ()
    per_file_ignores: Tuple[Tuple[PathGlob, Tuple[str, ...]], ...] = ()
    exclude: Tuple[PathGlob, ...] = ()  # the effective exclusions (default or configured + extended)
    respect_gitignore: bool = True
    jobs: Optional[int] = None  # None/0: automatic
    # `check` exits 1 when a finding is at least this severe (errors and warnings by default:
    # an information note is not a proven hazard, as a type checker's notes fail no run)
    fail_on: Severity = Severity.WARNING

    # ---- rule selection and severity ----
    def fails(self, diags: Iterable[Diagnostic]) -> bool:
        """Does a run that reports ``diags`` fail (exit 1)?"""
        return any(d.severity <= self.fail_on for d in diags)

    def is_enabled(self, code: str) -> bool:
        code = code.upper()
        if code == PARSE_ERROR_CODE:
            return not any(PARSE_ERROR_CODE in layer.ignore for layer in self.layers)
        enabled = True  # the default selection is ALL
        for layer in self.layers:
            enabled = layer.decide(code, enabled)
        return enabled

    def enabled_codes(self) -> List[str]:
        return [c for c in known_codes() if self.is_enabled(c)]

    def severity_for(self, code: str, default: Severity) -> Severity:
        sev = default
        for layer in self.layers:
            found = layer.severity_for(code.upper())
            if found is not None:
                sev = found
        return sev

    def ignored_in_file(self, code: str, filename: str) -> bool:
        if not self.per_file_ignores:
            return False
        path = Path(os.path.abspath(filename))
        for glob, selectors in self.per_file_ignores:
            if glob.matches(path) and any(_selects(s, code) for s in selectors):
                return True
        return False

    def apply(self, diags: Iterable[Diagnostic]) -> List[Diagnostic]:
        """Drop diagnostics of rules not selected (or ignored for their file) and apply the
        severity overrides. Order is preserved."""
        out: List[Diagnostic] = []
        for d in diags:
            if not self.is_enabled(d.code):
                continue
            if d.code != PARSE_ERROR_CODE and self.ignored_in_file(d.code, d.filename):
                continue
            sev = self.severity_for(d.code, d.severity)
            out.append(d if sev == d.severity else d.with_severity(sev))
        return out

    # ---- files ----
    def is_excluded(self, path: Path) -> bool:
        return any(g.matches(path) for g in self.exclude)

    # ---- overrides (command line, editor settings) ----
    def override(
        self,
        *,
        select: Optional[Sequence[str]] = None,
        extend_select: Sequence[str] = (),
        ignore: Sequence[str] = (),
        severity: Optional[Mapping[str, str]] = None,
        exclude: Optional[Sequence[str]] = None,
        extend_exclude: Sequence[str] = (),
        respect_gitignore: Optional[bool] = None,
        jobs: Optional[int] = None,
        fail_on: Optional[str] = None,
        base: Optional[Path] = None,
        source: str = "command line",
    ) -> "Settings":
        """A copy with one more layer of choices on top (raises ConfigError on bad values).
        Relative exclusion globs are anchored at ``base`` (default: the working directory)."""
        layer = _make_layer(
            select=list(select) if select is not None else None,
            extend_select=list(extend_select),
            ignore=list(ignore),
            severity=dict(severity or {}),
            where=lambda key: f"{source}: `{key}`",
        )
        anchor = Path(os.path.abspath(base if base is not None else os.getcwd()))
        excl = self.exclude
        if exclude is not None:
            excl = tuple(PathGlob.make(p, anchor) for p in _strings(exclude, f"{source}: `exclude`"))
        excl += tuple(PathGlob.make(p, anchor) for p in _strings(extend_exclude, f"{source}: `extend-exclude`"))
        if jobs is not None:
            _check_jobs(jobs, f"{source}: `jobs`")
        changes: Dict[str, Any] = {"layers": self.layers + (layer,), "exclude": excl}
        if respect_gitignore is not None:
            changes["respect_gitignore"] = bool(respect_gitignore)
        if jobs is not None:
            changes["jobs"] = jobs
        if fail_on is not None:
            changes["fail_on"] = parse_severity(fail_on, f"{source}: `fail-on`")
        return replace(self, **changes)


def _strings(value: Any, where: str) -> List[str]:
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigError(f"{where}: expected a list of strings, got {value!r}")


def _check_jobs(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where}: expected a non-negative integer (0: automatic), got {value!r}")
    return value


def _make_layer(*, select, extend_select, ignore, severity, where) -> Layer:
    def sels(key: str, values: Any) -> Tuple[str, ...]:
        return tuple(check_selector(v, where(key)) for v in _strings(values, where(key)))

    if not isinstance(severity, Mapping):
        raise ConfigError(f"{where('severity')}: expected a table of code = level, got {severity!r}")
    sev: List[Tuple[str, Severity]] = []
    for key, value in severity.items():
        sel = check_selector(key, where("severity"))
        sev.append((sel, parse_severity(value, f"{where('severity')} for `{key}`")))
    return Layer(
        select=sels("select", select) if select is not None else None,
        extend_select=sels("extend-select", extend_select),
        ignore=sels("ignore", ignore),
        severity=tuple(sev),
    )


# --------------------------------------------------------------------------- files
def read_toml(path: Path) -> Dict[str, Any]:
    tomllib = _toml()
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from exc


def options_in(path: Path, data: Optional[Dict[str, Any]] = None) -> Optional[Dict[str, Any]]:
    """The gradwarden table of a config file (None: a pyproject.toml without one)."""
    data = read_toml(path) if data is None else data
    if path.name == "pyproject.toml":
        tool = data.get("tool")
        if not isinstance(tool, dict) or "gradwarden" not in tool:
            return None
        table = tool["gradwarden"]
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.gradwarden] must be a table")
        return table
    return data


def find_config(start: Path) -> Optional[Path]:
    """The nearest config file at or above ``start`` (a file or a folder)."""
    start = Path(os.path.abspath(start))
    folder = start if start.is_dir() else start.parent
    for candidate_dir in [folder, *folder.parents]:
        for name in CONFIG_FILENAMES:
            candidate = candidate_dir / name
            if candidate.is_file() and options_in(candidate) is not None:
                return candidate
    return None


def settings_from_options(options: Mapping[str, Any], *, root: Path, source: str) -> Settings:
    """Build Settings from a gradwarden table (keys as in the file)."""

    def where(key: str) -> str:
        return f"{source}: `{key}`"

    for key in options:
        if key not in KNOWN_KEYS:
            import difflib

            hint = difflib.get_close_matches(key.replace("_", "-"), KNOWN_KEYS, n=1)
            extra = f" (did you mean `{hint[0]}`?)" if hint else ""
            raise ConfigError(f"{source}: unknown option `{key}`{extra}")
    layer = _make_layer(
        select=options.get("select"),
        extend_select=options.get("extend-select", ()),
        ignore=options.get("ignore", ()),
        severity=options.get("severity", {}),
        where=where,
    )
    root = Path(os.path.abspath(root))
    exclude_patterns = (
        _strings(options["exclude"], where("exclude")) if "exclude" in options else list(DEFAULT_EXCLUDE)
    )
    exclude = [PathGlob.make(p, root) for p in exclude_patterns]
    exclude += [PathGlob.make(p, root) for p in _strings(options.get("extend-exclude", ()), where("extend-exclude"))]
    pfi: List[Tuple[PathGlob, Tuple[str, ...]]] = []
    table = options.get("per-file-ignores", {})
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where('per-file-ignores')}: expected a table of glob = [codes], got {table!r}")
    for pattern, codes in table.items():
        w = f"{where('per-file-ignores')} for `{pattern}`"
        pfi.append((PathGlob.make(pattern, root), tuple(check_selector(c, w) for c in _strings(codes, w))))
    respect = options.get("respect-gitignore", True)
    if not isinstance(respect, bool):
        raise ConfigError(f"{where('respect-gitignore')}: expected true or false, got {respect!r}")
    jobs = options.get("jobs")
    if jobs is not None:
        _check_jobs(jobs, where("jobs"))
    fail_on = parse_severity(options["fail-on"], where("fail-on")) if "fail-on" in options else Severity.WARNING
    return Settings(
        root=root,
        config_file=None,
        layers=(layer,),
        per_file_ignores=tuple(pfi),
        exclude=tuple(exclude),
        respect_gitignore=respect,
        jobs=jobs,
        fail_on=fail_on,
    )


def default_settings(root: Optional[Path] = None) -> Settings:
    return settings_from_options({}, root=Path(root or os.getcwd()), source="defaults")


def load_settings(start: Optional[Path] = None, explicit: Optional[Path] = None) -> Settings:
    """Settings for checking ``start`` (a file or folder; default: the working directory).

    ``explicit`` names the config file to use instead of searching (for a pyproject.toml it
    must hold a ``[tool.gradwarden]`` table, or it contributes nothing). Raises ConfigError.
    """
    if explicit is not None:
        path = Path(os.path.abspath(explicit))
        if not path.is_file():
            raise ConfigError(f"config file {explicit} does not exist")
    else:
        found = find_config(start if start is not None else Path(os.getcwd()))
        if found is None:
            return default_settings(Path(os.getcwd()))
        path = found
    options = options_in(path)
    settings = settings_from_options(options or {}, root=path.parent, source=str(path))
    return replace(settings, config_file=path)


def parse_inline_option(text: str) -> Dict[str, Any]:
    """``KEY = VALUE`` in TOML (the command line's ``--config 'select = ["GW2"]'``)."""
    tomllib = _toml()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"--config {text!r} is neither a file nor a valid TOML `key = value`: {exc}") from exc
    data = _dotted_gradwarden(data)
    return data


def _dotted_gradwarden(data: Dict[str, Any]) -> Dict[str, Any]:
    tool = data.get("tool")
    if set(data) == {"tool"} and isinstance(tool, dict) and set(tool) == {"gradwarden"}:
        inner = tool["gradwarden"]
        if isinstance(inner, dict):
            return inner
    return data


def apply_inline_options(settings: Settings, options: Mapping[str, Any], *, source: str = "--config") -> Settings:
    """Layer ``options`` (file keys) over ``settings``; relative globs anchor at the working directory."""
    for key in options:
        if key not in KNOWN_KEYS:
            import difflib

            hint = difflib.get_close_matches(key.replace("_", "-"), KNOWN_KEYS, n=1)
            extra = f" (did you mean `{hint[0]}`?)" if hint else ""
            raise ConfigError(f"{source}: unknown option `{key}`{extra}")
    new = settings.override(
        select=options.get("select"),
        extend_select=options.get("extend-select", ()),
        ignore=options.get("ignore", ()),
        severity=options.get("severity"),
        exclude=options.get("exclude"),
        extend_exclude=options.get("extend-exclude", ()),
        respect_gitignore=_bool_or_none(options.get("respect-gitignore"), f"{source}: `respect-gitignore`"),
        jobs=options.get("jobs"),
        fail_on=options.get("fail-on"),
        source=source,
    )
    if "per-file-ignores" in options:
        extra = settings_from_options(
            {"per-file-ignores": options["per-file-ignores"]}, root=Path(os.getcwd()), source=source
        )
        new = replace(new, per_file_ignores=new.per_file_ignores + extra.per_file_ignores)
    return new


def _bool_or_none(value: Any, where: str) -> Optional[bool]:
    if value is None or isinstance(value, bool):
        return value
    raise ConfigError(f"{where}: expected true or false, got {value!r}")
