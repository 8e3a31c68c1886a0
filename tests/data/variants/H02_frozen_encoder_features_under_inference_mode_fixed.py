# source: linear-probe / feature-extraction code that decorates the frozen encoder call with @torch.inference_mode() for speed and trains a head on its output ("Inference tensors cannot be saved for backward"; torch.inference_mode docs: tensors created in inference mode cannot be used in computation recorded by autograd); cf. https://github.com/Lightning-AI/pytorch-lightning/issues/19910 (inference mode around steps that later backpropagate)
# family: H
# expect: ok
# line: 20, 21  (backward: 25, 35)
# fix: (fixed version of H02_frozen_encoder_features_under_inference_mode.py) use @torch.no_grad() for the frozen encoder (its outputs are normal tensors the head can save), or clone the features before the head
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LinearProbe(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(20, 64), nn.GELU(), nn.Linear(64, 32))
        self.encoder.requires_grad_(False)
        self.head = nn.Linear(32, 5)

    @torch.no_grad()
    def features(self, x):
        return self.encoder(x)

    def forward(self, x):
        return self.head(self.features(x))


if __name__ == "__main__":
    probe = LinearProbe()
    opt = torch.optim.Adam(probe.head.parameters(), lr=1e-3)
    for step in range(3):
        x, y = torch.randn(16, 20), torch.randint(0, 5, (16,))
        loss = F.cross_entropy(probe(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", loss.item())
