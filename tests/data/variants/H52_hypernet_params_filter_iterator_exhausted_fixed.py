# source: https://github.com/SSL92/hyperIQA/issues/32 ("HyperNetWork is not being trained": self.hypernet_params = filter(lambda p: id(p) not in backbone_params, self.model_hyper.parameters()) is an iterator; "after the optimizer is initialized, it becomes empty. Therefore, after the first epoch, the optimizer doesn't optimize the HyperNetwork anymore")
# family: H
# expect: ok
# verify: the hyper-network's weights are compared before and after the second epoch (the optimizer is rebuilt for the learning-rate decay)
# line: 34  (backward: 50)
# fix: (fixed version of H52_hypernet_params_filter_iterator_exhausted.py) materialize the parameter selection once: self.hypernet_params = list(filter(...))
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class HyperNet(nn.Module):
    def __init__(self, feat=8, target_in=8):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(12, feat), nn.ReLU())
        self.weight_gen = nn.Linear(feat, target_in)
        self.bias_gen = nn.Linear(feat, 1)

    def forward(self, x):
        f = self.backbone(x)
        w = self.weight_gen(f)  # per-image weights of the target network
        b = self.bias_gen(f)
        return (f * w).sum(dim=1, keepdim=True) + b


class HyperIQASolver:
    def __init__(self, lr=1e-2, lrratio=10, epochs=3):
        self.model_hyper = HyperNet()
        self.epochs = epochs
        self.lr, self.lrratio = lr, lrratio
        backbone_params = list(map(id, self.model_hyper.backbone.parameters()))
        self.hypernet_params = list(filter(lambda p: id(p) not in backbone_params, self.model_hyper.parameters()))
        self.solver = self.make_solver(self.lr)

    def make_solver(self, lr):
        paras = [{"params": self.hypernet_params, "lr": lr * self.lrratio},
                 {"params": self.model_hyper.backbone.parameters(), "lr": lr}]
        return torch.optim.Adam(paras, weight_decay=5e-4)

    def train(self, batches):
        snapshots = []
        for epoch in range(self.epochs):
            snapshots.append(self.model_hyper.weight_gen.weight.detach().clone())
            for x, score in batches:
                pred = self.model_hyper(x)
                loss = F.l1_loss(pred.squeeze(1), score)
                self.solver.zero_grad()
                loss.backward()
                self.solver.step()
            print("epoch", epoch, "loss", round(loss.item(), 4))
            # learning-rate decay: rebuild the optimizer every epoch, as the original solver does
            self.lr = self.lr / pow(10, epoch // 6)
            self.solver = self.make_solver(self.lr)
        snapshots.append(self.model_hyper.weight_gen.weight.detach().clone())
        return snapshots


if __name__ == "__main__":
    batches = [(torch.randn(8, 12), torch.rand(8)) for _ in range(3)]
    solver = HyperIQASolver()
    snaps = solver.train(batches)
    moved = [not torch.equal(a, b) for a, b in zip(snaps, snaps[1:])]
    print("MATCH" if all(moved) else "MISMATCH: the hyper-network stopped training after epoch 0 (moved per epoch: %s)" % moved)
