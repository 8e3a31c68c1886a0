import torch


class EMA:
    """Exponential moving average of a model's parameters (shadow weights swapped in to evaluate)."""

    def __init__(self, model, decay):
        self.model = model
        self.decay = decay
        self.shadow = {}
        self.backup = {}

    def register(self):
        for name, param in self.model.named_parameters():
            if param.requires_grad:
                self.shadow[name] = param.detach().clone()

    @torch.no_grad()
    def update(self):
        for name, param in self.model.named_parameters():
            if param.requires_grad:
                self.shadow[name].mul_(self.decay).add_(param, alpha=1.0 - self.decay)

    @torch.no_grad()
    def apply_shadow(self):
        for name, param in self.model.named_parameters():
            if param.requires_grad:
                self.backup[name] = param.detach().clone()
                param.copy_(self.shadow[name])

    @torch.no_grad()
    def restore(self):
        for name, param in self.model.named_parameters():
            if param.requires_grad:
                param.copy_(self.backup[name])
        self.backup = {}
