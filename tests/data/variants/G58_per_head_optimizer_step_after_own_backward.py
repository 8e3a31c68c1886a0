# source: multi-head models trained with one optimizer per head (plus one for the trunk): each head is stepped right after its own backward(retain_graph=True), the trunk after all heads
# family: G
# expect: ok
# line: 26  (backward: 25)
# fix: none needed - a head's step only rewrites that head's weights, which no later backward pass uses (the other losses do not go through it); the shared trunk is stepped after every backward
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

trunk = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
heads = nn.ModuleList([nn.Linear(32, 3), nn.Linear(32, 5)])
trunk_opt = torch.optim.SGD(trunk.parameters(), lr=0.01)
head_opts = [torch.optim.Adam(h.parameters(), lr=1e-3) for h in heads]

for it in range(2):
    x = torch.randn(8, 10)
    targets = [torch.randint(0, 3, (8,)), torch.randint(0, 5, (8,))]
    feats = trunk(x)
    trunk_opt.zero_grad()
    for head, opt, y in zip(heads, head_opts, targets):
        opt.zero_grad()
        loss = F.cross_entropy(head(feats), y)
        loss.backward(retain_graph=True)
        opt.step()
    trunk_opt.step()
print("loss", loss.item())
