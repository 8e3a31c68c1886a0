# source: https://github.com/benedekrozemberczki/pytorch_geometric_temporal/issues/80 ("[Bug?] the way to set GCN.weight in EvolveGCN": self.conv_layer.weight = torch.nn.Parameter(W) after the GRU evolves W, "the gradient function may be lost")
# family: H
# expect: ok
# verify: the gradients of the GRU that evolves the weight and of the initial weight are compared with autograd's gradients of the same model that passes the evolved weight to the convolution
# line: 41  (backward: 79)
# fix: (fixed version of H41_evolvegcn_weight_rewrapped_as_parameter.py) pass the evolved weight to the convolution as a tensor (out = self.conv(x, adj, weight=W)) instead of re-wrapping it as a new nn.Parameter
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GCNConv(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_dim, out_dim) * 0.3)

    def forward(self, x, adj, weight=None):
        w = self.weight if weight is None else weight
        return adj @ (x @ w)


class EvolveGCNO(nn.Module):
    """EvolveGCN-O: a GRU evolves the GCN weight from one snapshot to the next."""

    def __init__(self, dim=4):
        super().__init__()
        self.initial_weight = nn.Parameter(torch.randn(dim, dim) * 0.3)
        self.recurrent = nn.GRUCell(dim, dim)
        self.conv = GCNConv(dim, dim)
        self.weight = None

    def reset(self):
        self.weight = None

    def forward(self, x, adj):
        W = self.initial_weight if self.weight is None else self.weight
        W = self.recurrent(W, W)
        self.weight = W
        out = self.conv(x, adj, weight=W)
        return out


def normalized_adjacency(n):
    a = (torch.rand(n, n) > 0.6).float()
    a = ((a + a.t()) > 0).float() + torch.eye(n)
    d = a.sum(1).rsqrt()
    return d[:, None] * a * d[None, :]


def sequence_loss(model, snapshots, head):
    model.reset()
    loss = 0.0
    for x, adj, y in snapshots:
        h = torch.relu(model(x, adj))
        loss = loss + F.mse_loss(head(h).squeeze(-1), y)
    return loss / len(snapshots)


def reference_loss(model, snapshots, head):
    W, loss = model.initial_weight, 0.0
    for x, adj, y in snapshots:
        W = model.recurrent(W, W)
        h = torch.relu(adj @ (x @ W))
        loss = loss + F.mse_loss(head(h).squeeze(-1), y)
    return loss / len(snapshots)


if __name__ == "__main__":
    n, dim = 6, 4
    snapshots = [(torch.randn(n, dim), normalized_adjacency(n), torch.randn(n)) for _ in range(3)]
    model, head = EvolveGCNO(dim), nn.Linear(dim, 1)
    params = [model.initial_weight, *model.recurrent.parameters(), *head.parameters()]
    opt = torch.optim.Adam(params, lr=1e-2)
    for epoch in range(2):
        loss = sequence_loss(model, snapshots, head)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("epoch", epoch, "loss", round(loss.item(), 4))

    watched = [model.initial_weight, *model.recurrent.parameters()]
    model.zero_grad()
    sequence_loss(model, snapshots, head).backward()
    got = [p.grad for p in watched]
    ref = torch.autograd.grad(reference_loss(model, snapshots, head), watched)
    if all(g is not None and torch.allclose(g, r, atol=1e-6) for g, r in zip(got, ref)):
        print("MATCH")
    else:
        print("MISMATCH: the GRU that evolves the weight and the initial weight get",
              ["none" if g is None else "wrong" for g in got][:2], "gradients")
