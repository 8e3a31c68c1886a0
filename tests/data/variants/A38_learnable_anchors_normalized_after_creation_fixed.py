# source: metric-learning / prototype snippets: a learnable tensor is created with requires_grad=True and then normalised in place
# family: A
# expect: ok
# line: 12
# fix: (fixed version of A38_learnable_anchors_normalized_after_creation.py) normalise before turning on requires_grad (or do the in-place division under torch.no_grad())
import torch
import torch.nn.functional as F

torch.manual_seed(0)

anchors = torch.randn(6, 8)
anchors /= anchors.norm(dim=1, keepdim=True)
anchors.requires_grad_(True)
encoder = torch.nn.Linear(12, 8)
opt = torch.optim.SGD([anchors] + list(encoder.parameters()), lr=0.1)

for step in range(3):
    x, y = torch.randn(10, 12), torch.randint(0, 6, (10,))
    emb = F.normalize(encoder(x), dim=1)
    logits = emb @ F.normalize(anchors, dim=1).t() / 0.1
    loss = F.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("loss", loss.item())
