"""Settings: config discovery, validation, rule selection, severities, exclusions; and the
.gitignore / glob matching of discovery.py."""
from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from gradwarden.config import (
    ConfigError,
    Settings,
    apply_inline_options,
    default_settings,
    find_config,
    load_settings,
    parse_inline_option,
)
from gradwarden.discovery import (
    GitIgnore,
    PathGlob,
    compile_glob,
    discover,
    display_path,
    parse_gitignore_line,
)
from gradwarden.engine.diagnostic import Diagnostic, Severity, Span
from gradwarden.rules import all_rules


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def diag(code: str, filename: str = "f.py", severity: Severity = Severity.ERROR) -> Diagnostic:
    return Diagnostic(code, "msg", severity, filename, Span(1, 1, 1, 2))


ALL_CODES = [r.code for r in all_rules()]


# --------------------------------------------------------------------------- discovery of config files
def test_no_config_gives_defaults(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = load_settings(tmp_path)
    assert s.config_file is None
    assert s.respect_gitignore is True
    assert s.jobs is None
    assert s.enabled_codes() == ALL_CODES
    assert s.is_excluded(tmp_path / ".venv") and s.is_excluded(tmp_path / "node_modules")


def test_nearest_pyproject_with_table_wins(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.gradwarden]\nselect = ["GW2"]\n')
    write(tmp_path / "pkg" / "pyproject.toml", "[project]\nname = 'x'\n")  # no table: skipped
    deep = tmp_path / "pkg" / "sub"
    deep.mkdir(parents=True)
    assert find_config(deep) == tmp_path / "pyproject.toml"
    s = load_settings(deep / "mod.py")
    assert s.config_file == tmp_path / "pyproject.toml"
    assert s.root == tmp_path
    assert s.enabled_codes() == ["GW001"] + [c for c in ALL_CODES if c.startswith("GW2")]
    assert not s.is_enabled("GW401")


def test_nearer_config_shadows_farther(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.gradwarden]\nselect = ["GW2"]\n')
    write(tmp_path / "pkg" / "pyproject.toml", '[tool.gradwarden]\nselect = ["GW4"]\n')
    s = load_settings(tmp_path / "pkg")
    assert s.is_enabled("GW401") and not s.is_enabled("GW201")


def test_gradwarden_toml_top_level_keys(tmp_path):
    write(tmp_path / "gradwarden.toml", 'ignore = ["GW404"]\n')
    s = load_settings(tmp_path)
    assert s.config_file == tmp_path / "gradwarden.toml"
    assert not s.is_enabled("GW404") and s.is_enabled("GW401")


def test_explicit_config_file(tmp_path):
    cfg = write(tmp_path / "elsewhere" / "my.toml", 'select = ["GW5"]\n')
    write(tmp_path / "pyproject.toml", '[tool.gradwarden]\nselect = ["GW2"]\n')
    s = load_settings(tmp_path, cfg)
    assert s.config_file == cfg
    assert s.is_enabled("GW501") and not s.is_enabled("GW201")


def test_explicit_pyproject_uses_its_table(tmp_path):
    cfg = write(tmp_path / "pyproject.toml", '[tool.gradwarden]\nignore = ["GW1"]\n')
    assert not load_settings(None, cfg).is_enabled("GW101")


def test_explicit_missing_config(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path, tmp_path / "nope.toml")


# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "body, fragment",
    [
        ('selec = ["GW2"]', "unknown option `selec` (did you mean `select`?)"),
        ('extend_select = ["GW2"]', "did you mean `extend-select`?"),
        ('select = "GW2"', "`select`: expected a list of strings"),
        ('select = ["GW9"]', "`select`: unknown rule selector `GW9`"),
        ('ignore = ["XYZ1"]', "`ignore`: unknown rule selector"),
        ('extend-select = [1]', "`extend-select`: expected a list of strings"),
        ('severity = { GW404 = "loud" }', "`severity` for `GW404`: invalid severity 'loud'"),
        ('severity = { GW999 = "error" }', "`severity`: unknown rule selector `GW999`"),
        ('severity = "error"', "`severity`: expected a table"),
        ('respect-gitignore = "yes"', "`respect-gitignore`: expected true or false"),
        ('jobs = -1', "`jobs`: expected a non-negative integer"),
        ('jobs = "4"', "`jobs`: expected a non-negative integer"),
        ('exclude = "build"', "`exclude`: expected a list of strings"),
        ('per-file-ignores = { "tests/*" = ["GW9"] }', "`per-file-ignores` for `tests/*`: unknown rule selector"),
        ('select = [', "is not valid TOML"),
    ],
)
def test_bad_config_names_the_key(tmp_path, body, fragment):
    cfg = write(tmp_path / "pyproject.toml", "[tool.gradwarden]\n" + body + "\n")
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path)
    assert fragment in str(info.value)
    assert str(cfg) in str(info.value)


def test_table_must_be_a_table(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool]\ngradwarden = 3\n')
    with pytest.raises(ConfigError, match=r"\[tool.gradwarden\] must be a table"):
        load_settings(tmp_path)


# --------------------------------------------------------------------------- selection
def sel(**layer) -> Settings:
    return default_settings().override(**layer)


def test_default_selects_everything():
    assert default_settings().enabled_codes() == ALL_CODES


def test_select_prefix_and_all():
    s = sel(select=["GW2", "gw401"])
    assert s.is_enabled("GW201") and s.is_enabled("GW202") and s.is_enabled("GW401")
    assert not s.is_enabled("GW402") and not s.is_enabled("GW101")
    assert sel(select=["ALL"]).enabled_codes() == ALL_CODES


def test_more_specific_selector_wins_within_a_layer():
    s = sel(select=["GW2"], ignore=["GW201"])
    assert not s.is_enabled("GW201") and s.is_enabled("GW202")
    s = sel(select=["GW201"], ignore=["GW2"])
    assert s.is_enabled("GW201") and not s.is_enabled("GW202")
    s = sel(select=["ALL"], ignore=["GW4"])
    assert not s.is_enabled("GW401") and s.is_enabled("GW501")
    s = sel(select=["GW2"], ignore=["GW2"])  # same specificity: ignore wins
    assert not s.is_enabled("GW201")


def test_later_select_replaces_extend_select_adds():
    base = sel(select=["GW2"])
    assert base.override(select=["GW4"]).is_enabled("GW401")
    assert not base.override(select=["GW4"]).is_enabled("GW201")
    both = base.override(extend_select=["GW4"])
    assert both.is_enabled("GW401") and both.is_enabled("GW201") and not both.is_enabled("GW501")
    assert not base.override(ignore=["GW201"]).is_enabled("GW201")
    # a later extend-select re-enables what an earlier layer ignored
    assert sel(ignore=["GW201"]).override(extend_select=["GW2"]).is_enabled("GW201")


def test_parse_error_is_always_reported_unless_ignored_by_exact_code():
    assert sel(select=["GW2"]).is_enabled("GW001")
    assert sel(ignore=["ALL"]).is_enabled("GW001")
    assert sel(ignore=["GW0"]).is_enabled("GW001")
    assert not sel(ignore=["GW001"]).is_enabled("GW001")


def test_apply_filters_and_overrides_severity():
    s = sel(select=["GW2", "GW4"], severity={"GW4": "warning", "GW404": "hint", "gw201": "info"})
    out = s.apply([diag("GW201"), diag("GW401"), diag("GW404", severity=Severity.INFORMATION), diag("GW501")])
    assert [(d.code, d.severity) for d in out] == [
        ("GW201", Severity.INFORMATION),
        ("GW401", Severity.WARNING),
        ("GW404", Severity.HINT),  # the more specific key wins
    ]


def test_later_severity_layer_wins():
    s = sel(severity={"GW201": "hint"}).override(severity={"GW2": "warning"})
    assert s.severity_for("GW201", Severity.ERROR) == Severity.WARNING


def test_unknown_codes_follow_selectors():
    assert default_settings().is_enabled("GW999")
    assert not sel(select=["GW2"]).is_enabled("GW999")


def test_override_validates():
    with pytest.raises(ConfigError, match="command line: `select`: unknown rule selector `NOPE`"):
        sel(select=["NOPE"])
    with pytest.raises(ConfigError, match="invalid severity"):
        sel(severity={"GW201": "fatal"})
    with pytest.raises(ConfigError, match="jobs"):
        sel(jobs=-2)


def test_per_file_ignores(tmp_path, monkeypatch):
    write(tmp_path / "pyproject.toml", """
        [tool.gradwarden]
        per-file-ignores = { "tests/*" = ["GW4"], "legacy.py" = ["ALL"] }
    """)
    monkeypatch.chdir(tmp_path)
    s = load_settings(tmp_path)
    out = s.apply([
        diag("GW401", "tests/test_a.py"), diag("GW201", "tests/test_a.py"),
        diag("GW401", "src/a.py"), diag("GW201", "pkg/legacy.py"), diag("GW001", "pkg/legacy.py"),
    ])
    assert [(d.code, d.filename) for d in out] == [
        ("GW201", "tests/test_a.py"), ("GW401", "src/a.py"), ("GW001", "pkg/legacy.py"),
    ]


def test_inline_options(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = apply_inline_options(default_settings(), parse_inline_option('select = ["GW4"]'))
    assert s.is_enabled("GW401") and not s.is_enabled("GW201")
    s = apply_inline_options(s, parse_inline_option('tool.gradwarden.respect-gitignore = false'))
    assert s.respect_gitignore is False
    with pytest.raises(ConfigError, match="unknown option `nope`"):
        apply_inline_options(s, parse_inline_option("nope = 1"))
    with pytest.raises(ConfigError, match="neither a file nor a valid TOML"):
        parse_inline_option("select = [")


def test_jobs_and_respect_gitignore_from_config(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.gradwarden]\njobs = 3\nrespect-gitignore = false\n")
    s = load_settings(tmp_path)
    assert s.jobs == 3 and s.respect_gitignore is False
    assert s.override(jobs=1, respect_gitignore=True).jobs == 1


# --------------------------------------------------------------------------- exclusions
def test_exclude_replaces_defaults_extend_exclude_adds(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.gradwarden]\nexclude = ["gen"]\nextend-exclude = ["*_pb2.py", "third_party/**"]\n')
    s = load_settings(tmp_path)
    assert s.is_excluded(tmp_path / "a" / "gen")
    assert not s.is_excluded(tmp_path / ".venv")  # defaults replaced
    assert s.is_excluded(tmp_path / "x" / "m_pb2.py")
    assert s.is_excluded(tmp_path / "third_party" / "a" / "b.py")
    assert not s.is_excluded(tmp_path / "src" / "third_party.py")


def test_path_glob_semantics(tmp_path):
    name = PathGlob.make("build", tmp_path)
    assert name.matches(tmp_path / "build") and name.matches(tmp_path / "a" / "build")
    rel = PathGlob.make("src/gen/*.py", tmp_path)
    assert rel.matches(tmp_path / "src" / "gen" / "x.py")
    assert not rel.matches(tmp_path / "other" / "src" / "gen" / "x.py")
    assert not rel.matches(tmp_path / "src" / "gen" / "d" / "x.py")
    assert PathGlob.make("./src", tmp_path).matches(tmp_path / "src")
    assert not PathGlob.make("./src", tmp_path).matches(tmp_path / "a" / "src")
    deep = PathGlob.make("**/fixtures/**", tmp_path)
    assert deep.matches(tmp_path / "a" / "fixtures" / "b.py")
    assert deep.matches(tmp_path / "fixtures" / "b.py")


# --------------------------------------------------------------------------- globs and .gitignore
@pytest.mark.parametrize(
    "pattern, path, matches",
    [
        ("*.py", "a.py", True),
        ("*.py", "d/a.py", False),  # * does not cross /
        ("a?c", "abc", True),
        ("a?c", "a/c", False),
        ("[ab]x", "bx", True),
        ("[!ab]x", "cx", True),
        ("[!ab]x", "ax", False),
        ("[^ab]x", "ax", False),
        ("[a-c]x", "bx", True),
        ("**/x", "x", True),
        ("**/x", "a/b/x", True),
        ("a/**", "a/b/c", True),
        ("a/**", "a", False),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("a**b", "axxb", True),
        ("a**b", "ax/xb", False),
        (r"\*x", "*x", True),
        (r"\*x", "ax", False),
        ("[x", "[x", True),
        ("a.b", "axb", False),
    ],
)
def test_glob(pattern, path, matches):
    assert (compile_glob(pattern).fullmatch(path) is not None) is matches


def gi(tmp_path: Path, text: str) -> GitIgnore:
    return GitIgnore.from_text(tmp_path, textwrap.dedent(text))


def test_gitignore_line_parsing():
    assert parse_gitignore_line("") is None
    assert parse_gitignore_line("   ") is None
    assert parse_gitignore_line("# comment") is None
    r = parse_gitignore_line("!keep.py")
    assert r.negate and not r.dir_only and not r.anchored
    r = parse_gitignore_line("/build/")
    assert r.dir_only and r.anchored and r.regex.fullmatch("build")
    r = parse_gitignore_line("doc/frotz")
    assert r.anchored
    r = parse_gitignore_line(r"\#notacomment")
    assert r.regex.fullmatch("#notacomment")
    r = parse_gitignore_line(r"\!bang")
    assert not r.negate and r.regex.fullmatch("!bang")
    assert parse_gitignore_line("trailing   ").regex.fullmatch("trailing")
    assert parse_gitignore_line("space\\ ").regex.fullmatch("space ")


def test_gitignore_matching(tmp_path):
    ig = gi(tmp_path, """
        # generated code
        *.gen.py
        /top_only.py
        logs/
        docs/build
        !important.gen.py
        **/cache/**
    """)
    t = tmp_path
    assert ig.match(t / "a.gen.py", False) is True
    assert ig.match(t / "deep" / "b.gen.py", False) is True
    assert ig.match(t / "important.gen.py", False) is False  # re-included
    assert ig.match(t / "top_only.py", False) is True
    assert ig.match(t / "sub" / "top_only.py", False) is None  # anchored
    assert ig.match(t / "logs", True) is True
    assert ig.match(t / "sub" / "logs", True) is True
    assert ig.match(t / "logs", False) is None  # dir-only rule, file named logs
    assert ig.match(t / "docs" / "build", True) is True
    assert ig.match(t / "x" / "docs" / "build", True) is None
    assert ig.match(t / "a" / "cache" / "m.py", False) is True
    assert ig.match(t / "ok.py", False) is None
    assert ig.match(tmp_path.parent / "a.gen.py", False) is None  # outside its folder


def test_gitignore_last_rule_wins(tmp_path):
    ig = gi(tmp_path, "!a.py\n*.py\n")
    assert ig.match(tmp_path / "a.py", False) is True
    ig = gi(tmp_path, "*.py\n!a.py\n")
    assert ig.match(tmp_path / "a.py", False) is False


# --------------------------------------------------------------------------- the walk
def tree(root: Path, files) -> None:
    for f in files:
        write(root / f, "x = 1\n")


def rels(found, root: Path):
    return [p.relative_to(root).as_posix() for p in found.files]


def test_walk_defaults(tmp_path):
    tree(tmp_path, ["a.py", "b.txt", "pkg/c.py", "pkg/d.pyi", ".venv/e.py", "venv/f.py", "node_modules/g.py",
                    "build/h.py", "dist/i.py", ".tox/j.py", "x/site-packages/k.py", "pkg/__pycache__/l.py",
                    ".git/m.py", ".github/n.py"])
    s = default_settings(tmp_path)
    found = discover([tmp_path], exclude=s.exclude)
    assert rels(found, tmp_path) == [".github/n.py", "a.py", "pkg/c.py"]


def test_walk_respects_gitignore_in_git_repo(tmp_path):
    (tmp_path / ".git" / "info").mkdir(parents=True)
    write(tmp_path / ".git" / "info" / "exclude", "excluded_by_info.py\n")
    write(tmp_path / ".gitignore", "generated/\n*.tmp.py\n!keep.tmp.py\n/rootonly.py\n")
    write(tmp_path / "src" / ".gitignore", "local.py\n")
    tree(tmp_path, ["a.py", "generated/b.py", "src/x.tmp.py", "src/keep.tmp.py", "src/local.py", "src/ok.py",
                    "rootonly.py", "src/rootonly.py", "excluded_by_info.py", "other/local.py"])
    found = discover([tmp_path], exclude=default_settings(tmp_path).exclude)
    assert rels(found, tmp_path) == ["a.py", "other/local.py", "src/keep.tmp.py", "src/ok.py", "src/rootonly.py"]
    # a subfolder named on the command line still sees the parents' .gitignore
    sub = discover([tmp_path / "src"], exclude=())
    assert rels(sub, tmp_path) == ["src/keep.tmp.py", "src/ok.py", "src/rootonly.py"]
    # and the walk can ignore .gitignore altogether
    everything = discover([tmp_path], exclude=(), respect_gitignore=False)
    assert "generated/b.py" in rels(everything, tmp_path)
    assert "src/local.py" in rels(everything, tmp_path)


def test_deeper_gitignore_overrides(tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path / ".gitignore", "*.py\n")
    write(tmp_path / "keep" / ".gitignore", "!*.py\n")
    tree(tmp_path, ["a.py", "keep/b.py"])
    assert rels(discover([tmp_path]), tmp_path) == ["keep/b.py"]


def test_walk_named_paths_bypass_exclusions(tmp_path):
    tree(tmp_path, ["build/a.py", "build/sub/b.py", "script", ".venv/c.py"])
    s = default_settings(tmp_path)
    found = discover([tmp_path / "build", tmp_path / "script", tmp_path / ".venv" / "c.py"], exclude=s.exclude)
    assert rels(found, tmp_path) == [".venv/c.py", "build/a.py", "build/sub/b.py", "script"]


def test_walk_named_file_bypasses_gitignore(tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path / ".gitignore", "ignored.py\n")
    tree(tmp_path, ["ignored.py"])
    assert rels(discover([tmp_path / "ignored.py"]), tmp_path) == ["ignored.py"]
    assert rels(discover([tmp_path]), tmp_path) == []


def test_walk_missing_and_duplicates(tmp_path):
    tree(tmp_path, ["a.py"])
    found = discover([tmp_path, tmp_path / "a.py", tmp_path / "nope.py"])
    assert rels(found, tmp_path) == ["a.py"]
    assert found.missing == [str(tmp_path / "nope.py")]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
def test_walk_does_not_follow_symlinked_folders(tmp_path):
    tree(tmp_path, ["real/a.py"])
    try:
        os.symlink(tmp_path / "real", tmp_path / "link", target_is_directory=True)
    except OSError:
        pytest.skip("cannot create symlinks here")
    assert rels(discover([tmp_path]), tmp_path) == ["real/a.py"]


def test_display_path(tmp_path):
    assert display_path(tmp_path / "a" / "b.py", cwd=tmp_path) == os.path.join("a", "b.py")
    outside = tmp_path.parent / "x.py"
    assert display_path(outside, cwd=tmp_path) == str(outside)
