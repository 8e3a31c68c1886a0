import torch

from .base import Callback


class MaxNormConstraint(Callback):
    """Max-norm regularisation (Srivastava et al., 2014): rows of each weight kept within max_norm."""

    @torch.no_grad()
    def on_batch_end(self, trainer):
        for name, param in trainer.model.named_parameters():
            if name.endswith("weight"):
                norms = param.norm(dim=1, keepdim=True).clamp(min=self.cfg.max_norm)
                param.mul_(self.cfg.max_norm / norms)


class GradScaleCallback(Callback):
    """Scales the gradients in place after backward, before the step (a warm-up on the gradients)."""

    def on_after_backward(self, trainer):
        for param in trainer.model.parameters():
            if param.grad is not None:
                param.grad.mul_(min(1.0, (trainer.epoch + 1) / 2))
