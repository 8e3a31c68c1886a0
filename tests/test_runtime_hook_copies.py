"""The runtime bridge on a forward hook's dict read under a second name (issue 24, batch 8): the
run shows GW721's premise (a slot overwritten by a second call of its module within a step) only
when nothing kept the first call's value; a copy of the dict made between the calls
(``dict(store)``, ``store.copy()``, ``{**store}``) keeps it, and the program is correct. Each
program runs under torch (without the static analysis: the premise alone is asserted)."""
from typing import Dict

import pytest

pytest.importorskip("torch")

from gradwarden.runtime import DebugResult  # noqa: E402
from runtime_runs import debug_runs, write_programs  # noqa: E402

PROGRAM = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    gen = nn.Linear(4, 4)
    disc = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    store = {}
    def keep(module, inputs, output):
        store["h"] = output
    disc[0].register_forward_hook(keep)
    x, real = torch.randn(3, 4), torch.randn(3, 4)
    disc(gen(x))
    fake = KEEP
    disc(real)
    loss = F.l1_loss(fake["h"], store["h"].detach())
    loss.backward()
"""

KEEPS = {"alias": "store", "dict_ok": "dict(store)", "copy_ok": "store.copy()", "splat_ok": "{**store}"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Dict[str, DebugResult]:
    programs = {name: PROGRAM.replace("KEEP", keep) for name, keep in KEEPS.items()}
    return debug_runs(write_programs(programs, tmp_path_factory.mktemp("hookcopies")), static=False)


def test_aliased_hook_dict_shows_the_overwrite(runs):
    result = runs["alias"]
    assert result.status == "ok", result.message
    [p] = [p for p in result.premises if p.code == "GW721"]
    assert p.row == 8  # the hook's store


@pytest.mark.parametrize("name", sorted(n for n in KEEPS if n.endswith("_ok")))
def test_copied_hook_dict_shows_nothing(runs, name):
    result = runs[name]
    assert result.status == "ok", result.message
    assert [p.code for p in result.premises] == [] and result.runtime_findings == []
