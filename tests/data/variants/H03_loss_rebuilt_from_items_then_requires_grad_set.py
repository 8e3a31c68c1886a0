# source: https://github.com/ronghuaiyang/arcface-pytorch/issues/56 ("element 0 of tensors does not require grad ... to solve this problem I add loss.requires_grad = True ... and then it do not report errors. but when i train, the loss is not decline, and the acc is always zero")
# family: H
# expect: silent
# verify: the parameters' gradients after backward are compared with autograd's gradients of the same loss built from tensors
# line: 19, 27, 28
# fix: keep the loss a tensor of the graph (torch.stack(losses).mean()) and drop the requires_grad workaround
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def margin_loss(logits, labels, m=0.35, s=16.0):
    losses = []
    for logit, label in zip(logits, labels):
        shifted = logit.clone()
        shifted[label] = shifted[label] - m
        losses.append(F.cross_entropy(s * shifted[None], label[None]).item())
    return losses


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 4))
    x, y = torch.randn(8, 12), torch.randint(0, 4, (8,))
    losses = margin_loss(model(x), y)
    loss = torch.tensor(sum(losses) / len(losses))
    loss.requires_grad = True
    model.zero_grad()
    loss.backward()
    got = [p.grad if p.grad is not None else torch.zeros_like(p) for p in model.parameters()]
    logits = model(x)
    shifted = logits - 0.35 * F.one_hot(y, 4)
    ref = torch.autograd.grad(F.cross_entropy(16.0 * shifted, y), list(model.parameters()))
    ok = all(torch.allclose(a, b, atol=1e-5) for a, b in zip(got, ref))
    print("MATCH" if ok else "MISMATCH: the loss was cut from the graph, parameters get no gradient")
