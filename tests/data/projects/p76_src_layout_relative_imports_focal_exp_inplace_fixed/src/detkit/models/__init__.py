from . import heads
from .detector import Detector


def build_detector(num_classes, head="cls"):
    return Detector(heads.HEADS[head](32, num_classes))
