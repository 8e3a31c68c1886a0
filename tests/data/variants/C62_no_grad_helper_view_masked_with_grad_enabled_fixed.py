# source: "A view was created in no_grad mode and is being modified inplace with grad mode enabled" reports: an MAE/BEiT-style patch model gets its token grid from a @torch.no_grad() helper (meant as cheap bookkeeping) and then writes the mask token into that view during training
# family: C
# expect: ok
# line: 28, 35
# fix: (fixed version of C62_no_grad_helper_view_masked_with_grad_enabled.py) build the grid view outside no_grad (drop the @torch.no_grad() decorator of token_grid)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MaskedPatchModel(nn.Module):
    def __init__(self, patch=4, dim=16, n_cls=3):
        super().__init__()
        self.patch = patch
        self.embed = nn.Linear(patch * patch, dim)
        self.mask_token = nn.Parameter(torch.zeros(dim))
        self.head = nn.Linear(dim, n_cls)

    def patchify(self, img):
        p = self.patch
        B, H, W = img.shape
        x = img.reshape(B, H // p, p, W // p, p).permute(0, 1, 3, 2, 4)
        return x.reshape(B, (H // p) * (W // p), p * p), H // p, W // p

    def token_grid(self, tokens, gh, gw):
        return tokens.view(tokens.size(0), gh, gw, -1)

    def forward(self, img, n_masked_cols=1):
        patches, gh, gw = self.patchify(img)
        tokens = self.embed(patches)
        grid = self.token_grid(tokens, gh, gw)
        if self.training:
            grid[:, :, :n_masked_cols] = self.mask_token
        return self.head(tokens.mean(1))


if __name__ == "__main__":
    model = MaskedPatchModel()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    img, y = torch.randn(4, 16, 16), torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(img), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss", loss.item())
