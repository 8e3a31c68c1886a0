from .model import SwAVModel
from .utils import normalize_prototypes, sinkhorn

__all__ = ["SwAVModel", "normalize_prototypes", "sinkhorn"]
