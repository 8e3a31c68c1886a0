import torch.nn as nn


class MLPNet(nn.Module):
    def __init__(self, in_dim=12, hidden=32, feat_dim=8, num_classes=3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(),
                                  nn.Linear(hidden, feat_dim), nn.ReLU())
        self.fc = nn.Linear(feat_dim, num_classes)

    def forward(self, x, is_feat=False):
        feat = self.body(x)
        logit = self.fc(feat)
        if is_feat:
            return feat, logit
        return logit
