# source: RL / RNN training loops that clip or rescale gradients by hand (p.grad.clamp_, p.grad.mul_) between loss.backward() and optimizer.step()
# family: G
# expect: ok
# line: 16, 20  (backward: 32)
# fix: none needed - .grad tensors do not require grad and are not saved by any graph; the in-place writes happen after backward and before the step that reads them
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def clip_grads_(params, value=0.5, max_norm=1.0):
    params = [p for p in params if p.grad is not None]
    for p in params:
        p.grad.clamp_(-value, value)
    total = torch.norm(torch.stack([p.grad.norm() for p in params]))
    if total > max_norm:
        for p in params:
            p.grad.mul_(max_norm / (total + 1e-6))
    return total


if __name__ == "__main__":
    model = nn.GRU(4, 8, batch_first=True)
    head = nn.Linear(8, 1)
    opt = torch.optim.RMSprop(list(model.parameters()) + list(head.parameters()), lr=1e-3)
    for _ in range(2):
        out, _ = model(torch.randn(3, 5, 4))
        loss = F.mse_loss(head(out[:, -1]), torch.randn(3, 1))
        opt.zero_grad()
        loss.backward()
        clip_grads_(list(model.parameters()) + list(head.parameters()))
        opt.step()
    print("loss", loss.item())
