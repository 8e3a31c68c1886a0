# source: loss balancing by magnitude (weights taken from the losses' current values with .item(), as in many multi-loss training scripts): the ratio is a Python float used as a coefficient on terms that keep their graph, so both terms still train the model
# family: G
# expect: ok
# line: 22
# fix: none needed: .item() only makes the coefficient; the weighted terms are tensors
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    start = model[0].weight.detach().clone()
    for step in range(3):
        x = torch.randn(16, 8)
        out = model(x)
        recon = F.mse_loss(out, x)
        smooth = (out[:, 1:] - out[:, :-1]).abs().mean()
        ratio = recon.item() / (smooth.item() + 1e-8)
        loss = recon + 0.1 * ratio * smooth
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss %.4f" % loss.item())
    moved = not torch.equal(start, model[0].weight.detach())
    print("MATCH" if moved else "MISMATCH: the model never trained")
