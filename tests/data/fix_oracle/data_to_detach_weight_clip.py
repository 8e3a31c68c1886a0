# fix-kind: data_to_detach
# why: WGAN's weight clipping through `.data` after the step: nothing saved them for a pending
#      backward; `.detach()` in its place would do the same here, a copy would not clip.
import torch
import torch.nn as nn

torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.RMSprop(critic.parameters(), lr=5e-3)
for step in range(3):
    real, fake = torch.randn(8, 3) + 1, torch.randn(8, 3)
    loss = critic(fake).mean() - critic(real).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    for p in critic.parameters():
        p.data.clamp_(-0.05, 0.05)
    print(f"{step} {loss.item():.6f}")
