import torch
import torch.nn as nn

from ._registry import register_model

__all__ = ["VisionTransformer"]


class VisionTransformer(nn.Module):
    def __init__(self, patch_dim=12, num_patches=4, embed_dim=16, num_classes=5):
        super().__init__()
        self.patch_embed = nn.Linear(patch_dim, embed_dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.pos_embed = nn.Parameter(torch.randn(1, num_patches + 1, embed_dim) * 0.02)
        self.norm = nn.LayerNorm(embed_dim)
        self.head = nn.Linear(embed_dim, num_classes)

    def _pos_embed(self, x):
        cls_token = self.cls_token.expand(x.shape[0], -1, -1)
        cls_token = cls_token + self.pos_embed[:, :1]
        return torch.cat([cls_token, x + self.pos_embed[:, 1:]], dim=1)

    def forward_features(self, x):
        x = self._pos_embed(self.patch_embed(x))
        return self.norm(x)

    def forward(self, x):
        return self.head(self.forward_features(x)[:, 0])


def _create_vision_transformer(variant, pretrained=False, **kwargs):
    return VisionTransformer(**kwargs)


@register_model
def vit_tiny_patch4(pretrained=False, **kwargs):
    model_args = dict(patch_dim=12, num_patches=4, embed_dim=16)
    return _create_vision_transformer("vit_tiny_patch4", pretrained=pretrained, **dict(model_args, **kwargs))
