# source: activation-sparsity penalties read from an attribute a forward hook sets on the module (module.last_activation = output) where the module runs once per forward
# family: G
# expect: ok
# line: 28
# fix: none needed: the hooked module runs once per step, so the attribute holds this step's live activation
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def remember(module, inputs, output):
    module.last_activation = output


class SparseAutoencoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 32), nn.ReLU())
        self.encoder.register_forward_hook(remember)
        self.decoder = nn.Linear(32, 8)

    def forward(self, x):
        return self.decoder(self.encoder(x))


if __name__ == "__main__":
    net = SparseAutoencoder()
    x = torch.randn(10, 8)
    loss = F.mse_loss(net(x), x) + 1e-2 * net.encoder.last_activation.abs().mean()
    loss.backward()
    meant = F.mse_loss(net(x), x) + 1e-2 * net.encoder(x).abs().mean()
    print("MISMATCH: the penalty is not the live one" if not torch.allclose(loss, meant) else "MATCH")
