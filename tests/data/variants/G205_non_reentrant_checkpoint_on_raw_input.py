# source: torch.utils.checkpoint docs (use_reentrant=False: "gradients are computed for the parameters inside the checkpointed function even if none of the inputs require grad") - the fix recommended in https://github.com/huggingface/transformers/issues/23170
# family: G
# expect: ok
# verify: the stem's gradient is compared with the gradient of the same model run without checkpointing
# line: 23
# fix: none needed - the non-reentrant checkpoint gives the stem its gradient
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class CheckpointedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Linear(16, 32), nn.GELU())
        self.blocks = nn.Sequential(nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 4))
        self.gradient_checkpointing = True

    def forward(self, x):
        h = checkpoint(self.stem, x, use_reentrant=False) if self.gradient_checkpointing else self.stem(x)
        return self.blocks(h)


if __name__ == "__main__":
    model = CheckpointedNet()
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    F.cross_entropy(model(x), y).backward()
    got = [p.grad for p in model.stem.parameters()]
    model.gradient_checkpointing = False
    ref = torch.autograd.grad(F.cross_entropy(model(x), y), list(model.stem.parameters()))
    ok = all(g is not None and torch.allclose(g, r, atol=1e-6) for g, r in zip(got, ref))
    print("MATCH" if ok else "MISMATCH")
