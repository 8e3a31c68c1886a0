# source: GNNExplainer re-implementations (learned soft edge mask nn.Parameter squashed with sigmoid before weighting the messages), written with the in-place self.edge_mask.sigmoid_()
# family: A
# expect: error
# line: 36
# fix: m = self.edge_mask.sigmoid() (out-of-place; the mask is a leaf Parameter)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class WeightedGCN(nn.Module):
    def __init__(self, d_in=8, hidden=16, n_cls=3):
        super().__init__()
        self.lin1 = nn.Linear(d_in, hidden)
        self.lin2 = nn.Linear(hidden, n_cls)

    def propagate(self, h, edge_index, edge_weight):
        src, dst = edge_index
        out = torch.zeros_like(h)
        return out.index_add(0, dst, h[src] * edge_weight.unsqueeze(1))

    def forward(self, x, edge_index, edge_weight):
        h = F.relu(self.propagate(self.lin1(x), edge_index, edge_weight))
        return self.propagate(self.lin2(h), edge_index, edge_weight)


class EdgeMaskExplainer(nn.Module):
    def __init__(self, model, num_edges):
        super().__init__()
        self.model = model
        self.edge_mask = nn.Parameter(torch.randn(num_edges) * 0.1)

    def forward(self, x, edge_index, node_idx, label):
        m = self.edge_mask.sigmoid_()
        logits = self.model(x, edge_index, m)
        loss = F.cross_entropy(logits[node_idx:node_idx + 1], label)
        size_reg = 0.005 * m.sum()
        ent = -m * torch.log(m + 1e-15) - (1 - m) * torch.log(1 - m + 1e-15)
        return loss + size_reg + ent.mean()


if __name__ == "__main__":
    num_nodes, num_edges = 10, 30
    x = torch.randn(num_nodes, 8)
    edge_index = torch.randint(0, num_nodes, (2, num_edges))
    model = WeightedGCN().eval()
    model.requires_grad_(False)
    explainer = EdgeMaskExplainer(model, num_edges)
    opt = torch.optim.Adam([explainer.edge_mask], lr=0.01)
    label = torch.tensor([1])
    for epoch in range(5):
        opt.zero_grad()
        loss = explainer(x, edge_index, 3, label)
        loss.backward()
        opt.step()
    print("explanation loss", round(loss.item(), 4))
