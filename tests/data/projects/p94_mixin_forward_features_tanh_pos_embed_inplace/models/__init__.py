from .vit import TinyViT
