# source: Lookahead-optimizer wrapper (k fast steps, then slow-weight interpolation) used in a loop that steps once per loss of the same forward pass
# family: E
# expect: ok
# line: 42  (backward: 41)
# fix: (fixed version of E38_lookahead_step_inside_loss_loop.py) accumulate the gradients of all losses first (backward each, or their sum) and step once after the loop
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Lookahead:
    def __init__(self, base_optimizer, k=2, alpha=0.5):
        self.base, self.k, self.alpha = base_optimizer, k, alpha
        self.counter = 0
        self.slow = [[p.detach().clone() for p in g["params"]] for g in base_optimizer.param_groups]

    def zero_grad(self):
        self.base.zero_grad()

    def step(self):
        self.base.step()
        self.counter += 1
        if self.counter % self.k == 0:
            with torch.no_grad():
                for group, slow in zip(self.base.param_groups, self.slow):
                    for p, s in zip(group["params"], slow):
                        s.add_(p - s, alpha=self.alpha)
                        p.copy_(s)


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Linear(16, 4))
    opt = Lookahead(torch.optim.Adam(model.parameters(), lr=1e-3))
    x, y, soft = torch.randn(8, 6), torch.randint(0, 4, (8,)), torch.softmax(torch.randn(8, 4), -1)
    logits = model(x)
    losses = [F.cross_entropy(logits, y), F.kl_div(F.log_softmax(logits, -1), soft, reduction="batchmean")]
    opt.zero_grad()
    for loss in losses:
        loss.backward(retain_graph=True)
    opt.step()
    print([l.item() for l in losses])
