# source: https://github.com/lyakaap/VAT-pytorch/issues/1 ("Potential bug when calculating KL div": the maintainer notes that detach() is necessary to regard pred = model(X) as a constant; VAT's local distributional smoothness term uses the clean prediction as a fixed target)
# family: E
# expect: silent
# verify: the model gradient is compared with the one computed with the clean prediction detached in the LDS term (same adversarial direction)
# line: 31
# fix: use the clean prediction as a constant target: F.softmax(pred.detach(), dim=1)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def l2_normalize(d):
    return d / (d.flatten(1).norm(dim=1).view(-1, *([1] * (d.dim() - 1))) + 1e-8)


def adversarial_direction(model, x, pred, xi=10.0, ip=1):
    d = l2_normalize(torch.rand_like(x) - 0.5)
    for _ in range(ip):
        d.requires_grad_(True)
        pred_hat = model(x + xi * d)
        adv_distance = F.kl_div(F.log_softmax(pred_hat, dim=1), F.softmax(pred.detach(), dim=1), reduction="batchmean")
        (grad,) = torch.autograd.grad(adv_distance, d)
        d = l2_normalize(grad)
    return d.detach()


def vat_loss(model, x, pred, r_adv):
    pred_hat = model(x + r_adv)
    return F.kl_div(F.log_softmax(pred_hat, dim=1), F.softmax(pred, dim=1), reduction="batchmean")


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
    x_l, y_l, x_u = torch.randn(8, 10), torch.randint(0, 4, (8,)), torch.randn(16, 10)
    pred_u = model(x_u)
    r_adv = 2.0 * adversarial_direction(model, x_u, pred_u)
    loss = F.cross_entropy(model(x_l), y_l) + vat_loss(model, x_u, pred_u, r_adv)
    params = list(model.parameters())
    got = torch.autograd.grad(loss, params)
    ref_lds = F.kl_div(F.log_softmax(model(x_u + r_adv), dim=1), F.softmax(model(x_u).detach(), dim=1), reduction="batchmean")
    ref = torch.autograd.grad(F.cross_entropy(model(x_l), y_l) + ref_lds, params)
    ok = all(torch.allclose(a, b, atol=1e-6) for a, b in zip(got, ref))
    print("MATCH" if ok else "MISMATCH: the LDS term also pushes the clean prediction")
