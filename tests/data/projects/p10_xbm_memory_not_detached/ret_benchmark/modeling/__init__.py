from .build import build_model
from .xbm import XBM

__all__ = ["build_model", "XBM"]
