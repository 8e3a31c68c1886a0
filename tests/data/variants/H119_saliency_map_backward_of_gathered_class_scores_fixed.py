# source: saliency-map / vanilla-gradient attribution scripts run on a batch (forum threads "grad can be implicitly created only for scalar outputs" when moving from one image to a batch): the true-class scores are gathered into a (B, 1) tensor and backwarded without a gradient argument
# family: H
# expect: ok
# line: 28  (backward: 29)
# fix: (fixed version of H119_saliency_map_backward_of_gathered_class_scores.py) reduce the gathered scores to a scalar: scores = model(images).gather(1, labels.unsqueeze(1)).sum()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyCNN(nn.Module):
    def __init__(self, n_cls=10):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8, n_cls)

    def forward(self, x):
        h = F.relu(self.conv(x))
        return self.fc(h.mean(dim=(2, 3)))


if __name__ == "__main__":
    model = TinyCNN().eval()
    images = torch.rand(4, 3, 16, 16, requires_grad=True)
    labels = torch.tensor([1, 0, 3, 2])
    scores = model(images).gather(1, labels.unsqueeze(1)).sum()
    scores.backward()
    saliency = images.grad.abs().amax(dim=1)
    print(tuple(saliency.shape))
