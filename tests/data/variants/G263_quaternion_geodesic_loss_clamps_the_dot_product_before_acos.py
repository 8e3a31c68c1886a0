# source: rotation-regression code (pose estimation) with the quaternion geodesic loss 2 * acos(|<q_pred, q_gt>|), where the dot product is clamped below 1 before the acos so a prediction equal to its target has a finite gradient
# family: G
# expect: ok
# line: 23
# fix: none needed: acos never sees 1
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class QuatHead(nn.Module):
    def __init__(self, d=9):
        super().__init__()
        self.fc = nn.Linear(d, 4)

    def forward(self, x):
        return F.normalize(self.fc(x), dim=-1)


def geodesic(q_pred, q_gt, eps=1e-6):
    dot = (q_pred * q_gt).sum(-1).abs().clamp(max=1.0 - eps)
    return (2.0 * torch.acos(dot)).mean()


if __name__ == "__main__":
    head = QuatHead()
    x = torch.randn(6, 9)
    q_gt = head(x).detach()
    q_gt[3:] = F.normalize(torch.randn(3, 4), dim=-1)
    geodesic(head(x), q_gt).backward()
    print("MATCH" if torch.isfinite(head.fc.weight.grad).all() else "MISMATCH: non-finite gradient")
