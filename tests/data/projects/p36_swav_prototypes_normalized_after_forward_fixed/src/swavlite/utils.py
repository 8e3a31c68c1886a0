import torch
import torch.nn.functional as F


def normalize_prototypes(model):
    w = model.prototypes.weight.data.clone()
    model.prototypes.weight.data.copy_(F.normalize(w, dim=1, p=2))


@torch.no_grad()
def sinkhorn(out, n_iters=3, eps=0.05):
    Q = torch.exp(out / eps).t()
    Q /= Q.sum()
    K, B = Q.shape
    for _ in range(n_iters):
        Q /= Q.sum(dim=1, keepdim=True)
        Q /= K
        Q /= Q.sum(dim=0, keepdim=True)
        Q /= B
    return (Q * B).t()
