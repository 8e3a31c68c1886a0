from .models import build_detector
from .losses import build_loss
