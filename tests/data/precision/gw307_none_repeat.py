# from: trl 1.16.0, trl/kernels/chunked_divergence.py:528
# pattern: `return (None,) * 12` when the incoming gradient is None (also reported as GW709)
# expect: quiet
# torch: ok
import torch


class ChunkedLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden, weight, beta, chunk, ignore_index, temperature):
        ctx.save_for_backward(hidden, weight)
        logits = hidden @ weight
        return logits.logsumexp(-1).sum(), logits.detach()

    @staticmethod
    def backward(ctx, grad_loss, _):
        hidden, weight = ctx.saved_tensors
        if grad_loss is None:
            return (None,) * 6
        probs = (hidden @ weight).softmax(-1) * grad_loss
        return probs @ weight.t(), hidden.t() @ probs, None, None, None, None


h = torch.randn(2, 3, requires_grad=True)
w = torch.randn(3, 5, requires_grad=True)
loss, _ = ChunkedLoss.apply(h, w, 0.5, 2, -100, 1.0)
loss.backward()
h2 = h.detach().clone().requires_grad_()
w2 = w.detach().clone().requires_grad_()
(h2 @ w2).logsumexp(-1).sum().backward()
if not (torch.allclose(h.grad, h2.grad) and torch.allclose(w.grad, w2.grad)):
    print("MISMATCH")
