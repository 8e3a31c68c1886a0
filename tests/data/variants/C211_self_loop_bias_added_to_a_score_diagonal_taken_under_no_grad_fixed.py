# source: graph / set attention layers that add a learned self-loop bias to the diagonal of the score matrix (forum threads "A view was created in no grad mode and is being modified inplace with grad mode enabled"): the diagonal view is taken inside a no_grad block meant only for the mask, then written with add_ after it
# family: C
# expect: ok
# line: 26  (backward: 27)
# fix: (fixed version of C211_self_loop_bias_added_to_a_score_diagonal_taken_under_no_grad.py) take the diagonal outside the no_grad block: diag = scores.diagonal(dim1=-2, dim2=-1)
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SelfLoopAttention(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.qk = nn.Linear(d, 2 * d)
        self.self_bias = nn.Parameter(torch.tensor(0.5))

    def forward(self, x, adjacency):
        q, k = self.qk(x).chunk(2, dim=-1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        with torch.no_grad():
            blocked = adjacency == 0
        diag = scores.diagonal(dim1=-2, dim2=-1)
        diag.add_(self.self_bias)
        scores = scores.masked_fill(blocked, -1e9)
        return scores.softmax(-1) @ x


if __name__ == "__main__":
    layer = SelfLoopAttention()
    x = torch.randn(2, 5, 8)
    adjacency = (torch.rand(2, 5, 5) > 0.4).float() + torch.eye(5)
    out = layer(x, adjacency)
    loss = out.pow(2).mean()
    loss.backward()
    print("loss %.4f" % loss.item())
