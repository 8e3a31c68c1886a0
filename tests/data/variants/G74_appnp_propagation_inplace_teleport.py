# source: APPNP (Klicpera et al., "Predict then Propagate") personalized-PageRank propagation z = (1 - alpha) * A_hat @ z + alpha * h, written with in-place mul_/add_ on the propagated features
# family: G
# expect: ok
# line: 24
# fix: none needed - sparse.mm(A_hat, z) saves A_hat (z is needed only for A_hat's gradient, which is not required), and mul_ by a Python scalar / add_ save nothing, so rewriting the product in place is safe
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class APPNPNet(nn.Module):
    def __init__(self, d_in=8, hidden=32, n_cls=4, K=5, alpha=0.1):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Dropout(0.5), nn.Linear(hidden, n_cls))
        self.K, self.alpha = K, alpha

    def forward(self, x, a_hat):
        h = self.mlp(x)
        z = h
        for _ in range(self.K):
            z = torch.sparse.mm(a_hat, z)
            z.mul_(1 - self.alpha).add_(h, alpha=self.alpha)
        return z


def normalized_adjacency(edge_index, n):
    adj = torch.zeros(n, n)
    adj[edge_index[0], edge_index[1]] = 1.0
    adj = ((adj + adj.t()) > 0).float() + torch.eye(n)
    d = adj.sum(1).pow(-0.5)
    return (d[:, None] * adj * d[None, :]).to_sparse()


if __name__ == "__main__":
    n = 25
    x = torch.randn(n, 8)
    a_hat = normalized_adjacency(torch.randint(0, n, (2, 50)), n)
    y = torch.randint(0, 4, (n,))
    model = APPNPNet()
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    for epoch in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(model(x, a_hat), y)
        loss.backward()
        opt.step()
        print("epoch", epoch, "loss", round(loss.item(), 4))
