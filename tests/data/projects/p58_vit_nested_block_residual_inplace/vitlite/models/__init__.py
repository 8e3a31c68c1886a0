from .vit import VisionTransformer as ViT

__all__ = ["ViT"]
