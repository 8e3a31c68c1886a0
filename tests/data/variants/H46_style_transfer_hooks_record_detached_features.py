# source: https://github.com/fastai/fastai/pull/1103 ("Adding detach flag to hook": "detach=False is needed for style transfer network as it needs the gradient computation history"; with the default detach=True the style and content losses are built from detached feature maps)
# family: H
# expect: error
# line: 20  (backward: 62)
# fix: record the feature maps with their graph in the hook (self.features[name] = output) so the losses reach the optimized image
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FeatureRecorder:
    def __init__(self, model, layer_names):
        self.features = {}
        self.handles = [getattr(model, name).register_forward_hook(self.make_hook(name)) for name in layer_names]

    def make_hook(self, name):
        def hook(module, inputs, output):
            self.features[name] = output.detach()
        return hook


class TinyVGG(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.conv3 = nn.Conv2d(8, 16, 3, padding=1)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        return F.relu(self.conv3(F.avg_pool2d(x, 2)))


def gram(feat):
    b, c, h, w = feat.shape
    f = feat.view(b, c, h * w)
    return f @ f.transpose(1, 2) / (c * h * w)


if __name__ == "__main__":
    vgg = TinyVGG().eval()
    for p in vgg.parameters():
        p.requires_grad_(False)
    recorder = FeatureRecorder(vgg, ["conv2", "conv3"])
    content_img, style_img = torch.rand(1, 3, 16, 16), torch.rand(1, 3, 16, 16)
    vgg(content_img)
    content_target = recorder.features["conv3"].clone()
    vgg(style_img)
    style_targets = {k: gram(v) for k, v in recorder.features.items()}

    image = content_img.clone().requires_grad_(True)
    opt = torch.optim.Adam([image], lr=0.05)
    for step in range(5):
        vgg(image)
        content_loss = F.mse_loss(recorder.features["conv3"], content_target)
        style_loss = sum(F.mse_loss(gram(recorder.features[k]), style_targets[k]) for k in style_targets)
        loss = content_loss + 1e3 * style_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "content %.4f style %.6f" % (content_loss.item(), style_loss.item()))
