# source: https://github.com/ermongroup/ncsn/issues/2 ("Model in eval forever after the first log on validation": the model is put in eval() to log the validation loss and never put back in train()); here a learned-compression model whose quantizer passes gradients straight through only in training mode and rounds hard in eval mode
# family: H
# expect: silent
# verify: after the first validation the analysis transform's gradient is compared with autograd's gradient of the same model in training mode
# line: 57  (backward: 45)
# fix: put the model back in training mode at the start of every epoch (call model.train() inside the epoch loop), since validate() switches it to eval
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Quantizer(nn.Module):
    def forward(self, y):
        if self.training:
            return y + (torch.round(y) - y).detach()  # straight-through estimator
        return torch.round(y)


class Compressor(nn.Module):
    def __init__(self, din=16, latent=6):
        super().__init__()
        self.analysis = nn.Sequential(nn.Linear(din, 32), nn.ReLU(), nn.Linear(32, latent))
        self.quantizer = Quantizer()
        self.synthesis = nn.Sequential(nn.Linear(latent, 32), nn.ReLU(), nn.Linear(32, din))

    def forward(self, x):
        y = self.analysis(x) * 4.0
        return self.synthesis(self.quantizer(y) / 4.0)


def validate(model, batches):
    model.eval()
    with torch.no_grad():
        return sum(F.mse_loss(model(x), x).item() for x in batches) / len(batches)


def train_epoch(model, opt, batches, record):
    for x in batches:
        loss = F.mse_loss(model(x), x)
        opt.zero_grad()
        loss.backward()
        record[:] = [x, copy.deepcopy(model.state_dict()), [p.grad.clone() for p in model.analysis.parameters()]]
        opt.step()
    return loss.item()


if __name__ == "__main__":
    model = Compressor()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    train_batches = [torch.randn(16, 16) for _ in range(4)]
    val_batches = [torch.randn(16, 16) for _ in range(2)]
    last_step = []
    model.train()
    for epoch in range(3):
        train_loss = train_epoch(model, opt, train_batches, last_step)
        print("epoch", epoch, "train %.4f val %.4f" % (train_loss, validate(model, val_batches)))

    x, state, got = last_step  # the gradient the last training step used
    reference = Compressor()
    reference.load_state_dict(state)
    reference.train()
    ref = torch.autograd.grad(F.mse_loss(reference(x), x), list(reference.analysis.parameters()))
    if all(torch.allclose(g, r, atol=1e-6) for g, r in zip(got, ref)):
        print("MATCH")
    else:
        print("MISMATCH: the quantizer rounds without its straight-through path; analysis gradient max",
              max(g.abs().max().item() for g in got), "instead of", max(r.abs().max().item() for r in ref))
