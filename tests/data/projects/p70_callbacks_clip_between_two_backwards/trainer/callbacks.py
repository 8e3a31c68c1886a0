import torch


class Callback:
    def on_after_backward(self, model):
        pass


class WeightClipper(Callback):
    """Keeps every weight in [-c, c] (a Lipschitz constraint)."""

    def __init__(self, c=0.05):
        self.c = c

    def on_after_backward(self, model):
        with torch.no_grad():
            for p in model.parameters():
                p.clamp_(-self.c, self.c)
