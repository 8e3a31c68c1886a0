import torch.nn as nn

from .registry import register


class BasicBlock(nn.Module):
    def __init__(self, ch, inplace):
        super().__init__()
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(ch)
        self.relu = nn.ReLU(inplace=inplace)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(ch)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out = out + x
        return self.relu(out)


@register
class TinyResNet(nn.Module):
    def __init__(self, width=8, blocks=2, num_classes=4, inplace=True):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, width, 3, padding=1, bias=False), nn.BatchNorm2d(width),
                                  nn.ReLU(inplace=inplace))
        self.layers = nn.Sequential(*[BasicBlock(width, inplace) for _ in range(blocks)])
        self.fc = nn.Linear(width, num_classes)

    def forward(self, x):
        return self.fc(self.layers(self.stem(x)).mean(dim=(2, 3)))
