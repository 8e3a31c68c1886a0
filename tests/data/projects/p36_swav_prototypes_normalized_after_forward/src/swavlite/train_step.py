import torch

from .utils import normalize_prototypes, sinkhorn


def swav_loss(output, bs, temperature=0.1):
    q1, q2 = sinkhorn(output[:bs]), sinkhorn(output[bs:])
    p1 = torch.log_softmax(output[:bs] / temperature, dim=1)
    p2 = torch.log_softmax(output[bs:] / temperature, dim=1)
    return -0.5 * ((q1 * p2).sum(1).mean() + (q2 * p1).sum(1).mean())


def train_one_iter(model, optimizer, views):
    bs = views[0].shape[0]
    _, output = model(torch.cat(views))
    loss = swav_loss(output, bs)
    normalize_prototypes(model)
    optimizer.zero_grad()
    loss.backward()
    grads = [p.grad.clone() for p in model.backbone.parameters()]
    optimizer.step()
    return loss.item(), grads
