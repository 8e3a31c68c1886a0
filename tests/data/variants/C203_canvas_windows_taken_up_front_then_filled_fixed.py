# source: https://github.com/keras-team/keras-core/pull/405 ("slice_update ... would fail when gradients are needed: RuntimeError: a leaf Variable that requires grad is being used in an in-place operation") and https://github.com/divelab/DIG/issues/164 (same message); here patch pasting takes every target window of a zero canvas up front and fills them one by one with values that require grad: the first copy turns the canvas into a graph node, the windows taken before still behave as leaves that require grad (measured on torch 2.13; reading window.grad_fn before the copy hides the error)
# family: C
# expect: ok
# line: 24, 27
# fix: (fixed version of C203_canvas_windows_taken_up_front_then_filled.py) take each slice at the moment it is written (canvas[:, :, y:y + s, x:x + s] = patch), or assemble the canvas out of place
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PatchDecoder(nn.Module):
    """Decode a grid of patch embeddings and paste the patches into an image."""

    def __init__(self, dim=16, patch=4, grid=3):
        super().__init__()
        self.to_patch = nn.Linear(dim, 3 * patch * patch)
        self.patch, self.grid = patch, grid

    def forward(self, tokens):
        n, p, g = tokens.shape[0], self.patch, self.grid
        image = torch.zeros(n, 3, g * p, g * p)
        windows = [image[:, :, i * p:(i + 1) * p, j * p:(j + 1) * p] for i in range(g) for j in range(g)]
        patches = self.to_patch(tokens).view(n, g * g, 3, p, p)
        for k, (i, j) in enumerate((i, j) for i in range(g) for j in range(g)):
            image[:, :, i * p:(i + 1) * p, j * p:(j + 1) * p] = patches[:, k]
        return image


if __name__ == "__main__":
    decoder = PatchDecoder()
    tokens, target = torch.randn(2, 9, 16), torch.rand(2, 3, 12, 12)
    loss = F.mse_loss(decoder(tokens), target)
    loss.backward()
    print("loss", loss.item())
