# source: GAIN (Guided Attention Inference Network) / trainable Grad-CAM re-implementations that port the numpy normalisation `cam -= cam.min(); cam /= cam.max()` to the differentiable attention map (ReluBackward and the min/max reductions need cam)
# family: B
# expect: ok
# line: 32, 33  (backward: 49)
# fix: (fixed version of B65_gain_gradcam_minmax_normalized_inplace.py) normalise out-of-place: cam = cam - cam.min(); cam = cam / (cam.max() + 1e-8)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GAIN(nn.Module):
    def __init__(self, n_cls=4, c=8, sigma=0.5, omega=10.0):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, c, 3, padding=1), nn.ReLU(), nn.Conv2d(c, c, 3, padding=1), nn.ReLU()
        )
        self.classifier = nn.Linear(c, n_cls)
        self.sigma, self.omega = sigma, omega

    def classify(self, x):
        feats = self.features(x)
        return feats, self.classifier(feats.mean(dim=(2, 3)))

    def forward(self, x, labels):
        feats, logits = self.classify(x)
        score = logits.gather(1, labels[:, None]).sum()
        grads = torch.autograd.grad(score, feats, create_graph=True)[0]
        weights = grads.mean(dim=(2, 3), keepdim=True)
        cam = F.relu((weights * feats).sum(1, keepdim=True))
        cam = cam - cam.min()
        cam = cam / (cam.max() + 1e-8)
        soft_mask = torch.sigmoid(self.omega * (cam - self.sigma))
        _, am_logits = self.classify(x - x * soft_mask)
        return logits, am_logits


if __name__ == "__main__":
    model = GAIN()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(4, 3, 12, 12)
    labels = torch.tensor([0, 1, 2, 3])
    logits, am_logits = model(x, labels)
    loss_cl = F.cross_entropy(logits, labels)
    loss_am = torch.softmax(am_logits, 1).gather(1, labels[:, None]).mean()
    loss = loss_cl + loss_am
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss_cl", round(loss_cl.item(), 4), "loss_am", round(loss_am.item(), 4))
