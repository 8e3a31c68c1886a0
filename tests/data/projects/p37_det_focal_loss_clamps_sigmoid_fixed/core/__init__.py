from .builder import build_head, build_loss
from .registry import HEADS, LOSSES
