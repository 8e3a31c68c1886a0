import torch.nn as nn

from ._registry import register_model

__all__ = ["MlpMixer"]


class MlpMixer(nn.Module):
    def __init__(self, patch_dim=12, num_patches=4, embed_dim=16, num_classes=5):
        super().__init__()
        self.stem = nn.Linear(patch_dim, embed_dim)
        self.token_mix = nn.Linear(num_patches, num_patches)
        self.head = nn.Linear(embed_dim, num_classes)

    def forward(self, x):
        x = self.stem(x)
        x = x + self.token_mix(x.transpose(1, 2)).transpose(1, 2)
        return self.head(x.mean(dim=1))


@register_model
def mixer_tiny_patch4(pretrained=False, **kwargs):
    return MlpMixer(**kwargs)
