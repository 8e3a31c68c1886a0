# source: https://docs.pytorch.org/tutorials/beginner/nn_tutorial.html (weights = torch.randn(784, 10) / math.sqrt(784); weights.requires_grad_() - requires_grad is set after the initialization math, https://github.com/pytorch/tutorials/issues/3716), with the tutorial's manual SGD under torch.no_grad()
# family: G
# expect: ok
# line: 16
# fix: none needed - the weight becomes a leaf after the scaling, so its .grad is populated
import math

import torch
import torch.nn.functional as F

torch.manual_seed(0)


if __name__ == "__main__":
    weights = torch.randn(20, 4) / math.sqrt(20)
    weights.requires_grad_()
    bias = torch.zeros(4, requires_grad=True)
    x, y = torch.randn(32, 20), torch.randint(0, 4, (32,))
    lr = 0.5
    for epoch in range(3):
        loss = F.cross_entropy(x @ weights + bias, y)
        loss.backward()
        with torch.no_grad():
            weights -= weights.grad * lr
            bias -= bias.grad * lr
            weights.grad.zero_()
            bias.grad.zero_()
        print("epoch", epoch, "loss", loss.item())
