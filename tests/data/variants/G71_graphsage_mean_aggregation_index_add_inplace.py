# source: GraphSAGE mean aggregator written without torch_scatter (messages summed with index_add_ into a zeros buffer, then divided by the in-degree in place)
# family: G
# expect: ok
# line: 23, 25
# fix: none needed - index_add_ writes into a fresh zeros tensor that no backward saved, and agg /= deg divides by a tensor that does not require grad (only deg is saved); the later ops read agg after the writes
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SAGEConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin_neigh = nn.Linear(d_in, d_out, bias=False)
        self.lin_root = nn.Linear(d_in, d_out)

    def forward(self, x, edge_index):
        src, dst = edge_index
        msg = self.lin_neigh(x)[src]
        agg = torch.zeros(x.size(0), msg.size(1))
        agg.index_add_(0, dst, msg)
        deg = torch.zeros(x.size(0)).index_add_(0, dst, torch.ones(dst.numel()))
        agg /= deg.clamp(min=1).unsqueeze(1)
        return self.lin_root(x) + agg


class SAGE(nn.Module):
    def __init__(self, d_in=6, hidden=16, n_cls=3):
        super().__init__()
        self.conv1 = SAGEConv(d_in, hidden)
        self.conv2 = SAGEConv(hidden, n_cls)

    def forward(self, x, edge_index):
        h = F.relu(self.conv1(x, edge_index))
        return self.conv2(F.normalize(h, dim=1), edge_index)


if __name__ == "__main__":
    n = 20
    x = torch.randn(n, 6)
    edge_index = torch.randint(0, n, (2, 60))
    y = torch.randint(0, 3, (n,))
    model = SAGE()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(model(x, edge_index), y)
        loss.backward()
        opt.step()
        print("epoch", epoch, "loss", round(loss.item(), 4))
