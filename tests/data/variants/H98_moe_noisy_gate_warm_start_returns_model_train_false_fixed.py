# source: mixture-of-experts with noisy top-k gating (Shazeer et al.; the davidmrau/mixture-of-experts layout): a warm-start helper loads a checkpoint and returns model.train(False), the trainer keeps the returned model, and the gate's noise projection, used only under `if self.training`, is never part of a loss
# family: H
# expect: ok
# verify: the gate's noise projection is compared before and after the training steps
# line: 44
# fix: (fixed version of H98_moe_noisy_gate_warm_start_returns_model_train_false.py) return the model in training mode: return model.train()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class NoisyTopKGate(nn.Module):
    def __init__(self, d, n_experts, k=2):
        super().__init__()
        self.w_gate = nn.Linear(d, n_experts, bias=False)
        self.w_noise = nn.Linear(d, n_experts, bias=False)
        self.k = k

    def forward(self, x):
        logits = self.w_gate(x)
        if self.training:
            logits = logits + torch.randn_like(logits) * F.softplus(self.w_noise(x))
        top, idx = logits.topk(self.k, dim=-1)
        return torch.zeros_like(logits).scatter(-1, idx, top.softmax(-1))


class MixtureOfExperts(nn.Module):
    def __init__(self, d=8, n_experts=4, n_out=3):
        super().__init__()
        self.gate = NoisyTopKGate(d, n_experts)
        self.experts = nn.ModuleList(nn.Linear(d, d) for _ in range(n_experts))
        self.out = nn.Linear(d, n_out)

    def forward(self, x):
        weights = self.gate(x)
        outs = torch.stack([expert(x) for expert in self.experts], dim=1)
        return self.out((weights.unsqueeze(-1) * outs).sum(1))


def warm_start(model, state):
    model.load_state_dict(state)
    return model.train()


if __name__ == "__main__":
    checkpoint = MixtureOfExperts().state_dict()
    model = warm_start(MixtureOfExperts(), checkpoint)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    start = model.gate.w_noise.weight.detach().clone()
    for step in range(4):
        x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss %.4f" % loss.item())
    moved = not torch.equal(start, model.gate.w_noise.weight.detach())
    print("MATCH" if moved else "MISMATCH: the gate's noise projection never trained")
