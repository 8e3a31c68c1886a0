"""Activation checkpointing, switched on from the config to fit larger batches."""
from torch.utils.checkpoint import checkpoint


def maybe_checkpoint(module, x, enabled):
    if enabled:
        return checkpoint(module, x, use_reentrant=False)
    return module(x)
