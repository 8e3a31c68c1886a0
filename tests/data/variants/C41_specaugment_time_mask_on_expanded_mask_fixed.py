# source: SpecAugment-style masking that builds the per-channel mask with expand() and then zeroes time stripes in it in place (all channels share one memory row)
# family: C
# expect: ok
# line: 19
# fix: (fixed version of C41_specaugment_time_mask_on_expanded_mask.py) build the mask with real storage: mask = torch.ones(B, 1, T).repeat(1, C, 1) (or .expand(...).clone())
import torch
import torch.nn as nn

torch.manual_seed(0)


def time_mask(feats, max_width=3, n_masks=2):
    B, C, T = feats.shape
    mask = torch.ones(B, 1, T).repeat(1, C, 1)
    for b in range(B):
        for _ in range(n_masks):
            w = int(torch.randint(1, max_width + 1, (1,)))
            t0 = int(torch.randint(0, T - w, (1,)))
            mask[b, :, t0:t0 + w] = 0.0
    return feats * mask


class Encoder(nn.Module):
    def __init__(self, n_mels=8, d=16):
        super().__init__()
        self.conv = nn.Conv1d(n_mels, d, 3, padding=1)
        self.head = nn.Linear(d, 4)

    def forward(self, feats):
        return self.head(torch.relu(self.conv(feats)).mean(-1))


if __name__ == "__main__":
    enc = Encoder()
    feats, y = torch.randn(2, 8, 20), torch.tensor([1, 3])
    loss = nn.functional.cross_entropy(enc(time_mask(feats)), y)
    loss.backward()
    print("loss", loss.item())
