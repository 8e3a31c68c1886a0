import torch
import torch.nn.functional as F

from .norm import standardize


class Engine:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self._steps = {"train": self._train_step, "eval": self._eval_step}

    def _train_step(self, batch):
        x, y = batch
        feats = standardize(self.model(x))
        loss = F.mse_loss(feats.sum(1), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    @torch.no_grad()
    def _eval_step(self, batch):
        x, y = batch
        return F.mse_loss(standardize(self.model(x)).sum(1), y).item()

    def run(self, loader, mode="train"):
        step = self._steps[mode]
        return [step(batch) for batch in loader]
