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
