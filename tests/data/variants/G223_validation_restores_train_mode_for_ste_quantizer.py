# source: the fix of https://github.com/ermongroup/ncsn/issues/2 ("I have just fixed this in the code": the model goes back to train() after the validation log) for a learned-compression model whose quantizer is straight-through in training mode and hard rounding in eval mode
# family: G
# expect: ok
# line: 33
# fix: none needed - validate() restores the mode it found, so every training step uses the straight-through path
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Quantizer(nn.Module):
    def forward(self, y):
        if self.training:
            return y + (torch.round(y) - y).detach()
        return torch.round(y)


class Compressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.analysis = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 6))
        self.quantizer = Quantizer()
        self.synthesis = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 16))

    def forward(self, x):
        return self.synthesis(self.quantizer(self.analysis(x) * 4.0) / 4.0)


def validate(model, batches):
    was_training = model.training
    model.eval()
    with torch.no_grad():
        val = sum(F.mse_loss(model(x), x).item() for x in batches) / len(batches)
    model.train(was_training)
    return val


if __name__ == "__main__":
    model = Compressor()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    for epoch in range(3):
        for _ in range(3):
            x = torch.randn(16, 16)
            loss = F.mse_loss(model(x), x)
            opt.zero_grad()
            loss.backward()
            grad_max = max(p.grad.abs().max().item() for p in model.analysis.parameters())
            opt.step()
        print("epoch", epoch, "loss %.4f val %.4f" % (loss.item(), validate(model, [torch.randn(16, 16)])))
        if grad_max == 0.0:
            print("MISMATCH: the analysis transform got a zero gradient")
