# source: constrained / fairness training with a Lagrangian (PPO-Lagrangian, demographic-parity constraints): the dual variable is updated by gradient ascent with the constraint violation tensor itself, so the multiplier carries the previous step's graph into the next loss
# family: D
# expect: ok
# line: 27, 31  (backward: 29)
# fix: (fixed version of D66_lagrange_multiplier_update_keeps_graph.py) update the multiplier with a plain number: self.lam = torch.clamp(self.lam + self.dual_lr * violation.detach(), min=0.0)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FairClassifierTrainer:
    def __init__(self, d_in=8, eps=0.02, dual_lr=0.5):
        self.model = nn.Sequential(nn.Linear(d_in, 16), nn.ReLU(), nn.Linear(16, 1))
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.lam = torch.zeros(())
        self.eps, self.dual_lr = eps, dual_lr

    def parity_gap(self, probs, group):
        return (probs[group == 1].mean() - probs[group == 0].mean()).abs()

    def step(self, x, y, group):
        logits = self.model(x).squeeze(-1)
        task_loss = F.binary_cross_entropy_with_logits(logits, y)
        violation = self.parity_gap(torch.sigmoid(logits), group) - self.eps
        loss = task_loss + self.lam * violation
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.lam = torch.clamp(self.lam + self.dual_lr * violation.detach(), min=0.0)
        return loss.item()


if __name__ == "__main__":
    trainer = FairClassifierTrainer()
    x = torch.randn(32, 8)
    group = (torch.rand(32) < 0.5).long()
    y = ((x[:, 0] + 0.8 * group) > 0.3).float()
    for epoch in range(3):
        print("loss", trainer.step(x, y, group))
