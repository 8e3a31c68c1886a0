# source: https://github.com/pytorch/pytorch/issues/140469 (image_syn = torch.randn(..., requires_grad=True) * 0.01 is no longer a leaf) and https://github.com/pytorch/tutorials/issues/3716 ("requires_grad must be deferred until after the initialization math"): a hand-written SGD loop that skips parameters whose .grad is None: the scaled weight is a non-leaf built once before the loop, so besides never being updated (UserWarning: .grad of a non-leaf Tensor) its scaling node is freed by the first backward and the second iteration raises (measured on torch 2.13)
# family: H
# expect: ok
# line: 30  (backward: 17)
# fix: (fixed version of H17_scaled_after_requires_grad_manual_sgd_reads_none_grad.py) create the leaf after the scaling: w = (torch.randn(5, 1) * 0.01).requires_grad_()
import warnings

import torch

warnings.filterwarnings("ignore", message="The .grad attribute of a Tensor that is not a leaf")
torch.manual_seed(0)


def train(w, b, x, y, lr=0.1, epochs=20):
    for _ in range(epochs):
        loss = ((x @ w + b - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            for p in (w, b):
                if p.grad is not None:
                    p -= lr * p.grad
                    p.grad.zero_()
    return w, b


if __name__ == "__main__":
    x = torch.randn(64, 5)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0], [0.0]]) + 0.7
    init = torch.randn(5, 1)
    w = (init.clone() * 0.01).requires_grad_(True)
    b = torch.zeros(1, requires_grad=True)
    w, b = train(w, b, x, y)
    w_ref, b_ref = train((init.clone() * 0.01).requires_grad_(True), torch.zeros(1, requires_grad=True), x, y)
    ok = torch.allclose(w.detach(), w_ref.detach(), atol=1e-6) and torch.allclose(b.detach(), b_ref.detach(), atol=1e-6)
    print("MATCH" if ok else "MISMATCH: the weight never moved (its .grad was always None)")
