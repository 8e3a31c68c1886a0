from .functions import inplace_leaky_relu
from .layers import InPlaceActBlock

__all__ = ["inplace_leaky_relu", "InPlaceActBlock"]
