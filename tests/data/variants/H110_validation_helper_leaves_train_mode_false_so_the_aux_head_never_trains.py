# source: Inception/GoogLeNet-style auxiliary classifiers returned only when self.training (torchvision's aux_logits; forum threads "auxiliary head weights never change"): the per-epoch validation helper calls net.train(mode=False) and never restores it, so every training step sees one output and the auxiliary term is skipped
# family: H
# expect: silent
# verify: the auxiliary head's weight is compared before and after three epochs
# line: 30  (backward: 44)
# fix: restore the caller's mode at the end of the validation helper: net.train(mode=was_training)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AuxNet(nn.Module):
    def __init__(self, d=6, n_cls=4):
        super().__init__()
        self.stem = nn.Linear(d, 16)
        self.main_head = nn.Linear(16, n_cls)
        self.aux_head = nn.Linear(16, n_cls)

    def forward(self, x):
        h = torch.relu(self.stem(x))
        if self.training:
            return self.main_head(h), self.aux_head(h)
        return self.main_head(h)


def validation_accuracy(net, x, y):
    was_training = net.training
    net.train(mode=False)
    with torch.no_grad():
        acc = (net(x).argmax(1) == y).float().mean().item()
    return acc


def train_epoch(net, opt, x, y):
    out = net(x)
    if isinstance(out, tuple):
        main, aux = out
        loss = F.cross_entropy(main, y) + 0.4 * F.cross_entropy(aux, y)
    else:
        loss = F.cross_entropy(out, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


if __name__ == "__main__":
    net = AuxNet()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x, y = torch.randn(32, 6), torch.randint(0, 4, (32,))
    xv, yv = torch.randn(16, 6), torch.randint(0, 4, (16,))
    before = net.aux_head.weight.detach().clone()
    for epoch in range(3):
        print("val acc %.3f" % validation_accuracy(net, xv, yv))
        print("train loss %.4f" % train_epoch(net, opt, x, y))
    moved = not torch.equal(before, net.aux_head.weight)
    print("MATCH" if moved else "MISMATCH: the auxiliary head never trains")
