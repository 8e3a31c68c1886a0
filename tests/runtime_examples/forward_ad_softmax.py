"""pytorch#162350: softmax under forward-mode AD, then backward: torch raises a version-counter
error for an in-place write it makes internally (logsumexp_jvp). It must raise under the tool too."""
import torch
import torch.nn as nn
import torch.autograd.forward_ad as fwAD

torch.manual_seed(0)


class AttnScores(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)

    def forward(self, x):
        s = self.q(x) @ self.k(x).transpose(-1, -2) / 4.0
        return s.softmax(dim=-1)


def jvp_regularised_loss(model, x, v):
    """Loss that mixes the primal output with its directional derivative (forward-mode)."""
    with fwAD.dual_level():
        dual_x = fwAD.make_dual(x, v)
        attn = model(dual_x)
        primal, tangent = fwAD.unpack_dual(attn)
        return primal.pow(2).sum() + tangent.pow(2).sum()


if __name__ == "__main__":
    model = AttnScores()
    x = torch.randn(2, 6, 16, requires_grad=True)
    loss = jvp_regularised_loss(model, x, torch.randn_like(x))
    loss.backward()
    print("loss", loss.item())
