# source: the Grad-CAM recipe of https://github.com/jacobgil/pytorch-grad-cam (activations and gradients captured by hooks and detached, because they are only read to build the heat-map, never trained through), scored for a batch with a one-hot gradient as suggested in https://github.com/jacobgil/pytorch-grad-cam/issues/109
# family: G
# expect: ok
# line: 20
# fix: none needed - the detached activations only build the visualisation; the backward uses an explicit gradient of the class scores
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ActivationsAndGradients:
    def __init__(self, layer):
        self.activation, self.gradient = None, None
        layer.register_forward_hook(self.save_activation)
        layer.register_full_backward_hook(self.save_gradient)

    def save_activation(self, module, inputs, output):
        self.activation = output.detach()

    def save_gradient(self, module, grad_input, grad_output):
        self.gradient = grad_output[0].detach()


if __name__ == "__main__":
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4)).eval()
    capture = ActivationsAndGradients(model[2])
    images = torch.randn(3, 3, 12, 12)
    logits = model(images)
    targets = logits.argmax(dim=1)
    model.zero_grad()
    logits.backward(gradient=F.one_hot(targets, 4).float())
    weights = capture.gradient.mean(dim=(2, 3), keepdim=True)
    cams = F.relu((weights * capture.activation).sum(dim=1))
    print("cams", tuple(cams.shape), "finite", bool(torch.isfinite(cams).all()))
