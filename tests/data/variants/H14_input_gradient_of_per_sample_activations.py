# source: https://github.com/Animadversio/GAN-Geometry/issues/4 ("RuntimeError: grad can be implicitly created only for scalar outputs" from torch.autograd.grad(activs, perturb_vecs, ...); "I was doing a gradient operation on a multidimensional tensor ... modified it to activs.mean()")
# family: H
# expect: error
# line: 20
# fix: differentiate a scalar (activs.sum() gives every sample its own gradient), or pass grad_outputs=torch.ones_like(activs)
import torch
import torch.nn as nn

torch.manual_seed(0)


class GANForwardHVP:
    def __init__(self, generator, objective):
        self.generator, self.objective = generator, objective

    def gradient(self, perturb_vecs):
        perturb_vecs = perturb_vecs.detach().requires_grad_(True)
        img = self.generator(perturb_vecs)
        activs = self.objective(img).squeeze(-1)
        ftgrad_both = torch.autograd.grad(activs, perturb_vecs, retain_graph=False, create_graph=False, only_inputs=True)[0]
        return ftgrad_both


if __name__ == "__main__":
    G = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 48))
    unit = nn.Sequential(nn.Linear(48, 8), nn.ReLU(), nn.Linear(8, 1))
    op = GANForwardHVP(G, unit)
    grads = op.gradient(torch.randn(5, 16))
    print("gradient norms", grads.norm(dim=1).tolist())
