# source: Grad-CAM style saliency code that calls retain_grad() on an intermediate activation before backward and then reads its .grad (the non-leaf .grad warning's own recommendation, https://github.com/pytorch/pytorch/pull/30531)
# family: G
# expect: ok
# line: 20
# fix: none needed - retain_grad() populates the non-leaf's .grad
import torch
import torch.nn as nn

torch.manual_seed(0)


if __name__ == "__main__":
    features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
    classifier = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5))
    img = torch.rand(1, 3, 12, 12)
    fmap = features(img)
    fmap.retain_grad()
    score = classifier(fmap)[0, 2]
    score.backward()
    weights = fmap.grad.mean(dim=(2, 3), keepdim=True)
    cam = torch.relu((weights * fmap).sum(1)).detach()
    print("cam max", cam.max().item())
