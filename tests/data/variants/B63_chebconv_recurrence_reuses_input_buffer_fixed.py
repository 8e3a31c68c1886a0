# source: ChebNet / ChebConv (Defferrard et al.; PyG ChebConv computes Tx_2 = 2 * L @ Tx_1 - Tx_0 out-of-place) hand-rolled with buffer reuse for the Chebyshev recurrence; Tx_0 is the raw node-feature matrix that lins[0] saved for its weight gradient
# family: B
# expect: ok
# line: 26  (backward: 49)
# fix: (fixed version of B63_chebconv_recurrence_reuses_input_buffer.py) compute the recurrence out-of-place: Tx_2 = 2.0 * (L_hat @ Tx_1) - Tx_0
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ChebConv(nn.Module):
    def __init__(self, d_in, d_out, K=3):
        super().__init__()
        self.lins = nn.ModuleList([nn.Linear(d_in, d_out, bias=False) for _ in range(K)])
        self.bias = nn.Parameter(torch.zeros(d_out))

    def forward(self, x, L_hat):
        Tx_0 = x
        out = self.lins[0](Tx_0)
        Tx_1 = L_hat @ x
        out = out + self.lins[1](Tx_1)
        for k in range(2, len(self.lins)):
            # Chebyshev recurrence T_k = 2 L T_{k-1} - T_{k-2}, reusing T_{k-2}'s memory
            Tx_2 = 2.0 * (L_hat @ Tx_1) - Tx_0
            out = out + self.lins[k](Tx_2)
            Tx_0, Tx_1 = Tx_1, Tx_2
        return out + self.bias


def scaled_laplacian(adj):
    deg = adj.sum(1)
    d_inv_sqrt = deg.clamp(min=1).pow(-0.5)
    lap = torch.eye(adj.size(0)) - d_inv_sqrt[:, None] * adj * d_inv_sqrt[None, :]
    return lap - torch.eye(adj.size(0))  # 2 L / lambda_max - I with lambda_max = 2


if __name__ == "__main__":
    n = 12
    adj = (torch.rand(n, n) > 0.7).float()
    adj = ((adj + adj.t()) > 0).float().fill_diagonal_(0)
    L_hat = scaled_laplacian(adj)
    features = torch.randn(n, 5)
    labels = torch.randint(0, 3, (n,))
    conv1, conv2 = ChebConv(5, 16), ChebConv(16, 3)
    logits = conv2(F.relu(conv1(features, L_hat)), L_hat)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    print("loss", round(loss.item(), 4))
