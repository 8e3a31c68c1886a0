from .backbone import TinyBackbone
from .detector import SingleStageDetector
from .head import SharedConvHead

__all__ = ["TinyBackbone", "SingleStageDetector", "SharedConvHead"]
