"""The runtime bridge on loss terms that carry no gradient (runtime/child/deadterms.py, GW722's
premise): a forward hook that keeps a module's output as ``o.data`` (through
``dict.__setitem__`` in a lambda) whose maps make a term of the loss, and a value loss written
inside the ``torch.no_grad()`` block that computes the targets. The run shows the premise (the
backwarded loss adds a constant computed from a copy that left the graph) at the line where the
copy was made, or where the term was last computed under ``no_grad``. A term computed from the
copy (new values: a penalty over the hook's maps, a loss computed in the block) is the run's own
finding (no correct program backwards a constant made from its model's outputs); the copy itself
added (`aux - aux.detach()`, a straight-through trick on a loss) and a number read from a value
only confirm the static GW722 there. Each has a correct twin, and copies used as factors
(advantages, a TD target inside a squared error, detached real features) are no term.
The comments say what torch does (ground truth: run the file plainly)."""
from __future__ import annotations

from typing import Dict

import pytest

pytest.importorskip("torch")

from gradwarden.runtime import DebugResult  # noqa: E402
from runtime_runs import debug_runs, site_rows, write_programs  # noqa: E402

PROGRAMS: Dict[str, str] = {
    # the student's hook keeps `o.data` (line 7): `at` has no graph (at.requires_grad is False),
    # the loss of line 11 backpropagates exactly as the cross-entropy alone
    "hook_data": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        student = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        maps = {}
        student[0].register_forward_hook(lambda m, i, o: maps.__setitem__("h", o.data))
        opt = torch.optim.SGD(student.parameters(), lr=0.1)
        for step in range(2):
            logits = student(torch.randn(5, 4))
            at = maps["h"].pow(2).mean()
            loss = F.cross_entropy(logits, torch.randint(0, 3, (5,))) + 10.0 * at
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "hook_data_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        student = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        maps = {}
        student[0].register_forward_hook(lambda m, i, o: maps.__setitem__("h", o))
        opt = torch.optim.SGD(student.parameters(), lr=0.1)
        for step in range(2):
            logits = student(torch.randn(5, 4))
            at = maps["h"].pow(2).mean()
            loss = F.cross_entropy(logits, torch.randint(0, 3, (5,))) + 10.0 * at
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the value loss (line 11) is computed in the block that makes the targets: the critic's
    # `.grad` stays None at every step while the actor trains
    "nograd_term": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        actor, critic = nn.Linear(4, 3), nn.Linear(4, 1)
        opt = torch.optim.Adam([*actor.parameters(), *critic.parameters()], lr=1e-3)
        for step in range(3):
            obs, rewards = torch.randn(6, 4), torch.randn(6)
            logp = actor(obs).log_softmax(-1)[:, 0]
            with torch.no_grad():
                values = critic(obs).squeeze(-1)
                value_loss = F.mse_loss(values, rewards)
                adv = rewards - values
            loss = -(logp * adv).mean() + 0.5 * value_loss
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the same, the term added in place (line 14)
    "nograd_term_inplace": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        actor, critic = nn.Linear(4, 3), nn.Linear(4, 1)
        opt = torch.optim.Adam([*actor.parameters(), *critic.parameters()], lr=1e-3)
        for step in range(3):
            obs, rewards = torch.randn(6, 4), torch.randn(6)
            logp = actor(obs).log_softmax(-1)[:, 0]
            with torch.no_grad():
                values = critic(obs).squeeze(-1)
                value_loss = F.mse_loss(values, rewards)
                adv = rewards - values
            loss = -(logp * adv).mean()
            loss += 0.5 * value_loss
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "nograd_term_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        actor, critic = nn.Linear(4, 3), nn.Linear(4, 1)
        opt = torch.optim.Adam([*actor.parameters(), *critic.parameters()], lr=1e-3)
        for step in range(3):
            obs, rewards = torch.randn(6, 4), torch.randn(6)
            logp = actor(obs).log_softmax(-1)[:, 0]
            values = critic(obs).squeeze(-1)
            value_loss = F.mse_loss(values, rewards)
            with torch.no_grad():
                adv = rewards - values
            loss = -(logp * adv).mean()
            loss += 0.5 * value_loss
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # `encode` runs under its decorator (line 8) at every call: the contrastive term of line 15
    # is a constant, `proj` never gets a gradient; the fix removes the decorator
    "decorated": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.body, self.proj, self.cls = nn.Linear(6, 8), nn.Linear(8, 8), nn.Linear(8, 3)
            @torch.no_grad()
            def encode(self, x):
                return F.normalize(self.proj(self.body(x)), dim=-1)
        model = Encoder()
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        for step in range(2):
            a, b, y = torch.randn(5, 6), torch.randn(5, 6), torch.randint(0, 3, (5,))
            loss = F.cross_entropy(model.cls(model.body(a)), y) + (model.encode(a) * model.encode(b)).sum(-1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "decorated_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.body, self.proj, self.cls = nn.Linear(6, 8), nn.Linear(8, 8), nn.Linear(8, 3)
            def encode(self, x):
                return F.normalize(self.proj(self.body(x)), dim=-1)
        model = Encoder()
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        for step in range(2):
            a, b, y = torch.randn(5, 6), torch.randn(5, 6), torch.randint(0, 3, (5,))
            loss = F.cross_entropy(model.cls(model.body(a)), y) + (model.encode(a) * model.encode(b)).sum(-1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the penalty is summed in Python over `.tolist()` (line 5): a float, the encoder gets nothing
    # from it; the value it was read from reaches no backward
    "number_term": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        def l1_activity(codes):
            return sum(abs(v) for v in codes.mean(0).tolist())
        enc, dec = nn.Linear(6, 10), nn.Linear(10, 6)
        opt = torch.optim.SGD([*enc.parameters(), *dec.parameters()], lr=0.1)
        for step in range(2):
            x = torch.randn(8, 6)
            codes = torch.relu(enc(x))
            loss = F.mse_loss(dec(codes), x) + 0.5 * l1_activity(codes)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "number_term_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        def l1_activity(codes):
            return codes.mean(0).abs().sum()
        enc, dec = nn.Linear(6, 10), nn.Linear(10, 6)
        opt = torch.optim.SGD([*enc.parameters(), *dec.parameters()], lr=0.1)
        for step in range(2):
            x = torch.randn(8, 6)
            codes = torch.relu(enc(x))
            loss = F.mse_loss(dec(codes), x) + 0.5 * l1_activity(codes)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # numbers read from the live terms to weight them (balancing) and to log: those terms are
    # backwarded themselves
    "number_weights_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        enc, dec = nn.Linear(6, 10), nn.Linear(10, 6)
        opt = torch.optim.SGD([*enc.parameters(), *dec.parameters()], lr=0.1)
        for step in range(2):
            x = torch.randn(8, 6)
            codes = torch.relu(enc(x))
            rec, l1 = F.mse_loss(dec(codes), x), codes.abs().mean()
            w = rec.item() / (l1.item() + 1e-8)
            loss = rec + 0.1 * w * l1
            opt.zero_grad()
            loss.backward()
            opt.step()
            print("loss %.4f" % loss.item())
    """,
    # the copy itself added and subtracted (line 9): the value of `rec`, the gradient of
    # `rec + aux` (a straight-through trick on a loss): meant, the run does not report it alone
    "copy_itself_term": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        enc, dec = nn.Linear(6, 10), nn.Linear(10, 6)
        opt = torch.optim.SGD([*enc.parameters(), *dec.parameters()], lr=0.1)
        for step in range(2):
            x = torch.randn(8, 6)
            rec, aux = F.mse_loss(dec(torch.relu(enc(x))), x), enc(x).pow(2).mean()
            loss = rec + (aux - aux.detach())
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # copies that are factors, not terms: a TD target from a network no optimizer holds inside a
    # squared error, an advantage weighting log-probabilities, detached real features matched by
    # the generator's: every term changes the gradient
    "factors_ok": """
        import torch
        from torch import nn
        net, target_net, feats = nn.Linear(4, 2), nn.Linear(4, 2), nn.Linear(4, 4)
        opt = torch.optim.SGD([*net.parameters(), *feats.parameters()], lr=0.1)
        for step in range(2):
            obs, nxt = torch.randn(5, 4), torch.randn(5, 4)
            with torch.no_grad():
                target = 1.0 + 0.9 * target_net(nxt).max(1).values
                adv = net(obs)[:, 1] - 0.5
            q = net(obs)[:, 0]
            real = feats(torch.randn(5, 4)).detach()
            loss = (q - target).pow(2).mean() - (q.log_softmax(0) * adv).mean() + (feats(obs) - real).abs().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Dict[str, DebugResult]:
    return debug_runs(write_programs(PROGRAMS, tmp_path_factory.mktemp("deadterms")), static=False)


@pytest.fixture(scope="module")
def confirmed(tmp_path_factory) -> Dict[str, DebugResult]:
    programs = {n: PROGRAMS[n] for n in ("hook_data", "nograd_term")}
    return debug_runs(write_programs(programs, tmp_path_factory.mktemp("deadterms_static")), static=True)


@pytest.mark.parametrize("name", sorted(n for n in PROGRAMS if n.endswith("_ok")))
def test_correct_programs_show_nothing(runs, name):
    result = runs[name]
    assert result.status == "ok", result.message
    assert result.runtime_findings == [] and result.premises == [], \
        [(f.code, f.row, f.message) for f in list(result.runtime_findings) + list(result.premises)]


def _own(result, code="GW722"):
    """The run's own finding of ``code`` (a term computed from the copy), not a premise."""
    assert result.status == "ok", result.message
    assert [p.code for p in result.premises] == []
    [f] = [f for f in result.runtime_findings if f.code == code]
    return f


def test_hook_copy_through_setitem_is_a_dead_term(runs):
    # every parameter gets a gradient through the cross-entropy: the term made from the hook's
    # `o.data` is what the run proves
    f = _own(runs["hook_data"])
    assert f.row == 6 and ".data" in f.message and site_rows(f, "backward") == [13]


def test_term_computed_under_no_grad_is_shown_where_it_is_made(runs):
    """The critic's outputs are a constant from line 10 on; the term is the value loss of line 11
    (the advantage of line 12 is a factor), added at line 13."""
    f = _own(runs["nograd_term"])
    assert f.row == 11 and "no_grad" in f.message and site_rows(f, "backward") == [15]


def test_term_added_in_place_is_followed(runs):
    f = _own(runs["nograd_term_inplace"])
    assert f.row == 11 and site_rows(f, "backward") == [16]


def test_term_made_by_a_decorated_function_is_shown_at_the_decorator(runs):
    f = _own(runs["decorated"])
    assert f.row == 8 and site_rows(f, "backward") == [17]


def test_the_copy_itself_added_is_only_a_premise(runs):
    result = runs["copy_itself_term"]
    assert result.status == "ok", result.message
    assert result.runtime_findings == []
    assert [p.row for p in result.premises if p.code == "GW722"] == [9]


def test_number_read_from_a_value_no_backward_reaches(runs):
    result = runs["number_term"]
    assert result.status == "ok", result.message
    assert result.runtime_findings == []
    [p] = [p for p in result.premises if p.code == "GW722"]
    assert p.row == 5 and ".tolist()" in p.message


@pytest.mark.parametrize("name,row", [("hook_data", 6), ("nograd_term", 11)])
def test_premise_confirms_the_static_diagnostic(confirmed, name, row):
    result = confirmed[name]
    static = [f for f in result.findings if f.source == "static"]
    assert [(f.code, f.row, f.status) for f in static] == [("GW722", row, "confirmed")]
