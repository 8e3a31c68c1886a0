# source: https://github.com/harvard-edge/cs249r_book/issues/1334 ("Parameters should change after optimizer update" fails: param.grad is None because the layer's tensors were created without requires_grad); in PyTorch the optimizer accepts such tensors silently and never moves them
# family: H
# expect: ok
# verify: the trained weight is compared with the same training run where the weight requires grad
# line: 15
# fix: (fixed version of H19_weight_tensor_created_without_requires_grad.py) create the weight as a trainable leaf: W = (torch.randn(4, 3) * 0.1).requires_grad_()
import torch
import torch.nn.functional as F

torch.manual_seed(0)


class ScratchLinear:
    def __init__(self, n_in, n_out, init):
        self.W = init.clone().requires_grad_()
        self.b = torch.zeros(n_out, requires_grad=True)

    def __call__(self, x):
        return x @ self.W + self.b

    def parameters(self):
        return [self.W, self.b]


def fit(layer, x, y, steps=10):
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    for _ in range(steps):
        loss = F.cross_entropy(layer(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return layer


if __name__ == "__main__":
    x, y = torch.randn(32, 4), torch.randint(0, 3, (32,))
    init = torch.randn(4, 3) * 0.1
    layer = fit(ScratchLinear(4, 3, init), x, y)
    ref = ScratchLinear(4, 3, init)
    ref.W = init.clone().requires_grad_()
    ref = fit(ref, x, y)
    print("MATCH" if torch.allclose(layer.W.detach(), ref.W.detach(), atol=1e-6) else "MISMATCH: the weight was never updated")
