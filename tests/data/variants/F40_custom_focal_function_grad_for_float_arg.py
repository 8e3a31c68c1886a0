# source: custom autograd focal-loss Functions whose backward returns a tensor for the float `gamma` argument ("returned a gradient different than None at position 2, but the corresponding forward input was not a Variable")
# family: F
# expect: error
# line: 32  (backward: 39)
# fix: return None for non-tensor forward arguments: return grad_input, None
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FocalLossFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target, gamma):
        p = torch.softmax(logits, dim=-1)
        pt = p.gather(1, target[:, None]).squeeze(1)
        ctx.save_for_backward(logits, target)
        ctx.gamma = gamma
        return (-(1 - pt) ** gamma * torch.log(pt)).mean()

    @staticmethod
    def backward(ctx, grad_output):
        logits, target = ctx.saved_tensors
        with torch.enable_grad():
            x = logits.detach().requires_grad_(True)
            p = torch.softmax(x, dim=-1)
            pt = p.gather(1, target[:, None]).squeeze(1)
            loss = (-(1 - pt) ** ctx.gamma * torch.log(pt)).mean()
            grad_logits, = torch.autograd.grad(loss, x)
        grad_gamma = torch.zeros(())
        return grad_logits * grad_output, None, grad_gamma


if __name__ == "__main__":
    head = nn.Linear(8, 4)
    x, y = torch.randn(6, 8), torch.randint(0, 4, (6,))
    loss = FocalLossFn.apply(head(x), y, 2.0)
    loss.backward()
    print("loss", loss.item())
