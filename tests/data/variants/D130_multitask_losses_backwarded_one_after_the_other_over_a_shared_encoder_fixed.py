# source: multi-task training loops that call backward once per task loss over one shared encoder pass (forum threads "Trying to backward through the graph a second time" with two heads): the first backward frees the encoder's saved tensors, and the second task's backward needs them
# family: D
# expect: ok
# line: 22  (backward: 24)
# fix: (fixed version of D130_multitask_losses_backwarded_one_after_the_other_over_a_shared_encoder.py) sum the task losses and backward once (or loss_a.backward(retain_graph=True))
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


if __name__ == "__main__":
    encoder = nn.Sequential(nn.Linear(6, 16), nn.Tanh())
    head_a, head_b = nn.Linear(16, 1), nn.Linear(16, 3)
    params = list(encoder.parameters()) + list(head_a.parameters()) + list(head_b.parameters())
    opt = torch.optim.SGD(params, lr=0.1)
    x, ya, yb = torch.randn(8, 6), torch.randn(8, 1), torch.randint(0, 3, (8,))
    opt.zero_grad()
    h = encoder(x)
    loss_a = F.mse_loss(head_a(h), ya)
    loss_a.backward(retain_graph=True)
    loss_b = F.cross_entropy(head_b(h), yb)
    loss_b.backward()
    opt.step()
    print("done")
