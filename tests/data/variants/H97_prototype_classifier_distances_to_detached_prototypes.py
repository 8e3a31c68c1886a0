# source: convolutional prototype learning / DCE-loss re-implementations (issues "prototypes stay at their initial values"): the logits are negative squared distances to self.prototypes.detach(), copied from the variant that updates prototypes by a running mean, while here the prototypes are an nn.Parameter in the optimizer and nothing else moves them
# family: H
# expect: silent
# verify: the prototypes are compared before and after the training steps
# line: 22
# fix: measure the distances to the parameter itself: torch.cdist(z, self.prototypes)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PrototypeClassifier(nn.Module):
    def __init__(self, n_in=10, dim=6, n_classes=4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU(), nn.Linear(32, dim))
        self.prototypes = nn.Parameter(torch.randn(n_classes, dim))

    def forward(self, x):
        z = self.encoder(x)
        return -torch.cdist(z, self.prototypes.detach()).pow(2)


if __name__ == "__main__":
    model = PrototypeClassifier()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    start = model.prototypes.detach().clone()
    for step in range(5):
        x, y = torch.randn(16, 10), torch.randint(0, 4, (16,))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss %.4f" % loss.item())
    moved = not torch.equal(start, model.prototypes.detach())
    print("MATCH" if moved else "MISMATCH: the prototypes never moved")
