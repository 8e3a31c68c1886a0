# source: pytorch neural style transfer tutorial: the LBFGS closure clamps the optimised image; users drop the `with torch.no_grad():` around input_img.clamp_(0, 1)
# family: A
# expect: error
# line: 39
# fix: clamp the optimised image inside `with torch.no_grad():`
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def gram_matrix(feat):
    b, c, h, w = feat.size()
    f = feat.view(b * c, h * w)
    return f @ f.t() / (b * c * h * w)


class TinyVGG(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        f1 = F.relu(self.conv1(x))
        f2 = F.relu(self.conv2(f1))
        return f1, f2


def run_style_transfer(cnn, content_img, style_img, num_steps=3, style_weight=1e4):
    with torch.no_grad():
        content_target = cnn(content_img)[1]
        style_targets = [gram_matrix(f) for f in cnn(style_img)]
    input_img = content_img.clone().requires_grad_(True)
    optimizer = torch.optim.LBFGS([input_img], max_iter=2)

    def closure():
        input_img.clamp_(0, 1)
        optimizer.zero_grad()
        feats = cnn(input_img)
        style_score = sum(F.mse_loss(gram_matrix(f), g) for f, g in zip(feats, style_targets))
        content_score = F.mse_loss(feats[1], content_target)
        loss = style_weight * style_score + content_score
        loss.backward()
        return loss

    for _ in range(num_steps):
        optimizer.step(closure)
    with torch.no_grad():
        input_img.clamp_(0, 1)
    return input_img


if __name__ == "__main__":
    cnn = TinyVGG().eval()
    for p in cnn.parameters():
        p.requires_grad_(False)
    out = run_style_transfer(cnn, torch.rand(1, 3, 16, 16), torch.rand(1, 3, 16, 16))
    print("output range", out.min().item(), out.max().item())
