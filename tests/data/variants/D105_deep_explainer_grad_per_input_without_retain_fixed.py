# source: https://github.com/shap/shap/pull/684 ("Pytorch DeepExplainer: retain graph for multiple inputs": the attributions of a multi-input model are taken with one autograd.grad call per input; the first call frees the shared part of the graph)
# family: D
# expect: ok
# line: 28
# fix: (fixed version of D105_deep_explainer_grad_per_input_without_retain.py) keep the graph between the per-input calls (retain_graph=True except on the last one), or take all inputs in one autograd.grad call
import torch
import torch.nn as nn

torch.manual_seed(0)


class TwoInputModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.image_branch = nn.Sequential(nn.Linear(12, 16), nn.ReLU())
        self.tabular_branch = nn.Sequential(nn.Linear(5, 16), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(32, 16), nn.Tanh(), nn.Linear(16, 3))

    def forward(self, image, tabular):
        return self.head(torch.cat([self.image_branch(image), self.tabular_branch(tabular)], dim=1))


def gradients(model, inputs, class_idx):
    inputs = [x.clone().requires_grad_(True) for x in inputs]
    selected = model(*inputs)[:, class_idx].sum()
    grads = []
    for x in inputs:
        (g,) = torch.autograd.grad(selected, x, retain_graph=True)
        grads.append(g)
    return grads


def attributions(model, inputs, baselines, class_idx, steps=4):
    total = [torch.zeros_like(x) for x in inputs]
    for k in range(1, steps + 1):
        scaled = [b + (k / steps) * (x - b) for x, b in zip(inputs, baselines)]
        for acc, g in zip(total, gradients(model, scaled, class_idx)):
            acc += g / steps
    return [(x - b) * g for x, b, g in zip(inputs, baselines, total)]


if __name__ == "__main__":
    model = TwoInputModel().eval()
    inputs = [torch.randn(6, 12), torch.randn(6, 5)]
    baselines = [torch.zeros_like(x) for x in inputs]
    attr = attributions(model, inputs, baselines, class_idx=1)
    print("attribution sums", [a.sum().item() for a in attr])
