"""A single-process stand-in for Accelerate's `Accelerator` (no DDP, no mixed precision)."""
import torch


class Accelerator:
    def __init__(self, gradient_accumulation_steps=1, cpu=True):
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self.device = torch.device("cpu" if cpu else "cuda")

    def prepare(self, *args):
        prepared = tuple(self._prepare_one(obj) for obj in args)
        return prepared if len(prepared) > 1 else prepared[0]

    def _prepare_one(self, obj):
        if isinstance(obj, torch.nn.Module):
            return obj.to(self.device)
        return obj

    def backward(self, loss, **kwargs):
        loss = loss / self.gradient_accumulation_steps
        loss.backward(**kwargs)

    def print(self, *args):
        print(*args)
