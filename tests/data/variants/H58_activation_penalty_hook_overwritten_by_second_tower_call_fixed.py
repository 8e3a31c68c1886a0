# source: https://github.com/jmschrei/tangermeme/pull/54 ("Add hook stacks to handle shared modules": hooks store module.output = outputs by assignment, so "if a model reuses the same module multiple times in the forward pass, the hooks overwrite the input/output values each time the module is called ... If the shared module calls have matching tensor shapes, it silently fails"); here the AWD-LSTM-style activation penalty reads a hooked projection that a two-tower model calls twice
# family: H
# expect: ok
# verify: the query tower's gradient is compared with autograd's gradient of the same loss that penalises both calls' activations
# line: 25  (backward: 62)
# fix: (fixed version of H58_activation_penalty_hook_overwritten_by_second_tower_call.py) keep every call's output (self.acts.setdefault(name, []).append(output)) and clear the lists after each step
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ActivationRegularizer:
    """Activation regularisation (AR): alpha * mean(h^2) of the hooked modules' outputs."""

    def __init__(self, modules, alpha=0.5):
        self.alpha = alpha
        self.acts = {}
        for name, m in modules.items():
            m.register_forward_hook(self.make_hook(name))

    def make_hook(self, name):
        def hook(module, inputs, output):
            self.acts.setdefault(name, []).append(output)
        return hook

    def penalty(self):
        terms = [a.pow(2).mean() for v in self.acts.values() for a in (v if isinstance(v, list) else [v])]
        return self.alpha * sum(terms)

    def clear(self):
        self.acts.clear()


class TwoTower(nn.Module):
    def __init__(self, dq=6, dd=10, dim=8):
        super().__init__()
        self.query_in = nn.Linear(dq, dim)
        self.doc_in = nn.Linear(dd, dim)
        self.proj = nn.Sequential(nn.Linear(dim, dim), nn.Tanh())  # shared by both towers

    def forward(self, q, d):
        return self.proj(self.query_in(q)), self.proj(self.doc_in(d))


def retrieval_loss(model, reg, q, d):
    reg.clear()
    zq, zd = model(q, d)
    logits = zq @ zd.t()
    return F.cross_entropy(logits, torch.arange(q.size(0))) + reg.penalty()


if __name__ == "__main__":
    model = TwoTower()
    reg = ActivationRegularizer({"proj": model.proj})
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(3):
        q, d = torch.randn(8, 6), torch.randn(8, 10)
        loss = retrieval_loss(model, reg, q, d)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4))

    q, d = torch.randn(8, 6), torch.randn(8, 10)
    watched = list(model.query_in.parameters())
    got = torch.autograd.grad(retrieval_loss(model, reg, q, d), watched)
    zq, zd = model(q, d)
    ref_loss = F.cross_entropy(zq @ zd.t(), torch.arange(8)) + reg.alpha * (zq.pow(2).mean() + zd.pow(2).mean())
    ref = torch.autograd.grad(ref_loss, watched)
    if all(torch.allclose(g, r, atol=1e-6) for g, r in zip(got, ref)):
        print("MATCH")
    else:
        print("MISMATCH: the second call of the shared projection overwrote the first one's activations; query tower gradient off by",
              max((g - r).abs().max().item() for g, r in zip(got, ref)))
