# source: hand-written focal / BCE losses that clamp the probabilities in place for log-stability (`p = torch.sigmoid(logits); p.clamp_(eps, 1 - eps)`)
# family: B
# expect: ok
# line: 14  (backward: 36)
# fix: (fixed version of B36_focal_bce_sigmoid_clamp_inplace.py) clamp out-of-place: p = torch.sigmoid(logits).clamp(eps, 1 - eps)
import torch
import torch.nn as nn

torch.manual_seed(0)


def binary_focal_loss(logits, targets, gamma=2.0, eps=1e-6):
    p = torch.sigmoid(logits)
    p = p.clamp(eps, 1 - eps)
    ce = -(targets * torch.log(p) + (1 - targets) * torch.log(1 - p))
    p_t = p * targets + (1 - p) * (1 - targets)
    return ((1 - p_t) ** gamma * ce).mean()


class MultiLabelHead(nn.Module):
    def __init__(self, d=12, n_labels=5):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d, 16), nn.ReLU())
        self.cls = nn.Linear(16, n_labels)

    def forward(self, x):
        return self.cls(self.body(x))


if __name__ == "__main__":
    model = MultiLabelHead()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(8, 12), (torch.rand(8, 5) > 0.7).float()
    loss = binary_focal_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss", loss.item())
