"""Import answers kept for a whole ``check`` run (``entry.files_fixed``): what each analysis
finds and records for the result cache is what it found and recorded without them, and nothing
is kept past the run (a file created afterwards is found). Facts only: the files each analysis
records, the diagnostics, whether the answers are held."""
from __future__ import annotations

import textwrap
from pathlib import Path

from gradwarden.engine import entry
from gradwarden.engine.analyze import analyze_source
from gradwarden.engine.front import imports

MODELS = textwrap.dedent("""
    import torch
    from missing_helpers import nothing  # looked for, absent (asked by this module in every analysis)
    def bump(t):
        t.add_(1)
        return t
""")
SCRIPT = textwrap.dedent("""
    import torch
    from models import bump
    if __name__ == "__main__":
        w = torch.ones(3, requires_grad=True)
        y = w.sigmoid()
        bump(y)
        y.sum().backward()
""")


def _project(tmp_path: Path) -> list:
    (tmp_path / "pyproject.toml").write_text("[project]\nname='p'\n")
    (tmp_path / "models.py").write_text(MODELS)
    scripts = []
    for name in ("train_a.py", "train_b.py"):
        (tmp_path / name).write_text(SCRIPT)
        scripts.append(tmp_path / name)
    return scripts


def _analyse(scripts: list) -> list:
    out = []
    for path in scripts:
        with imports.following() as followed:
            diags = analyze_source(path.read_bytes(), str(path))
        out.append((sorted((d.code, d.span.row) for d in diags), dict(followed)))
    return out


def test_kept_answers_give_each_analysis_the_same_findings_and_recorded_files(tmp_path):
    scripts = _project(tmp_path)
    alone = _analyse(scripts)
    assert entry.run_answers() is None
    with entry.files_fixed():
        kept = _analyse(scripts)
        assert entry.run_answers(), "the run keeps the answers the first analysis found"
    assert entry.run_answers() is None
    assert kept == alone
    codes, followed = alone[1]
    assert codes, "the script's hazard in the imported helper is found"
    assert str((tmp_path / "models.py").resolve()) in followed
    assert any(v is None and "missing_helpers" in k for k, v in followed.items()), \
        "the absent module's probes are recorded for the second analysis too"


def test_nothing_is_kept_past_the_run(tmp_path):
    scripts = _project(tmp_path)
    with entry.files_fixed():
        _analyse(scripts[:1])
    (tmp_path / "missing_helpers.py").write_text("def nothing():\n    return 1\n")
    with entry.files_fixed():
        (_, followed), = _analyse(scripts[1:])
    assert followed.get(str((tmp_path / "missing_helpers.py").resolve())) is not None


def test_a_followed_module_is_read_once_per_run_and_afresh_in_the_next(tmp_path, monkeypatch):
    scripts = _project(tmp_path)
    models = (tmp_path / "models.py").resolve()
    reads = []
    real = Path.read_bytes

    def counted(self):
        if self == models:
            reads.append(self)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", counted)
    with entry.files_fixed():
        first = _analyse(scripts)
    assert len(reads) == 1, "the two analyses of the run read the imported module once"
    assert [codes for codes, _ in first] == [codes for codes, _ in _analyse(scripts)]
    # edited between runs: the next run reads it again and sees the edit (no write in place)
    (tmp_path / "models.py").write_text(MODELS.replace("t.add_(1)", "t = t + 1"))
    with entry.files_fixed():
        second = _analyse(scripts[:1])
    assert len(reads) == 1 + 2 + 1
    assert first[0][0] and not second[0][0], "the edited module's text is the one analysed"
    assert second[0][1][str(models)] != first[0][1][str(models)], "its new bytes are recorded"


def test_one_resolver_per_followed_module_in_an_analysis(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname='p'\n")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .a import f\nfrom .b import g\nfrom .a import h\nfrom . import b\n")
    (pkg / "a.py").write_text("import torch\nfrom .b import g\ndef f(t):\n    return g(t)\ndef h(t):\n    return t\n")
    (pkg / "b.py").write_text("import torch\nimport os\ndef g(t):\n    t.add_(1)\n    return t\n")
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.replace("from models import bump", "from pkg import f as bump, b, h"))
    made = []
    real = imports.ImportResolver.__init__

    def counted(self, filename, *args, **kwargs):
        made.append(filename)
        real(self, filename, *args, **kwargs)

    monkeypatch.setattr(imports.ImportResolver, "__init__", counted)
    diags = analyze_source(script.read_bytes(), str(script))
    assert [(d.code, d.span.row) for d in diags] == [("GW201", 4)], "the write in place in pkg/b.py is found"
    followed = [f for f in made if f != str(script)]
    assert len(followed) >= 2 and len(set(followed)) == len(followed), \
        "each followed module's imports are resolved by one resolver, made once"
