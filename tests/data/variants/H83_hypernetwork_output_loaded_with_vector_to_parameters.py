# source: hypernetworks that generate a target network's weights (Ha et al.; the pattern discussed in SSL92/hyperIQA#5 and google/qhbm-library#93 'Enable differentiation through hypernetworks'): the generated flat vector is loaded with torch.nn.utils.vector_to_parameters, which assigns param.data, so the loss never reaches the hypernetwork
# family: H
# expect: silent
# verify: the hypernetwork's .grad after a backward: None means it never trains
# line: 33, 34
# fix: call the target functionally with the generated tensors: return functional_call(self.target, self.split(flat), (x,))
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

torch.manual_seed(0)


class WeightGenerator(nn.Module):
    def __init__(self, target, z_dim=4):
        super().__init__()
        self.target = target
        self.shapes = [(n, p.shape) for n, p in target.named_parameters()]
        n_out = sum(p.numel() for p in target.parameters())
        self.z = nn.Parameter(torch.randn(z_dim))
        self.gen = nn.Linear(z_dim, n_out)

    def split(self, flat):
        out, i = {}, 0
        for name, shape in self.shapes:
            out[name] = flat[i:i + shape.numel()].view(shape)
            i += shape.numel()
        return out

    def forward(self, x):
        flat = 0.1 * self.gen(self.z)
        nn.utils.vector_to_parameters(flat, self.target.parameters())
        return self.target(x)


if __name__ == "__main__":
    hyper = WeightGenerator(nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1)))
    opt = torch.optim.Adam(hyper.parameters(), lr=1e-2)
    x = torch.randn(16, 5)
    y = x.sum(dim=1, keepdim=True)
    for step in range(3):
        opt.zero_grad()
        loss = F.mse_loss(hyper(x), y)
        loss.backward()
        opt.step()
        print("step", step, "loss %.4f" % loss.item())
    g = hyper.gen.weight.grad
    print("MATCH" if g is not None and g.abs().sum() > 0 else "MISMATCH: the generator got no gradient (%s)" % g)
