from .hint_kd import HintKDLoss
