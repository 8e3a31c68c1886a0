# source: (fixed version of F65_pinball_loss_function_grad_shape_mismatch.py) hand-written quantile (pinball) loss autograd.Functions for probabilistic forecasting that reshape the prediction to a column inside forward and return the gradient in that (N, 1) shape for an (N,) input ("Function PinballLossBackward returned an invalid gradient at index 0 - got [N, 1] but expected shape compatible with [N]")
# family: F
# expect: ok
# line: 24  (backward: 44)
# fix: return the gradient in the input's shape: grad_pred.view_as(pred) (save pred's shape, or reshape with ctx.pred_shape)
import torch
import torch.nn as nn

torch.manual_seed(0)


class PinballLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, pred, target, quantiles):
        diff = target.view(-1, 1) - pred.view(-1, len(quantiles))
        q = quantiles.view(1, -1)
        ctx.save_for_backward(diff, q)
        ctx.pred_shape = pred.shape
        return torch.maximum(q * diff, (q - 1) * diff).mean()

    @staticmethod
    def backward(ctx, grad_output):
        diff, q = ctx.saved_tensors
        grad_pred = -grad_output * torch.where(diff >= 0, q, q - 1) / diff.numel()
        return grad_pred.view(ctx.pred_shape), None, None


class Forecaster(nn.Module):
    def __init__(self, window=24, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(window, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, history):
        return self.net(history).squeeze(-1)


if __name__ == "__main__":
    model = Forecaster()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    median = torch.tensor([0.5])
    for step in range(3):
        history, target = torch.randn(64, 24), torch.randn(64)
        loss = PinballLoss.apply(model(history), target, median)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step", step, "loss %.4f" % loss.item())
