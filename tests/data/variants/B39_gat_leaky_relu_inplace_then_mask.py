# source: pyGAT-style graph attention layer using F.leaky_relu(e, inplace=True) and then masking non-edges with e.masked_fill_ (leaky_relu_ keeps its result for backward)
# family: B
# expect: error
# line: 25, 26  (backward: 37)
# fix: use the out-of-place activation e = F.leaky_relu(e, self.alpha) (the later masked_fill_ is then harmless), or mask out-of-place
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GraphAttentionLayer(nn.Module):
    def __init__(self, in_features, out_features, alpha=0.2):
        super().__init__()
        self.W = nn.Linear(in_features, out_features, bias=False)
        self.a = nn.Linear(2 * out_features, 1, bias=False)
        self.alpha = alpha

    def forward(self, h, adj):
        Wh = self.W(h)
        N = Wh.size(0)
        pairs = torch.cat([Wh.unsqueeze(1).expand(N, N, -1), Wh.unsqueeze(0).expand(N, N, -1)], dim=-1)
        e = self.a(pairs).squeeze(-1)
        F.leaky_relu(e, self.alpha, inplace=True)
        e.masked_fill_(adj == 0, float("-inf"))
        attention = F.softmax(e, dim=1)
        return F.elu(attention @ Wh)


if __name__ == "__main__":
    n = 5
    adj = (torch.rand(n, n) > 0.5).float() + torch.eye(n)
    layer = GraphAttentionLayer(4, 8)
    out = layer(torch.randn(n, 4), adj)
    loss = out.pow(2).sum()
    loss.backward()
    print("loss", loss.item())
