from .instantiate import instantiate

__all__ = ["instantiate"]
