import torch.nn as nn

from ops.grad_reverse import grad_reverse


class DANN(nn.Module):
    def __init__(self, in_dim=12, feat=16, n_classes=3):
        super().__init__()
        self.feature = nn.Sequential(nn.Linear(in_dim, feat), nn.ReLU())
        self.class_classifier = nn.Sequential(nn.Linear(feat, feat), nn.ReLU(True), nn.Linear(feat, n_classes))
        self.domain_classifier = nn.Sequential(nn.Linear(feat, feat), nn.ReLU(True), nn.Linear(feat, 2))

    def forward(self, x, alpha):
        feature = self.feature(x)
        class_output = self.class_classifier(feature)
        domain_output = self.domain_classifier(grad_reverse(feature, alpha))
        return class_output, domain_output
