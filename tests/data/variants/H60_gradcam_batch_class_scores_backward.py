# source: https://github.com/1Konny/gradcam_plus_plus-pytorch/issues/7 ("RuntimeError: grad can be implicitly created only for scalar outputs" at score.backward(retain_graph=retain_graph) in gradcam.py, score = logit[:, class_idx] for a batch of images); also https://github.com/jacobgil/pytorch-grad-cam/issues/109
# family: H
# expect: error
# line: 41, 43
# fix: reduce the per-image scores before backward: score.sum().backward() (the images do not interact, so each one gets its own gradient)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvNet(nn.Module):
    def __init__(self, n_classes=5):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.classifier = nn.Linear(16, n_classes)

    def forward(self, x):
        return self.classifier(self.features(x).mean(dim=(2, 3)))


class GradCAM:
    def __init__(self, model, target_layer):
        self.model = model
        self.activations, self.gradients = None, None
        target_layer.register_forward_hook(self.save_activation)
        target_layer.register_full_backward_hook(self.save_gradient)

    def save_activation(self, module, inputs, output):
        self.activations = output

    def save_gradient(self, module, grad_input, grad_output):
        self.gradients = grad_output[0]

    def __call__(self, images, class_idx=None):
        logit = self.model(images)
        if class_idx is None:
            class_idx = logit.argmax(dim=1)
        score = logit.gather(1, class_idx[:, None]).squeeze(1)
        self.model.zero_grad()
        score.backward()
        weights = self.gradients.mean(dim=(2, 3), keepdim=True)
        cam = F.relu((weights * self.activations).sum(dim=1))
        return cam / cam.flatten(1).max(dim=1).values[:, None, None].clamp_min(1e-8)


if __name__ == "__main__":
    model = ConvNet().eval()
    cam = GradCAM(model, model.features[2])
    images = torch.randn(4, 3, 16, 16)
    maps = cam(images)
    print("cam maps", tuple(maps.shape))
