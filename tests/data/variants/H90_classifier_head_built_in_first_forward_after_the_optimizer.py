# source: Keras-style 'infer the input size on the first call' heads ported to PyTorch (the reason torch's nn.LazyLinear documentation says to run a dry forward before constructing the optimizer): the classifier head is created inside forward() on the first batch, after the optimizer was built over model.parameters(), so the optimizer never holds the head and it keeps its random weights
# family: H
# expect: silent
# verify: the head's weights are compared before and after the training steps
# line: 24, 31
# fix: run one forward pass (or build the head in __init__) before constructing the optimizer
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AutoHeadClassifier(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.num_classes = num_classes
        self.head = None

    def forward(self, x):
        h = self.features(x)
        if self.head is None:
            self.head = nn.Linear(h.shape[1], self.num_classes)
        return self.head(h)


if __name__ == "__main__":
    model = AutoHeadClassifier(num_classes=5)
    images, labels = torch.randn(8, 3, 16, 16), torch.randint(0, 5, (8,))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    before = None
    for epoch in range(3):
        logits = model(images)
        if before is None:
            before = model.head.weight.detach().clone()
        loss = F.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("epoch", epoch, "loss %.4f" % loss.item())
    moved = not torch.equal(before, model.head.weight.detach())
    print("MATCH" if moved else "MISMATCH: the head was never updated (the optimizer does not hold it)")
