# source: hand-written BCE in PyTorch ports of TF code: log-probabilities clamped in place to -100 like nn.BCELoss does
# family: G
# expect: ok
# line: 15, 16  (backward: 24)
# fix: none needed - torch.log saves its input (the sigmoid output), not its output, so clamping the log in place leaves every saved tensor intact
import torch
import torch.nn as nn

torch.manual_seed(0)


def bce(probs, target):
    log_p = torch.log(probs)
    log_1mp = torch.log(1 - probs)
    log_p.clamp_(min=-100)
    log_1mp.clamp_(min=-100)
    return -(target * log_p + (1 - target) * log_1mp).mean()


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3), nn.Sigmoid())
    x, y = torch.randn(8, 6), (torch.rand(8, 3) > 0.5).float()
    loss = bce(model(x), y)
    loss.backward()
    ref = nn.functional.binary_cross_entropy(model(x), y)
    print("loss", loss.item(), "ref", ref.item())
