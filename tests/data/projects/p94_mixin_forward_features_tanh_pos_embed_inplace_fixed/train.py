import torch
import torch.nn.functional as F

from models import TinyViT

model = TinyViT()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
torch.manual_seed(0)
for step in range(3):
    x = torch.randn(4, 5, 12)
    y = torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
