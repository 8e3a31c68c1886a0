# source: graph-structure-learning models that symmetrise a learned adjacency out-of-place and then remove self-loops with adj.fill_diagonal_(0) before degree normalisation
# family: G
# expect: ok
# line: 22
# fix: none needed - fill_diagonal_ writes the fresh output of an add/scalar-mul (nothing saved it), and the sigmoid output that is saved is only read through its transpose
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GraphLearner(nn.Module):
    def __init__(self, n_nodes, d_emb=6):
        super().__init__()
        self.src_emb = nn.Parameter(0.3 * torch.randn(n_nodes, d_emb))
        self.dst_emb = nn.Parameter(0.3 * torch.randn(n_nodes, d_emb))

    def forward(self):
        adj = torch.sigmoid(self.src_emb @ self.dst_emb.t())
        adj = 0.5 * (adj + adj.t())
        adj.fill_diagonal_(0.0)
        return adj


def gcn_normalise(adj):
    adj = adj + torch.eye(adj.size(0))
    d = adj.sum(1).rsqrt()
    return d.unsqueeze(1) * adj * d.unsqueeze(0)


if __name__ == "__main__":
    learner = GraphLearner(6)
    lin = nn.Linear(4, 1)
    opt = torch.optim.Adam(list(learner.parameters()) + list(lin.parameters()), lr=1e-2)
    x, y = torch.randn(6, 4), torch.randn(6, 1)
    for step in range(3):
        pred = gcn_normalise(learner()) @ lin(x)
        loss = F.mse_loss(pred, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss", loss.item())
