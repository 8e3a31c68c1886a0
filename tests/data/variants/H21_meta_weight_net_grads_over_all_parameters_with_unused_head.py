# source: https://github.com/ShiYunyi/Meta-Weight-Net_Code-Optimization/issues/5 (pseudo_grads = torch.autograd.grad(pseudo_loss, pseudo_net.parameters(), create_graph=True) -> "One of the differentiated Tensors appears to not have been used in the graph" with the user's own model, which has a parameterised module the forward does not use)
# family: H
# expect: error
# line: 36
# fix: tolerate parameters outside the graph: torch.autograd.grad(..., create_graph=True, allow_unused=True) and skip the None gradients (or differentiate only the parameters the forward uses)
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self, use_aux=False):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.classifier = nn.Linear(32, 4)
        self.aux_classifier = nn.Linear(32, 4)
        self.use_aux = use_aux

    def forward(self, x):
        h = self.features(x)
        return self.classifier(h) + (self.aux_classifier(h) if self.use_aux else 0)


if __name__ == "__main__":
    net = Net()
    meta_net = nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
    meta_opt = torch.optim.Adam(meta_net.parameters(), lr=1e-3)
    x, y, x_meta, y_meta = torch.randn(16, 10), torch.randint(0, 4, (16,)), torch.randn(8, 10), torch.randint(0, 4, (8,))
    names, params = zip(*net.named_parameters())
    losses = F.cross_entropy(net(x), y, reduction="none")
    weights = meta_net(losses.detach().unsqueeze(1)).squeeze(1)
    pseudo_loss = (weights * losses).mean()
    pseudo_grads = torch.autograd.grad(pseudo_loss, params, create_graph=True)
    fast = {n: p - 0.1 * g if g is not None else p for n, p, g in zip(names, params, pseudo_grads)}
    meta_loss = F.cross_entropy(functional_call(net, fast, (x_meta,)), y_meta)
    meta_opt.zero_grad()
    meta_loss.backward()
    meta_opt.step()
    print("meta loss", meta_loss.item())
