# source: https://github.com/sigeisler/robustness_of_gnns_at_scale/issues/4 (a GCN with cached=True normalises the adjacency once and reuses it; with learnable/perturbed edge weights the cached adjacency keeps the first step's graph: "Trying to backward through the graph a second time"; fix: switch caching off)
# family: D
# expect: error
# line: 33, 41  (backward: 60)
# fix: do not cache the normalised adjacency when the edge weights are learned (GCNConv(..., cached=False))
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def gcn_norm(edge_index, edge_weight, num_nodes):
    adj = torch.zeros(num_nodes, num_nodes).index_put((edge_index[0], edge_index[1]), edge_weight, accumulate=True)
    adj = adj + torch.eye(num_nodes)
    deg_inv_sqrt = adj.sum(dim=1).pow(-0.5)
    return deg_inv_sqrt[:, None] * adj * deg_inv_sqrt[None, :]


class GCNConv(nn.Module):
    def __init__(self, in_dim, out_dim, cached=False):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim)
        self.cached = cached
        self._cached_adj = None

    def forward(self, x, edge_index, edge_weight):
        if self.cached and self._cached_adj is not None:
            adj = self._cached_adj
        else:
            adj = gcn_norm(edge_index, edge_weight, x.shape[0])
            if self.cached:
                self._cached_adj = adj
        return adj @ self.lin(x)


class GraphStructureLearner(nn.Module):
    def __init__(self, num_edges, in_dim=8, hidden=16, n_cls=3):
        super().__init__()
        self.edge_logits = nn.Parameter(torch.zeros(num_edges))
        self.conv1 = GCNConv(in_dim, hidden, cached=True)
        self.conv2 = GCNConv(hidden, n_cls)

    def forward(self, x, edge_index):
        w = torch.sigmoid(self.edge_logits)
        h = F.relu(self.conv1(x, edge_index, w))
        return self.conv2(h, edge_index, w)


if __name__ == "__main__":
    n, e = 12, 30
    x = torch.randn(n, 8)
    edge_index = torch.randint(0, n, (2, e))
    y = torch.randint(0, 3, (n,))
    model = GraphStructureLearner(e)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for epoch in range(3):
        loss = F.cross_entropy(model(x, edge_index), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("epoch", epoch, "loss", loss.item())
