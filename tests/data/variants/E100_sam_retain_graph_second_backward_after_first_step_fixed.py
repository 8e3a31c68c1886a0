# source: https://github.com/kozistr/pytorch_optimizer/issues/64 ("Sharpness Aware Minimization (SAM) requires closure": loss.backward(retain_graph=True); optimizer.first_step(); then a backward through the same forward -> "one of the variables needed for gradient computation has been modified by an inplace operation")
# family: E
# expect: ok
# line: 54, 55  (backward: 55)
# fix: (fixed version of E100_sam_retain_graph_second_backward_after_first_step.py) the second SAM pass needs a fresh forward at the perturbed weights: criterion(model(inputs), targets).backward(); retain_graph does not help because first_step moved the weights in place
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        defaults = dict(rho=rho, **kwargs)
        super().__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        grad_norm = torch.norm(torch.stack([p.grad.norm(p=2) for g in self.param_groups for p in g["params"] if p.grad is not None]), p=2)
        for group in self.param_groups:
            scale = group["rho"] / (grad_norm + 1e-12)
            for p in group["params"]:
                if p.grad is None:
                    continue
                e_w = p.grad * scale
                p.add_(e_w)
                self.state[p]["e_w"] = e_w
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if "e_w" in self.state[p]:
                    p.sub_(self.state[p]["e_w"])
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()


if __name__ == "__main__":
    backbone = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    optimizer = SAM(backbone.parameters(), torch.optim.SGD, lr=0.1, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    for step in range(2):
        inputs, labels = torch.randn(8, 16), torch.randint(0, 4, (8,))
        output = backbone(inputs)
        loss = criterion(output, labels)
        loss.backward(retain_graph=True)
        optimizer.first_step(zero_grad=True)
        criterion(backbone(inputs), labels).backward()
        optimizer.second_step(zero_grad=True)
        print("step", step, "loss", loss.item())
