# source: gradient-norm logging and "gradient of the loss w.r.t. the first layer" snippets that call torch.autograd.grad(loss, layer.weight) without retain_graph and then loss.backward() (PyTorch forum: the grad call frees every node on the way to the weight, the whole graph here)
# family: D
# expect: error
# line: 17  (backward: 18)
# fix: keep the graph for the later backward: torch.autograd.grad(out, enc.weight, retain_graph=True)
import torch
import torch.nn as nn

torch.manual_seed(0)

if __name__ == "__main__":
    enc = nn.Linear(4, 4)
    head = nn.Linear(4, 1)
    x = torch.randn(8, 4)
    z = torch.tanh(enc(x))
    out = head(z).pow(2).mean()
    g_w = torch.autograd.grad(out, enc.weight)
    out.backward()
    print("grad norm", g_w[0].norm().item())
