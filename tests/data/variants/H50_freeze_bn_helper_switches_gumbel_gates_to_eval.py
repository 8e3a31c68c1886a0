# source: https://github.com/andreasveit/convnet-aig/issues/5 (ConvNet-AIG gates: Gumbel-softmax with a straight-through hard sample in training, a plain argmax at test time) combined with the fine-tuning habit of freezing batch-norm statistics; the helper calls .train(False) on the whole model, which also switches the gates to their argmax path (https://github.com/Data-Centric-AI-Community/fg-data-synthetic/pull/146: "Gumbel Softmax train/inference modes")
# family: H
# expect: silent
# verify: the gate's gradient is compared with autograd's gradient of the same forward with the gates in training mode (same Gumbel noise)
# line: 52  (backward: 71)
# fix: freeze only the batch-norm layers: for m in model.modules(): if isinstance(m, nn.BatchNorm2d): m.eval()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Gate(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.fc = nn.Linear(channels, 2)

    def forward(self, x):
        logits = self.fc(x.mean(dim=(2, 3)))
        if self.training:
            g = F.gumbel_softmax(logits, tau=1.0, hard=True)
        else:
            g = F.one_hot(logits.argmax(dim=-1), 2).type_as(logits)
        return g[:, 1].view(-1, 1, 1, 1)


class GatedBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.gate = Gate(channels)
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x):
        return x + self.gate(x) * F.relu(self.bn(self.conv(x)))


class AIGNet(nn.Module):
    def __init__(self, channels=4, n_classes=3):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.blocks = nn.Sequential(GatedBlock(channels), GatedBlock(channels))
        self.fc = nn.Linear(channels, n_classes)

    def forward(self, x):
        return self.fc(self.blocks(self.stem(x)).mean(dim=(2, 3)))


def freeze_bn(model):
    """Fine-tuning with a small batch: keep the pretrained running statistics."""
    model.train(False)


def gate_grads(model, x, y, seed):
    torch.manual_seed(seed)
    loss = F.cross_entropy(model(x), y)
    params = [p for blk in model.blocks for p in blk.gate.parameters()]
    return torch.autograd.grad(loss, params, allow_unused=True)


if __name__ == "__main__":
    model = AIGNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model.train()
    freeze_bn(model)
    for step in range(3):
        x, y = torch.randn(8, 3, 8, 8), torch.randint(0, 3, (8,))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4))

    x, y = torch.randn(8, 3, 8, 8), torch.randint(0, 3, (8,))
    got = gate_grads(model, x, y, seed=1)
    for blk in model.blocks:
        blk.gate.train()
    ref = gate_grads(model, x, y, seed=1)
    if all(g is not None and torch.allclose(g, r, atol=1e-6) for g, r in zip(got, ref)):
        print("MATCH")
    else:
        print("MISMATCH: the gates got", ["none" if g is None else "wrong" for g in got], "gradients")
