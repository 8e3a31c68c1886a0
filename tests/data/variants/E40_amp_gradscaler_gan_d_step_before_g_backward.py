# source: mixed-precision GAN loops (torch.amp.GradScaler) that do scaler.step(optD) after lossD's backward(retain_graph=True) and only then backpropagate lossG through the same D forward
# family: E
# expect: error
# line: 22  (backward: 25)
# fix: backpropagate lossG before scaler.step(optD) (or recompute D(fake) for the generator after the D update)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def train_step(G, D, optG, optD, scaler, real, nz=6):
    z = torch.randn(real.size(0), nz)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=False):
        fake = G(z)
        d_fake = D(fake)
        lossD = F.softplus(d_fake).mean() + F.softplus(-D(real)).mean()
        lossG = F.softplus(-d_fake).mean()
    optD.zero_grad()
    scaler.scale(lossD).backward(retain_graph=True)
    scaler.step(optD)
    scaler.update()
    optG.zero_grad()
    scaler.scale(lossG).backward()
    scaler.step(optG)
    scaler.update()
    return lossD.item(), lossG.item()


if __name__ == "__main__":
    G = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 8))
    D = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    optG = torch.optim.Adam(G.parameters(), lr=2e-4)
    optD = torch.optim.Adam(D.parameters(), lr=2e-4)
    scaler = torch.amp.GradScaler("cpu")
    print(train_step(G, D, optG, optD, scaler, torch.randn(8, 8)))
