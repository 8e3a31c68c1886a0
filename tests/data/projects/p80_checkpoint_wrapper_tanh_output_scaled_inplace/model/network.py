import torch.nn as nn

from model.blocks import GLUBlock
from utils.checkpointing import CheckpointWrapper


class DeepGLU(nn.Module):
    def __init__(self, dim=16, depth=3, num_classes=4, grad_ckpt=True):
        super().__init__()
        self.blocks = nn.Sequential(*[CheckpointWrapper(GLUBlock(dim), enabled=grad_ckpt)
                                      for _ in range(depth)])
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        return self.head(self.blocks(x))
