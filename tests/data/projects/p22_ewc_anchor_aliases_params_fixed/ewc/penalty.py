"""Elastic weight consolidation, after moskomule/ewc.pytorch utils.py."""
import torch
import torch.nn.functional as F


class EWC:
    def __init__(self, model, dataset):
        self.model = model
        self.params = {n: p for n, p in model.named_parameters() if p.requires_grad}
        self._means = {}
        for n, p in self.params.items():
            self._means[n] = p.detach().clone()
        self._precision_matrices = self._diag_fisher(dataset)

    def _diag_fisher(self, dataset):
        fisher = {n: torch.zeros_like(p) for n, p in self.params.items()}
        self.model.eval()
        for x, _ in dataset:
            self.model.zero_grad()
            out = self.model(x.unsqueeze(0))
            label = out.argmax(dim=1)
            F.nll_loss(F.log_softmax(out, dim=1), label).backward()
            for n, p in self.params.items():
                fisher[n] += p.grad.detach() ** 2 / len(dataset)
        self.model.train()
        return fisher

    def penalty(self, model):
        loss = 0
        for n, p in model.named_parameters():
            loss = loss + (self._precision_matrices[n] * (p - self._means[n]) ** 2).sum()
        return loss
