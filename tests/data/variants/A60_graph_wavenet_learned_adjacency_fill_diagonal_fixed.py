# source: Graph WaveNet / AGCRN-style traffic forecasting models with a learned dense adjacency Parameter; users add self-loops with adj.fill_diagonal_(1.0) inside forward (forum "a leaf Variable that requires grad is being used in an in-place operation" on an adaptive adjacency)
# family: A
# expect: ok
# line: 23
# fix: (fixed version of A60_graph_wavenet_learned_adjacency_fill_diagonal.py) add the self-loops to a copy: adj = self.adj.clone(); adj.fill_diagonal_(1.0) (or adj = self.adj + torch.eye(n))
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AdaptiveGraphConv(nn.Module):
    """One graph-convolution layer whose adjacency matrix is learned end to end."""

    def __init__(self, num_nodes, d_in, d_out):
        super().__init__()
        self.adj = nn.Parameter(torch.randn(num_nodes, num_nodes) * 0.1)
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, x):
        # every node keeps its own signal: put self-loops on the diagonal
        adj = self.adj.clone()
        adj.fill_diagonal_(1.0)
        a = F.softmax(F.relu(adj), dim=1)
        return torch.relu(torch.einsum("nm,bmd->bnd", a, self.lin(x)))


class TrafficForecaster(nn.Module):
    def __init__(self, num_nodes=12, d_in=4, hidden=16, horizon=3):
        super().__init__()
        self.gc1 = AdaptiveGraphConv(num_nodes, d_in, hidden)
        self.gc2 = AdaptiveGraphConv(num_nodes, hidden, hidden)
        self.head = nn.Linear(hidden, horizon)

    def forward(self, x):
        return self.head(self.gc2(self.gc1(x)))


def train(steps=3):
    model = TrafficForecaster()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(steps):
        x = torch.randn(8, 12, 4)
        y = torch.randn(8, 12, 3)
        loss = F.l1_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "mae", round(loss.item(), 4))


if __name__ == "__main__":
    train()
