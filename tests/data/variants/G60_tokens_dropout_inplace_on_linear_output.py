# source: MLP-Mixer / ViT patch-embedding code applying F.dropout(..., inplace=True) right after the patch projection
# family: G
# expect: ok
# line: 25  (backward: 33)
# fix: none needed - the in-place dropout rewrites the output of a Linear (whose backward saves its input and weight), and the next LayerNorm saves the already-dropped tensor
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PatchEmbed(nn.Module):
    def __init__(self, patch=4, c=3, d=16, p=0.1):
        super().__init__()
        self.patch, self.p = patch, p
        self.proj = nn.Linear(patch * patch * c, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, img):
        B, C, H, W = img.shape
        patches = img.unfold(2, self.patch, self.patch).unfold(3, self.patch, self.patch)
        patches = patches.permute(0, 2, 3, 1, 4, 5).reshape(B, -1, C * self.patch * self.patch)
        x = self.proj(patches)
        F.dropout(x, self.p, self.training, inplace=True)
        return self.norm(x)


if __name__ == "__main__":
    embed = PatchEmbed().train()
    mixer = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16))
    loss = mixer(embed(torch.randn(2, 3, 8, 8))).pow(2).mean()
    loss.backward()
    print("loss", loss.item())
