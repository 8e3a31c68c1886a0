# source: PyTorch neural-style-transfer tutorial adaptations whose StyleLoss stores gram_matrix(target_feature) without .detach(); the feature network's weights still require grad, so the cached target keeps the style image's graph, freed by the first optimisation step's backward
# family: D
# expect: error
# line: 32, 35  (backward: 63)
# fix: cache a detached target: self.target = gram_matrix(target_feature).detach()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def gram_matrix(feat):
    b, c, h, w = feat.size()
    f = feat.view(b * c, h * w)
    return (f @ f.t()) / (b * c * h * w)


class ContentLoss(nn.Module):
    def __init__(self, target):
        super().__init__()
        self.target = target.detach()

    def forward(self, x):
        self.loss = F.mse_loss(x, self.target)
        return x


class StyleLoss(nn.Module):
    def __init__(self, target_feature):
        super().__init__()
        self.target = gram_matrix(target_feature)

    def forward(self, x):
        self.loss = F.mse_loss(gram_matrix(x), self.target)
        return x


def build_style_model(cnn, style_img, content_img):
    model, style_losses, content_losses = nn.Sequential(), [], []
    for i, layer in enumerate(cnn.children()):
        model.add_module("layer_%d" % i, layer)
        if isinstance(layer, nn.ReLU):
            content = ContentLoss(model(content_img))
            style = StyleLoss(model(style_img))
            model.add_module("content_%d" % i, content)
            model.add_module("style_%d" % i, style)
            content_losses.append(content)
            style_losses.append(style)
    return model, style_losses, content_losses


if __name__ == "__main__":
    cnn = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU()).eval()
    style_img, content_img = torch.rand(1, 3, 16, 16), torch.rand(1, 3, 16, 16)
    model, style_losses, content_losses = build_style_model(cnn, style_img, content_img)
    input_img = content_img.clone().requires_grad_(True)
    opt = torch.optim.Adam([input_img], lr=0.05)
    for step in range(3):
        opt.zero_grad()
        model(input_img)
        loss = 1e4 * sum(s.loss for s in style_losses) + sum(c.loss for c in content_losses)
        loss.backward()
        opt.step()
        with torch.no_grad():
            input_img.clamp_(0, 1)
    print("loss", loss.item())
