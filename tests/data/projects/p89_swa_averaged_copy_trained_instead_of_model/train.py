import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

from swa.loop import train_epoch
from swa.utils import wrap_swa


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    swa_model = wrap_swa(model)
    data = [(torch.randn(16, 6), torch.randn(16, 1)) for _ in range(3)]
    ref = copy.deepcopy(model)
    train_epoch(model, swa_model, optimizer, data[:1])
    ref_loss = F.mse_loss(ref(data[0][0]), data[0][1])
    ref_grad = torch.autograd.grad(ref_loss, ref[0].weight)[0]
    got = model[0].weight.grad
    ok = got is not None and torch.allclose(got, ref_grad, atol=1e-6)
    print("MATCH" if ok else "MISMATCH: the model's gradient is not the loss's")


if __name__ == "__main__":
    main()
