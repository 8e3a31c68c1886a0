from .convnet import PiNet

__all__ = ["PiNet"]
