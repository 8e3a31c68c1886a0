# source: d2l / "linear regression from scratch" forum threads: manual gradient descent `w -= lr * w.grad` outside torch.no_grad()
# family: A
# expect: ok
# line: 21, 22
# fix: (fixed version of A32_linreg_scratch_isub_grad.py) do the parameter update inside `with th.no_grad():`
import torch as th

th.manual_seed(0)
X = th.randn(64, 3)
true_w = th.tensor([[2.0], [-3.4], [1.5]])
y = X @ true_w + 4.2 + 0.01 * th.randn(64, 1)

w = th.zeros(3, 1, requires_grad=True)
b = th.zeros(1, requires_grad=True)
lr = 0.1
for epoch in range(5):
    y_hat = X @ w + b
    loss = ((y_hat - y) ** 2).mean()
    loss.backward()
    with th.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    w.grad.zero_()
    b.grad.zero_()
print("loss", loss.item())
