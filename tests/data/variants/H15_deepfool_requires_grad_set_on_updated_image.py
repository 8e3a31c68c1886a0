# source: https://github.com/Harry24k/adversarial-attacks-pytorch/issues/2 ("Cannot set requires_grad in deepfool": image.requires_grad = True -> "you can only change requires_grad flags of leaf variables"; fixed by adding .detach())
# family: H
# expect: error
# line: 15, 29
# fix: make the updated image a new leaf: image = (image + (1 + overshoot) * r).detach()
import torch
import torch.nn as nn

torch.manual_seed(0)


def deepfool(model, image, num_classes=4, steps=3, overshoot=0.02):
    label = model(image).argmax(1).item()
    for _ in range(steps):
        image.requires_grad = True
        fs = model(image)[0]
        if fs.argmax().item() != label:
            break
        grad_orig = torch.autograd.grad(fs[label], image, retain_graph=True)[0]
        best_r, best_dist = None, float("inf")
        for k in range(num_classes):
            if k == label:
                continue
            grad_k = torch.autograd.grad(fs[k], image, retain_graph=True)[0]
            w_k, f_k = grad_k - grad_orig, (fs[k] - fs[label]).item()
            dist = abs(f_k) / (w_k.norm() + 1e-8)
            if dist < best_dist:
                best_dist, best_r = dist, (abs(f_k) + 1e-4) * w_k / (w_k.norm() ** 2 + 1e-8)
        image = image + (1 + overshoot) * best_r
    return image.detach()


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4)).eval()
    x = torch.randn(1, 10)
    adv = deepfool(model, x)
    print("perturbation norm", (adv - x).norm().item(), "labels", model(x).argmax().item(), model(adv).argmax().item())
