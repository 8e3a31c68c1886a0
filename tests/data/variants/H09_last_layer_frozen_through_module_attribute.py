# source: https://github.com/CSCYQJ/MICCAI23-ProtoContra-SFDA/issues/18 ("you freeze the last layer with self.model.outc.requires_grad = False, but outc is nn.Module ... this does not freeze the last layer"): the assignment only sets a Python attribute on the module; its parameters keep training
# family: H
# expect: silent
# verify: the classifier weights are compared before and after the optimizer steps (frozen means unchanged)
# line: 27
# fix: freeze the module's parameters: self.model.outc.requires_grad_(False) (or set p.requires_grad = False for p in outc.parameters())
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU())
        self.outc = nn.Conv2d(8, 3, 1)

    def forward(self, x):
        return self.outc(self.enc(x))


class SourceFreeAdapter:
    def __init__(self, model):
        self.model = model
        self.model.outc.requires_grad = False
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-2)

    def step(self, x):
        probs = F.softmax(self.model(x), dim=1)
        loss = -(probs * torch.log(probs + 1e-6)).sum(1).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


if __name__ == "__main__":
    adapter = SourceFreeAdapter(SegNet())
    before = adapter.model.outc.weight.detach().clone()
    for it in range(3):
        adapter.step(torch.randn(2, 1, 8, 8))
    unchanged = torch.equal(before, adapter.model.outc.weight.detach())
    print("MATCH" if unchanged else "MISMATCH: the 'frozen' classifier was updated")
