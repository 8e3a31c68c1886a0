# source: https://github.com/benedekrozemberczki/pytorch_geometric_temporal/issues/305 (EvolveGCN examples: "Runtime Error while executing loss.backward()" in the second epoch: the layer keeps its evolved weight as an attribute across epochs)
# family: D
# expect: error
# line: 25, 51  (backward: 56)
# fix: restart the evolved weight at the start of every epoch (layer.weight = None before the first snapshot), so each epoch's graph starts from the initial parameter
import torch
import torch.nn as nn

torch.manual_seed(0)


class EvolveGCNO(nn.Module):
    """The GCN weight is evolved by a GRU cell from one snapshot to the next."""

    def __init__(self, channels):
        super().__init__()
        self.initial_weight = nn.Parameter(torch.randn(1, channels, channels) * 0.3)
        self.recurrent = nn.GRUCell(channels, channels)
        self.weight = None

    def forward(self, x, adj):
        if self.weight is None:
            self.weight = self.initial_weight.squeeze(dim=0)
        w = self.recurrent(self.weight, self.weight)
        self.weight = w
        return adj @ x @ w


class RecurrentGCN(nn.Module):
    def __init__(self, channels=6):
        super().__init__()
        self.evolve = EvolveGCNO(channels)
        self.linear = nn.Linear(channels, 1)

    def forward(self, x, adj):
        return self.linear(torch.relu(self.evolve(x, adj))).squeeze(-1)


def snapshot(n=10, c=6):
    a = (torch.rand(n, n) < 0.3).float()
    a = a + a.T + torch.eye(n)
    d = a.sum(1).pow(-0.5)
    return torch.randn(n, c), d[:, None] * a * d[None, :], torch.randn(n)


if __name__ == "__main__":
    snapshots = [snapshot() for _ in range(4)]
    model = RecurrentGCN()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(2):
        cost = 0
        for i, (x, adj, y) in enumerate(snapshots):
            y_hat = model(x, adj)
            cost = cost + torch.mean((y_hat - y) ** 2)
        cost = cost / (i + 1)
        cost.backward()
        optimizer.step()
        optimizer.zero_grad()
        print("epoch", epoch, "cost", cost.item())
