from .scaled_tanh import ScaledTanhFunction, scaled_tanh

__all__ = ["ScaledTanhFunction", "scaled_tanh"]
