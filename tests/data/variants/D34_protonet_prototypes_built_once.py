# source: few-shot (ProtoNet) fine-tuning scripts that compute the class prototypes from the support set once, outside the episode loop, with the trainable encoder
# family: D
# expect: error
# line: 17, 22  (backward: 25)
# fix: recompute the prototypes inside the loop (or detach them: prototypes = ....detach())
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

n_way, k_shot, n_query, dim = 3, 2, 4, 10
encoder = nn.Sequential(nn.Linear(dim, 16), nn.ReLU(), nn.Linear(16, 8))
optimizer = torch.optim.Adam(encoder.parameters(), lr=1e-3)

support = torch.randn(n_way, k_shot, dim)
prototypes = encoder(support.view(-1, dim)).view(n_way, k_shot, -1).mean(1)

for step in range(3):
    query = torch.randn(n_way * n_query, dim)
    labels = torch.arange(n_way).repeat_interleave(n_query)
    logits = -torch.cdist(encoder(query), prototypes)
    loss = F.cross_entropy(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("loss", loss.item())
