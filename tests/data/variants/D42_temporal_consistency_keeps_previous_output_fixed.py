# source: video / streaming models with a temporal-consistency term that compares the current prediction with the previous batch's prediction stored on the module without detach
# family: D
# expect: ok
# line: 27  (backward: 38)
# fix: (fixed version of D42_temporal_consistency_keeps_previous_output.py) store a detached copy: self.prev_out = out.detach()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class StreamingDepth(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 3, padding=1))
        self.prev_out = None

    def forward(self, frame):
        return self.net(frame)

    def loss(self, frame, depth_gt, lam=0.1):
        out = self(frame)
        loss = F.l1_loss(out, depth_gt)
        if self.prev_out is not None:
            loss = loss + lam * F.mse_loss(out, self.prev_out)
        self.prev_out = out.detach()
        return loss


if __name__ == "__main__":
    model = StreamingDepth()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for t in range(3):
        frame, gt = torch.randn(1, 3, 8, 8), torch.rand(1, 1, 8, 8)
        loss = model.loss(frame, gt)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss", loss.item())
