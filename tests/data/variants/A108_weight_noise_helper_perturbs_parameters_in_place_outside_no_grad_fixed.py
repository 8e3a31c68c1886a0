# source: noise-injection / weight-perturbation regularisers (flat-minima, SAM-like) whose helper does p.add_(torch.randn_like(p) * sigma) over model.parameters() without torch.no_grad() (forum threads "a leaf Variable that requires grad is being used in an in-place operation" in add_noise): an in-place write on a leaf that requires grad raises
# family: A
# expect: ok
# line: 15
# fix: (fixed version of A108_weight_noise_helper_perturbs_parameters_in_place_outside_no_grad.py) perturb under torch.no_grad() (with torch.no_grad(): for p in ...: p.add_(...))
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def add_weight_noise(model, sigma):
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * sigma)


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 5), torch.randn(16, 1)
    for _ in range(2):
        add_weight_noise(model, 0.01)
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    print("done")
