# source: https://github.com/muzairkhattak/PromptSRC/issues/6 and https://github.com/muzairkhattak/multimodal-prompt-learning/issues/37 ("grad can be implicitly created only for scalar outputs": the loss returned by the model is not a scalar - one value per GPU replica under DataParallel); here the model's forward returns one loss per sample for hard-example logging
# family: H
# expect: error
# line: 22, 33
# fix: reduce before backward: loss.mean().backward() (or return the mean from forward)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PromptLearner(nn.Module):
    def __init__(self, dim=16, n_cls=5):
        super().__init__()
        self.ctx = nn.Parameter(torch.randn(n_cls, dim) * 0.02)
        self.image_proj = nn.Linear(24, dim)

    def forward(self, images, labels):
        feats = F.normalize(self.image_proj(images), dim=-1)
        logits = 10.0 * feats @ F.normalize(self.ctx, dim=-1).t()
        return F.cross_entropy(logits, labels, reduction="none")


if __name__ == "__main__":
    model = PromptLearner()
    optim = torch.optim.SGD(model.parameters(), lr=2e-3)
    for it in range(2):
        images, labels = torch.randn(8, 24), torch.randint(0, 5, (8,))
        loss = model(images, labels)
        hardest = loss.argmax().item()
        optim.zero_grad()
        loss.backward()
        optim.step()
        print("iter", it, "loss", loss.mean().item(), "hardest sample", hardest)
