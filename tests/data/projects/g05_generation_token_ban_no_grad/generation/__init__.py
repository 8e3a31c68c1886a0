from .utils import generate

__all__ = ["generate"]
