# source: hand-written trainers with callbacks (Lightning-style on_after_backward) where a gradient-norm logging callback ends with optimizer.zero_grad(set_to_none=True) to "clean up" (forum threads "loss not decreasing", "weights don't change after optimizer.step()"): the callback runs between backward() and step(), so every step finds no gradient
# family: H
# expect: ok
# verify: the first layer's weight is compared before and after the steps
# line: 21
# fix: (fixed version of H152_gradient_norm_logging_callback_clears_gradients_before_the_step.py) do not clear gradients in the callback (delete the zero_grad line); the trainer clears them after the step
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GradNormLogger:
    def __init__(self):
        self.norms = []

    def on_after_backward(self, model, opt):
        total = sum(p.grad.norm() ** 2 for p in model.parameters() if p.grad is not None)
        self.norms.append(float(total) ** 0.5)


def fit(model, opt, batches, callbacks, epochs=3):
    for epoch in range(epochs):
        for x, y in batches:
            loss = F.mse_loss(model(x), y)
            loss.backward()
            for cb in callbacks:
                cb.on_after_backward(model, opt)
            opt.step()
            opt.zero_grad()


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(2)]
    before = model[0].weight.detach().clone()
    fit(model, opt, batches, [GradNormLogger()])
    print("MISMATCH: the weights never move" if torch.equal(before, model[0].weight) else "MATCH")
