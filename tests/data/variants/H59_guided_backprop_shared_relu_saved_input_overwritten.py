# source: https://github.com/jmschrei/tangermeme/pull/54 ("Add hook stacks to handle shared modules": module.input/module.output are stored by assignment in the forward hook, "the backward pass uses the same (last seen) input/output pair for each module. If the shared module calls have matching tensor shapes, it silently fails"); the guided-backprop visualisation of https://github.com/utkuozbulak/pytorch-cnn-visualizations keeps the forward ReLU outputs in a list for the same reason
# family: H
# expect: silent
# verify: the guided-backprop saliency map is compared with one computed with each ReLU call's own mask
# line: 38  (backward: 49)
# fix: keep a stack of the saved inputs (module.saved_inputs.append(...)) and pop it in the backward hook (last call first)
import torch
import torch.nn as nn

torch.manual_seed(0)


class SmallNet(nn.Module):
    def __init__(self, c=4, n_classes=3):
        super().__init__()
        self.conv1 = nn.Conv2d(3, c, 3, padding=1)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
        self.relu = nn.ReLU()  # one module, called after both convolutions
        self.fc = nn.Linear(c * 8 * 8, n_classes)

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        return self.fc(x.flatten(1))


class GuidedBackprop:
    """Guided backpropagation: only positive gradients pass through a ReLU, and only where its input was positive."""

    def __init__(self, model):
        self.model = model
        for m in model.modules():
            if isinstance(m, nn.ReLU):
                m.register_forward_hook(self.save_input)
                m.register_full_backward_hook(self.guide)

    def save_input(self, module, inputs, output):
        module.saved_input = inputs[0].detach()

    def guide(self, module, grad_input, grad_output):
        saved = module.saved_input
        mask = (saved > 0).type_as(grad_output[0])
        return (grad_output[0].clamp(min=0.0) * mask,)

    def saliency(self, image, target):
        image = image.clone().requires_grad_(True)
        out = self.model(image)
        self.model.zero_grad()
        out[0, target].backward()
        return image.grad


def reference_saliency(model, image, target):
    """The same rule written out, each ReLU call with its own mask."""
    image = image.clone().requires_grad_(True)
    a1 = model.conv1(image)
    h1 = a1.clamp(min=0)
    a2 = model.conv2(h1)
    h2 = a2.clamp(min=0)
    out = model.fc(h2.flatten(1))
    g_h2 = torch.autograd.grad(out[0, target], h2, retain_graph=True)[0]
    g_a2 = g_h2.clamp(min=0) * (a2 > 0)
    g_h1 = torch.autograd.grad(a2, h1, g_a2, retain_graph=True)[0]
    g_a1 = g_h1.clamp(min=0) * (a1 > 0)
    return torch.autograd.grad(a1, image, g_a1)[0]


if __name__ == "__main__":
    model = SmallNet().eval()
    explainer = GuidedBackprop(model)
    image = torch.randn(1, 3, 8, 8)
    target = model(image).argmax(dim=1).item()
    got = explainer.saliency(image, target)
    ref = reference_saliency(model, image, target)
    print("saliency energy", got.pow(2).sum().item())
    print("MATCH" if torch.allclose(got, ref, atol=1e-6) else
          "MISMATCH: the first ReLU call was guided with the second call's mask; max difference %.4f" % (got - ref).abs().max().item())
