from .sam import SAM

__all__ = ["SAM"]
