# fix-kind: requires_grad_after
# why: the input differentiated by autograd.grad already requires grad where it is made.
import torch

torch.manual_seed(0)
net = torch.nn.Linear(3, 1)
real, fake = torch.randn(4, 3), torch.randn(4, 3)
alpha = torch.rand(4, 1)
interp = (alpha * real + (1 - alpha) * fake).requires_grad_()
out = net(interp)
g, = torch.autograd.grad(out.sum(), interp, create_graph=True)
penalty = ((g.norm(2, dim=1) - 1) ** 2).mean()
penalty.backward()
print(f"{penalty.item():.6f} {net.weight.grad.abs().sum().item():.6f}")
