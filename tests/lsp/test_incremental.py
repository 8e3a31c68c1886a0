"""Incremental analysis (``engine/incremental.py``): an edit re-analyses only the top-level
statements it can change; the diagnostics always equal a full analysis. Counts and equality,
never durations (the speed is benchmarks/bench_lsp.py's business)."""
from __future__ import annotations

import random
import textwrap
from pathlib import Path
from typing import Optional

import pytest

from gradwarden.engine.analyze import analyze_source
from gradwarden.engine.incremental import IncrementalAnalyzer, sort_key

from lsp_session import cases_dir

MODULE = textwrap.dedent("""\
    import torch


    def leaf_update(w):
        w += 1
        return w


    def saved(x):
        y = torch.sigmoid(x)
        y += 1
        return y


    def caller(x):
        return saved(x) * 2


    class Block(torch.nn.Module):
        def forward(self, x):
            h = torch.relu(x)
            h += 1
            return h
""")


def facts(diags):
    return [(d.code, d.span, d.message, d.related, d.fixes, d.timeline) for d in diags]


def full(text: str, name: str = "m.py"):
    return sorted(analyze_source(text, name), key=sort_key)


def test_an_edit_reanalyses_its_definition_and_what_depends_on_it():
    inc = IncrementalAnalyzer()
    assert facts(inc.analyze(MODULE, "m.py")) == facts(full(MODULE))
    first = inc.last_stats
    assert first.analysed_groups == first.groups >= 3 and first.reused_groups == 0
    # Inside leaf_update: only it.
    text = MODULE.replace("    w += 1\n", "    w += 2\n")
    assert facts(inc.analyze(text, "m.py")) == facts(full(text))
    assert sorted(inc.last_stats.analysed) == ["leaf_update"]
    # Inside saved: saved and its caller (they are analysed together), nothing else.
    text = text.replace("    y += 1\n", "    y = y + 1\n")
    assert facts(inc.analyze(text, "m.py")) == facts(full(text))
    assert sorted(inc.last_stats.analysed) == ["caller", "saved"]
    assert "Block" in inc.last_stats.reused and "leaf_update" in inc.last_stats.reused
    # Lines added on top move everything: nothing is re-analysed, every row follows.
    moved = "# a comment\n\n" + text
    got = inc.analyze(moved, "m.py")
    assert inc.last_stats.analysed == [] and inc.last_stats.reused_groups == inc.last_stats.groups
    assert facts(got) == facts(full(moved))
    assert {d.span.row for d in got} == {d.span.row + 2 for d in full(text)}
    # A method of the class: the class.
    edited = moved.replace("h += 1", "h += 3")
    assert facts(inc.analyze(edited, "m.py")) == facts(full(edited))
    assert inc.last_stats.analysed == ["Block"]


def test_a_syntax_error_is_a_full_analysis():
    inc = IncrementalAnalyzer()
    inc.analyze(MODULE, "m.py")
    broken = MODULE + "z = (\n"
    assert facts(inc.analyze(broken, "m.py")) == facts(full(broken))
    assert inc.last_stats.full and [d.code for d in inc.analyze(broken, "m.py")] == ["GW001"]


EDIT_LINES = ["y += 1", "x = torch.randn(3, requires_grad=True)", "y = torch.sigmoid(x)",
              "y.sum().backward()", "w = torch.zeros(2, requires_grad=True)", "w += 1", "", "# note",
              "    y += 1", "    return x", "def helper(a):", "    return a * 2", "torch.exp_(x)"]


def random_edit(rng: random.Random, text: str) -> str:
    lines = text.splitlines(keepends=True)
    row = rng.randrange(len(lines) + 1)
    op = rng.randrange(5)
    if op == 0 or not lines:  # insert a line (maybe a hazard, maybe breaking the syntax)
        lines.insert(row, rng.choice(EDIT_LINES) + "\n")
    elif op == 1:  # delete a line
        del lines[min(row, len(lines) - 1)]
    elif op == 2:  # duplicate a line
        r = min(row, len(lines) - 1)
        lines.insert(r, lines[r])
    elif op == 3:  # change a number or an operator on a line
        r = min(row, len(lines) - 1)
        lines[r] = lines[r].replace("1", "2", 1).replace("+=", "-=", 1)
    else:  # a blank line (moves what follows)
        lines.insert(row, "\n")
    return "".join(lines)


def corpus():
    root = cases_dir()
    files = sorted((root / "seeds").glob("*.py")) + sorted((root / "real").glob("*.py"))[:12]
    assert len(files) > 20, root
    return files


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_incremental_equals_full_over_random_edit_sequences(seed):
    rng = random.Random(seed)
    reused = analysed = 0
    for path in corpus():
        text = path.read_text(encoding="utf-8", errors="replace")
        inc = IncrementalAnalyzer()
        for step in range(6):
            got = inc.analyze(text, path.name)
            assert facts(got) == facts(full(text, path.name)), (path.name, seed, step)
            if not inc.last_stats.full:
                reused += inc.last_stats.reused_groups
                analysed += inc.last_stats.analysed_groups
            text = random_edit(rng, text)
    assert reused > 0 and analysed > 0  # both paths were exercised


# --------------------------------------------------------------------------- through the server
@pytest.mark.asyncio(loop_scope="module")
async def test_the_server_reanalyses_only_the_edited_definition(session):
    """A real client (VS Code, Neovim, Emacs profiles): an edit inside one function re-analyses
    that function only (serverStatus counts it); the diagnostics are the full analysis's."""
    from lsp_session import codes

    s = session
    doc = s.open(s.unique("incremental"), MODULE)
    want = sorted((d.code, d.span.row) for d in full(MODULE))
    await s.diagnostics(doc, lambda ds: sorted(codes(ds)) == want)
    text = MODULE.replace("    w += 1\n", "    w += 2\n")
    s.change(doc, text)
    want = sorted((d.code, d.span.row) for d in full(text))
    await s.diagnostics(doc, lambda ds: sorted(codes(ds)) == want)
    last = (await s.status())["timings"][-1]
    assert (last["analysed"], last["full"]) == (1, False), last
    assert last["reused"] >= 3, last
    s.close(doc)


# --------------------------------------------------------------------------- heavy files
def modeling_shape(n_blocks: int = 24) -> str:
    """A file shaped like a transformers ``modeling_*.py``: a logger and constants, helper
    functions, a base class every model class extends, blocks that use each other, forward
    passes with in-place updates (some hazards), and ``__all__``."""
    parts = [textwrap.dedent("""\
        import math
        from typing import Optional

        import torch
        from torch import nn

        from ...utils import logging

        logger = logging.get_logger(__name__)
        _CHECKPOINT = "org/model"


        def rotate_half(x):
            x1, x2 = x.chunk(2, dim=-1)
            return torch.cat((-x2, x1), dim=-1)


        def eager_attention_forward(module, query, key, value, mask: Optional[torch.Tensor] = None):
            weights = torch.matmul(query, key.transpose(2, 3)) / math.sqrt(query.shape[-1])
            if mask is not None:
                weights = weights + mask
            weights = nn.functional.softmax(weights, dim=-1)
            return torch.matmul(weights, value), weights


        class ModelPreTrainedModel(nn.Module):
            def _init_weights(self, module):
                if isinstance(module, nn.Linear):
                    module.weight.data.normal_(mean=0.0, std=0.02)
    """)]
    for i in range(n_blocks):
        hazard = "        hidden = torch.sigmoid(hidden)\n        hidden += residual\n" if i % 5 == 0 else \
            "        hidden = hidden + residual\n"
        parts.append(textwrap.dedent(f"""\


            class ModelBlock{i}(nn.Module):
                def __init__(self, config):
                    super().__init__()
                    self.proj = nn.Linear(config.hidden_size, config.hidden_size)
                    self.norm = nn.LayerNorm(config.hidden_size)

                def forward(self, hidden, mask=None):
                    residual = hidden
                    hidden = self.norm(hidden)
                    q = rotate_half(self.proj(hidden))
                    hidden, _ = eager_attention_forward(self, q, q, q, mask)
        """) + hazard + "        return hidden\n")
    parts.append(textwrap.dedent(f"""\


        class ModelModel(ModelPreTrainedModel):
            def __init__(self, config):
                super().__init__()
                self.blocks = nn.ModuleList([{", ".join(f"ModelBlock{i}(config)" for i in range(n_blocks))}])

            def forward(self, hidden):
                for block in self.blocks:
                    hidden = block(hidden)
                return hidden


        __all__ = ["ModelModel", "ModelPreTrainedModel"]
    """))
    return "".join(parts)


def real_modeling_file() -> Optional[str]:
    """transformers 5.23.0's modeling_edgetam_video.py (3,190 lines), when the wheel the
    benchmarks use is on this machine (never downloaded by a test)."""
    import zipfile

    here = Path(__file__).resolve()
    for folder in (here.parents[2] / "benchmarks" / ".cache" / "downloads", here.parents[3] / "trees" / "cache" / "downloads"):
        for whl in sorted(folder.glob("transformers-5.23.0-*.whl")):
            with zipfile.ZipFile(whl) as z:
                return z.read("transformers/models/edgetam_video/modeling_edgetam_video.py").decode("utf-8")
    return None


@pytest.mark.parametrize("shape", ["modeling-shape", "edgetam_video"])
def test_incremental_equals_full_on_a_heavy_modeling_file(shape):
    """The random edit sequences, on a heavy file of the shape the issue names (the real one
    when its wheel is here): the same diagnostics as a full analysis after every edit."""
    text = modeling_shape() if shape == "modeling-shape" else real_modeling_file()
    if text is None:
        pytest.skip("the transformers 5.23.0 wheel is not on this machine")
    rng = random.Random(12)
    inc = IncrementalAnalyzer()
    flagged = 0
    for step in range(5):
        got = inc.analyze(text, "modeling_x.py")
        want = full(text, "modeling_x.py")
        assert facts(got) == facts(want), (shape, step)
        flagged += len(want)
        text = random_edit(rng, text)
    assert flagged > 0
