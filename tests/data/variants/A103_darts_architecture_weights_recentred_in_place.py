# source: DARTS-style architecture search that keeps the mixing logits centred by subtracting their max in place each step (forum threads "a leaf Variable that requires grad is being used in an in-place operation" in search code): the architecture weights are leaves that require grad, and the recentring runs with grad mode on
# family: A
# expect: error
# line: 36
# fix: recentre under no_grad: with torch.no_grad(): cell.arch_logits.sub_(cell.arch_logits.max())
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SearchCell(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.candidates = nn.ModuleList([nn.Linear(d, d), nn.Sequential(nn.Linear(d, d), nn.ReLU()), nn.Identity()])
        self.arch_logits = nn.Parameter(torch.zeros(len(self.candidates)))

    def forward(self, x):
        mix = F.softmax(self.arch_logits, dim=0)
        return sum(w * op(x) for w, op in zip(mix, self.candidates))


if __name__ == "__main__":
    cell = SearchCell()
    arch_opt = torch.optim.Adam([cell.arch_logits], lr=3e-3)
    weight_opt = torch.optim.SGD(cell.candidates.parameters(), lr=0.05)
    x, y = torch.randn(16, 8), torch.randn(16, 8)
    for step in range(3):
        arch_opt.zero_grad()
        weight_opt.zero_grad()
        loss = F.mse_loss(cell(x), y)
        loss.backward()
        arch_opt.step()
        weight_opt.step()
        cell.arch_logits.sub_(cell.arch_logits.max())
    print("loss %.4f" % loss.item())
