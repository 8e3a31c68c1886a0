from onmt.models.model import NMTModel
from onmt.models.model_builder import build_model

__all__ = ["NMTModel", "build_model"]
