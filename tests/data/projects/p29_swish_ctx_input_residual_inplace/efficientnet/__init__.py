from .model import TinyEfficientNet

__all__ = ["TinyEfficientNet"]
