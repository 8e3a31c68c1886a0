import torch


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    if isinstance(h, (list, tuple)):
        return type(h)(repackage_hidden(v) for v in h)
    return h
