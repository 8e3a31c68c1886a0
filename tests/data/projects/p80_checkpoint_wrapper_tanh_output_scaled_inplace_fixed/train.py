import copy

import torch
import torch.nn.functional as F

from model.network import DeepGLU


def reference_grads(model, x, y):
    """The same network computed by hand, without checkpointing: the gradients it should get."""
    ref = copy.deepcopy(model)
    h = x
    for wrapper in ref.blocks:
        blk = wrapper.module
        h = h + blk.value(h) * (torch.tanh(blk.gate(h)) * blk.scale)
    F.cross_entropy(ref.head(h), y).backward()
    return [p.grad for p in ref.parameters()]


if __name__ == "__main__":
    torch.manual_seed(0)
    model = DeepGLU(grad_ckpt=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()
    for step in range(3):
        x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
        expected = reference_grads(model, x, y) if step == 0 else None
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        if expected is not None:
            same = all(torch.allclose(p.grad, g, atol=1e-6) for p, g in zip(model.parameters(), expected))
            print("MATCH" if same else "MISMATCH: checkpointed gradients differ from the reference")
        optimizer.step()
        print(step, loss.item())
