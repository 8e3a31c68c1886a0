# source: training scripts that pass a command-line clip value of 0 (meaning "no clipping" to the author) to torch.nn.utils.clip_grad_value_ (forum threads "model not learning, loss constant", "weights don't change after adding gradient clipping"): clipping to [-0, 0] sets every gradient to zero before the step
# family: H
# expect: ok
# verify: the first layer's weight is compared before and after the steps
# line: 23
# fix: (fixed version of H166_gradient_value_clipping_with_a_clip_value_of_zero.py) clip only when a clip value is given: if clip_value > 0: clip_grad_value_(model.parameters(), clip_value)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


if __name__ == "__main__":
    clip_value = 0.0
    model = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 5), torch.randn(16, 1)
    before = model[0].weight.detach().clone()
    for _ in range(3):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        if clip_value > 0: torch.nn.utils.clip_grad_value_(model.parameters(), clip_value)
        opt.step()
    print("MISMATCH: the weights never move" if torch.equal(before, model[0].weight) else "MATCH")
