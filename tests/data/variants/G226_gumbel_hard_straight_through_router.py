# source: https://github.com/pytorch/pytorch/issues/48574 and https://github.com/shariqiqbal2810/maddpg-pytorch/issues/34 (F.gumbel_softmax(..., hard=True): "The hard flag specifies whether the action appears to be one-hot, but it always acts like a gumbel-softmax sample in the backward pass")
# family: G
# expect: ok
# line: 20
# fix: none needed - hard=True returns y_hard - y_soft.detach() + y_soft, so the router logits get the soft sample's gradient
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class HardRouter(nn.Module):
    def __init__(self, dim=8, n_experts=3):
        super().__init__()
        self.logits = nn.Linear(dim, n_experts)
        self.experts = nn.ModuleList(nn.Linear(dim, 2) for _ in range(n_experts))

    def forward(self, x):
        choice = F.gumbel_softmax(self.logits(x), tau=0.5, hard=True)
        outs = torch.stack([e(x) for e in self.experts], dim=1)
        return (choice.unsqueeze(-1) * outs).sum(dim=1)


if __name__ == "__main__":
    model = HardRouter()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(3):
        x, y = torch.randn(16, 8), torch.randn(16, 2)
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4), "router grad", round(model.logits.weight.grad.abs().sum().item(), 6))
    print("MATCH" if model.logits.weight.grad.abs().sum() > 0 else "MISMATCH: the router got no gradient")
