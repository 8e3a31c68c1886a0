# fix-kind: detach_instead
# why: FGSM: the batch moved with `.to(device)` is still a leaf (same device and dtype), so
#      `data.requires_grad = True` is allowed and `data.grad` is filled; replacing it with
#      `data.retain_grad()` raises (the tensor does not require grad).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("cpu")
model = nn.Sequential(nn.Linear(6, 4), nn.ReLU(), nn.Linear(4, 3))
loader = [(torch.randn(2, 6), torch.randint(0, 3, (2,))) for _ in range(2)]
for data, target in loader:
    data, target = data.to(device), target.to(device)
    data.requires_grad = True
    output = model(data)
    loss = F.nll_loss(F.log_softmax(output, dim=1), target)
    model.zero_grad()
    loss.backward()
    perturbed = torch.clamp(data + 0.1 * data.grad.sign(), -3, 3)
    print(f"{loss.item():.6f} {perturbed.sum().item():.6f}")
