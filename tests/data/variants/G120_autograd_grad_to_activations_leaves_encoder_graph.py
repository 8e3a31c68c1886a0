# source: feature-attribution / auxiliary-loss code that takes torch.autograd.grad(head_loss, features) without retain_graph and then backpropagates another loss through the encoder only: autograd.grad runs (and frees) only the nodes between the loss and `features`, so the encoder graph is intact (a linter that treats autograd.grad as freeing the whole graph cries wolf)
# family: G
# expect: ok
# line: 18  (backward: 20)
# fix: none needed: the later backward never reaches a node the grad call ran
import torch
import torch.nn as nn

torch.manual_seed(0)

if __name__ == "__main__":
    enc = nn.Linear(4, 4)
    head = nn.Linear(4, 1)
    x = torch.randn(8, 4)
    z = torch.tanh(enc(x))
    out = head(z).pow(2).mean()
    # only head's nodes run here
    g_z, = torch.autograd.grad(out, z)
    aux = (z * g_z).sum()
    aux.backward()
    print("ok", enc.weight.grad.norm().item())
