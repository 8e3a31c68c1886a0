# source: siamese / two-view encoders with an activation-sparsity penalty read from an attribute the forward hook sets on the module (module.last_activation = output; forum threads "hook only captures the second input"): the shared encoder runs twice per step, so the second call overwrites the first and the penalty covers only the right view
# family: H
# expect: ok
# verify: the hooked penalty is compared with the same penalty computed over both views
# line: 15, 34  (backward: 36)
# fix: (fixed version of H124_siamese_encoder_hook_keeps_its_activation_as_a_module_attribute.py) keep every call: module.activations.append(output), cleared before each forward, and average the penalty over the list
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def remember(module, inputs, output):
    module.activations.append(output)


class Siamese(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.encoder.register_forward_hook(remember)
        self.encoder.activations = []
        self.score = nn.Linear(16, 1)

    def forward(self, left, right):
        self.encoder.activations.clear()
        return self.score((self.encoder(left) - self.encoder(right)).abs()).squeeze(-1)


if __name__ == "__main__":
    net = Siamese()
    left, right = torch.randn(10, 8), torch.randn(10, 8)
    same = torch.randint(0, 2, (10,)).float()
    logits = net(left, right)
    sparsity = torch.stack([h.abs().mean() for h in net.encoder.activations]).mean()
    loss = F.binary_cross_entropy_with_logits(logits, same) + 0.5 * sparsity
    loss.backward()
    meant = F.binary_cross_entropy_with_logits(net(left, right), same) + 0.5 * (net.encoder(left).abs().mean() + net.encoder(right).abs().mean()) / 2
    print("MISMATCH: the penalty misses the left view" if not torch.allclose(loss, meant) else "MATCH")
