from .penalty import EWC

__all__ = ["EWC"]
