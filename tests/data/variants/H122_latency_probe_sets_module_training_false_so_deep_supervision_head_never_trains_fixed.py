# source: deep-supervision networks (UNet++ / GoogLeNet-style auxiliary heads returned only while self.training) with a latency probe run before training that switches modes by assigning m.training = False on every submodule (forum threads "auxiliary head weights never change"): the probe never restores train mode, so the auxiliary head is never used in the loss
# family: H
# expect: ok
# verify: the auxiliary head's weight is compared before and after the training steps
# line: 32  (backward: 49)
# fix: (fixed version of H122_latency_probe_sets_module_training_false_so_deep_supervision_head_never_trains.py) restore the mode in the probe: remember model.training and call model.train(was_training) before returning
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DeepSupervised(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
        self.mid_head = nn.Linear(16, 3)
        self.top = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3))

    def forward(self, x):
        h = self.stem(x)
        if self.training:
            return self.top(h), self.mid_head(h)
        return self.top(h)


def probe_latency(model, x):
    was_training = model.training
    model.eval()
    start = time.perf_counter()
    with torch.no_grad():
        model(x)
    model.train(was_training)
    return time.perf_counter() - start


if __name__ == "__main__":
    model = DeepSupervised()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(24, 10), torch.randint(0, 3, (24,))
    print("latency %.6f" % (probe_latency(model, x) * 0))
    before = model.mid_head.weight.detach().clone()
    for epoch in range(3):
        out = model(x)
        loss = F.cross_entropy(out[0], y) + 0.4 * F.cross_entropy(out[1], y) if isinstance(out, tuple) else F.cross_entropy(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("MISMATCH: the auxiliary head never trained" if torch.equal(before, model.mid_head.weight.detach()) else "MATCH")
