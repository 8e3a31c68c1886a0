# source: WaveNet's gated activation unit z = tanh(W_f * x) * sigmoid(W_g * x) (ibab/tensorflow-wavenet, r9y9/wavenet_vocoder) written with an in-place multiply to save memory: torch.tanh(f).mul_(torch.sigmoid(g)) overwrites the tanh output that TanhBackward saved, and the backward raises the version-counter error
# family: B
# expect: ok
# line: 22  (backward: 36)
# fix: (fixed version of B101_wavenet_gated_activation_tanh_multiplied_in_place.py) multiply out of place: z = torch.tanh(f) * torch.sigmoid(g)
import torch
import torch.nn as nn

torch.manual_seed(0)


class GatedResidualBlock(nn.Module):
    def __init__(self, channels, dilation):
        super().__init__()
        self.dilated = nn.Conv1d(channels, 2 * channels, 2, dilation=dilation, padding=dilation)
        self.res = nn.Conv1d(channels, channels, 1)
        self.skip = nn.Conv1d(channels, channels, 1)

    def forward(self, x):
        h = self.dilated(x)[..., :x.shape[-1]]
        f, g = h.chunk(2, dim=1)
        z = torch.tanh(f) * torch.sigmoid(g)
        return x + self.res(z), self.skip(z)


if __name__ == "__main__":
    blocks = nn.ModuleList([GatedResidualBlock(8, d) for d in (1, 2, 4)])
    inp, out = nn.Conv1d(1, 8, 1), nn.Conv1d(8, 256, 1)
    audio = torch.randn(2, 1, 32)
    target = torch.randint(0, 256, (2, 32))
    x, skips = inp(audio), 0
    for block in blocks:
        x, s = block(x)
        skips = skips + s
    loss = nn.functional.cross_entropy(out(torch.relu(skips)), target)
    loss.backward()
    print("loss %.4f" % loss.item())
