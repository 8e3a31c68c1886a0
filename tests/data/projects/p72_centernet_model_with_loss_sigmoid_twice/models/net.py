import torch.nn as nn


class CenterNetLite(nn.Module):
    def __init__(self, heads, head_conv=8):
        super().__init__()
        self.base = nn.Sequential(nn.Conv2d(3, head_conv, 3, padding=1), nn.ReLU(inplace=True))
        self.heads = heads
        for head, classes in heads.items():
            layers = [nn.Conv2d(head_conv, head_conv, 3, padding=1), nn.ReLU(inplace=True),
                      nn.Conv2d(head_conv, classes, 1)]
            if head == "hm":
                layers.append(nn.Sigmoid())
            self.__setattr__(head, nn.Sequential(*layers))

    def forward(self, x):
        x = self.base(x)
        return [{head: self.__getattr__(head)(x) for head in self.heads}]
