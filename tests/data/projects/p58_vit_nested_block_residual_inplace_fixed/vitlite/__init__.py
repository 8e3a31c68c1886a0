from .models import ViT

__all__ = ["ViT"]
