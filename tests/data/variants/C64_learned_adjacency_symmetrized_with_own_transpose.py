# source: graph-structure-learning GNNs (MTGNN / AGCRN-style adaptive adjacency) that symmetrise the learned adjacency in place with `adj += adj.t()`; the transpose is a view of the very tensor being written
# family: C
# expect: error
# line: 20
# fix: symmetrise out-of-place: adj = adj + adj.t()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GraphLearner(nn.Module):
    def __init__(self, n_nodes, d_emb=6):
        super().__init__()
        self.node_emb = nn.Parameter(0.3 * torch.randn(n_nodes, d_emb))

    def forward(self):
        adj = torch.sigmoid(self.node_emb @ self.node_emb.t())
        adj += adj.t()
        adj /= 2
        return adj


class AdaptiveGCN(nn.Module):
    def __init__(self, n_nodes=7, d_in=5, d_hid=8):
        super().__init__()
        self.learner = GraphLearner(n_nodes)
        self.lin1 = nn.Linear(d_in, d_hid)
        self.lin2 = nn.Linear(d_hid, 1)

    def forward(self, x):
        adj = self.learner() + torch.eye(x.size(1))
        deg_inv_sqrt = adj.sum(-1).rsqrt()
        norm_adj = deg_inv_sqrt.unsqueeze(-1) * adj * deg_inv_sqrt.unsqueeze(-2)
        h = F.relu(norm_adj @ self.lin1(x))
        return self.lin2(norm_adj @ h).squeeze(-1)


if __name__ == "__main__":
    model = AdaptiveGCN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = torch.randn(4, 7, 5), torch.randn(4, 7)
    for step in range(2):
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss", loss.item())
