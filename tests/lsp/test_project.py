"""A finding made through another file of the workspace (issue 23), in every main client profile:
the helper that holds the write shows what the analysis of the script importing it found there
(the script's call in the related information, or folded into the message), the script does not
show it, and saving a fixed script clears it in the helper; an unsaved edit of the helper is what
the script's analysis sees."""
from __future__ import annotations

import pytest

from project_crossfile import CALL, HELPER, SCRIPT

pytestmark = pytest.mark.asyncio(loop_scope="module")

FIXED_SCRIPT = SCRIPT.replace(CALL,
                              "ban_tokens_([row.clone() for row in logits.unbind(0)], [[1], [2]])")


async def test_helper_shows_what_its_importer_found(session):
    s = session
    pkg = s.unique("xpkg", suffix="")
    s.path(pkg).mkdir()
    (s.path(pkg) / "__init__.py").write_text("")
    helper = s.open(f"{pkg}/sampling.py", HELPER)
    script = s.open(s.unique("xtrain"), SCRIPT.format(pkg=pkg))
    [d] = await s.diagnostics(helper, lambda ds: len(ds) == 1)
    assert d.code == "GW306" and d.range.start.line == 3, d
    script_name = script.uri.rsplit("/", 1)[-1]
    if s.related_support:
        assert any(r.location.uri == script.uri for r in d.related_information), d.related_information
    else:
        assert f"{script_name} line 6" in d.message, d.message
    # hover on the flagged write: the finding's story, its places in the script named by the script
    hover = await s.hover(helper, 3, 12)
    text = hover.contents.value if hover is not None and hasattr(hover.contents, "value") else str(hover)
    assert "unbind" in text and f"`{script_name}`" in text, text
    # the script shows only what lies in it
    assert await s.diagnostics(script, lambda ds: len(ds) == 0) == []
    # the helper's unsaved text is what counts: an edit that removes the write clears it
    s.change(helper, HELPER.replace("row[ids] = -1.0", "pass"))
    await s.diagnostics(helper, lambda ds: len(ds) == 0)
    s.change(helper, HELPER)
    await s.diagnostics(helper, lambda ds: len(ds) == 1)
    # a saved fix of the script clears it in the helper
    s.change(script, FIXED_SCRIPT.format(pkg=pkg))
    s.save(script)
    assert await s.diagnostics(helper, lambda ds: len(ds) == 0) == []
    s.close(helper)
    s.close(script)


# A write on a saved activation in a helper module, run by the script through a non-reentrant
# checkpoint (nothing raises, the gradients are wrong: tests/test_checkpoint_recompute.py runs both
# under torch). The helper analysed alone assumes its callers' backward and would call it an error
# that "will raise"; the script's analysis ran the checkpoint. The helper shows the script's finding.
GATE = """import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        g = torch.tanh(self.lin(x))
        g.mul_(0.5)
        return x * g
"""
GATE_SCRIPT = """import torch
from torch.utils.checkpoint import checkpoint
from {pkg}.gate import Gate

net = Gate()
x = torch.randn(3, 4, requires_grad=True)
y = checkpoint(net, x, use_reentrant=False)
y.sum().backward()
"""


async def test_helper_shows_the_severity_of_the_program_that_runs_it(session):
    s = session
    pkg = s.unique("ypkg", suffix="")
    s.path(pkg).mkdir()
    (s.path(pkg) / "__init__.py").write_text("")
    # the script exists before the helper is opened (a file that appears on disk later is picked
    # up at its save, which refreshes the other open documents)
    script = s.open(s.unique("ytrain"), GATE_SCRIPT.format(pkg=pkg))
    helper = s.open(f"{pkg}/gate.py", GATE)
    [d] = await s.diagnostics(helper, lambda ds: len(ds) == 1 and ds[0].severity == 2)
    assert d.code == "GW201" and d.range.start.line == 11, d
    assert "does not raise" in d.message and "will raise" not in d.message, d.message
    s.close(helper)
    s.close(script)
