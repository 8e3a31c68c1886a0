# expect: silent
# line: 21, 22
# Normalising an activation for logging through `.data`: `.data` shares memory with the
# activation but not its version counter, so autograd cannot notice that the tensor
# sigmoid saved for its backward has changed. No error: just wrong gradients.
import torch
import torch.nn as nn

torch.manual_seed(0)
layer = nn.Linear(3, 3)
x = torch.randn(5, 3, requires_grad=True)


def forward(x, log):
    act = torch.sigmoid(layer(x))
    if log:
        # Fix: snap = act.detach().clone()
        snap = act.data
        log.append(snap)
        # sigmoid saved `act` for backward; this changes it silently:
        snap -= snap.mean()
        snap /= 1.0
    return (x * act).sum()


forward(x, [None]).backward()
got = x.grad.clone()
x.grad = None
forward(x, None).backward()
if not torch.allclose(got, x.grad):
    print("MISMATCH: gradients differ when the activation is logged through .data")
