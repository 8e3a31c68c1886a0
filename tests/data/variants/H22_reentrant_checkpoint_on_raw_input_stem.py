# source: https://github.com/huggingface/transformers/issues/23170 ("Gradient Checkpointing Fails with frozen parameters ... UserWarning: None of the inputs have requires_grad=True. Gradients will be None"): with the reentrant checkpoint, a checkpointed block whose inputs do not require grad gives its own parameters no gradient
# family: H
# expect: silent
# verify: the stem's gradient is compared with the gradient of the same model run without checkpointing
# line: 27
# fix: use the non-reentrant checkpoint (checkpoint(self.stem, x, use_reentrant=False)), which gives parameters their gradients whatever the inputs
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

warnings.filterwarnings("ignore", message="None of the inputs have requires_grad=True")
torch.manual_seed(0)


class CheckpointedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Linear(16, 32), nn.GELU())
        self.blocks = nn.Sequential(nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 4))
        self.gradient_checkpointing = True

    def forward(self, x):
        if self.gradient_checkpointing:
            h = checkpoint(self.stem, x, use_reentrant=True)
        else:
            h = self.stem(x)
        return self.blocks(h)


if __name__ == "__main__":
    model = CheckpointedNet()
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    F.cross_entropy(model(x), y).backward()
    got = [p.grad if p.grad is not None else torch.zeros_like(p) for p in model.stem.parameters()]
    model.gradient_checkpointing = False
    ref = torch.autograd.grad(F.cross_entropy(model(x), y), list(model.stem.parameters()))
    ok = all(torch.allclose(a, b, atol=1e-6) for a, b in zip(got, ref))
    print("MATCH" if ok else "MISMATCH: the checkpointed stem got no gradient")
