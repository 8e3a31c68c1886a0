from .base import Callback


class MaxNormConstraint(Callback):
    """Max-norm regularisation (Srivastava et al., 2014): rows of each weight kept within max_norm."""

    def on_batch_end(self, trainer):
        for name, param in trainer.model.named_parameters():
            if name.endswith("weight"):
                norms = param.norm(dim=1, keepdim=True).clamp(min=self.cfg.max_norm)
                param.mul_(self.cfg.max_norm / norms)
