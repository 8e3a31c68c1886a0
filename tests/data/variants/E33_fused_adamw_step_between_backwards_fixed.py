# source: two-loss training steps (main loss, then an auxiliary loss on the same forward) with AdamW(fused=True): the fused kernel updates the weights without bumping their version, so the second backward silently uses the new weights
# family: E
# expect: ok
# verify: (fixed: the step now follows both backward passes) previously optimizer.step() ran between main_loss.backward(retain_graph=True) and aux_loss.backward(); with fused=True no version-counter error is raised and LinearBackward uses the updated weight. The aux gradient is compared with torch.autograd.grad taken before the step and MISMATCH is printed
# line: 41  (backward: 39)
# fix: (fixed version of E33_fused_adamw_step_between_backwards.py) call both backward passes (or backward their sum) before optimizer.step()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU())
        self.cls = nn.Linear(16, 3)
        self.aux = nn.Linear(16, 1)

    def forward(self, x):
        h = self.encoder(x)
        return self.cls(h), self.aux(h)


if __name__ == "__main__":
    model = Model()
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.05, fused=True)
    x, y, r = torch.randn(8, 10), torch.randint(0, 3, (8,)), torch.randn(8, 1)
    logits, aux_out = model(x)
    main_loss = F.cross_entropy(logits, y)
    aux_loss = F.mse_loss(aux_out, r)
    first = model.encoder[0].weight
    ref = torch.autograd.grad(aux_loss, [first], retain_graph=True)[0]

    optimizer.zero_grad()
    main_loss.backward(retain_graph=True)
    main_grad = first.grad.clone()
    aux_loss.backward()
    got = first.grad - main_grad
    optimizer.step()
    print("MATCH" if torch.allclose(got, ref, atol=1e-6) else "MISMATCH max diff %.4f" % (got - ref).abs().max().item())
