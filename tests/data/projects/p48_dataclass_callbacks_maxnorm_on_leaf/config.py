from dataclasses import dataclass, field
from typing import List


@dataclass
class TrainConfig:
    in_dim: int = 12
    hidden: int = 24
    num_classes: int = 4
    lr: float = 0.05
    epochs: int = 2
    batch_size: int = 16
    max_norm: float = 0.5
    callbacks: List[str] = field(default_factory=lambda: ["loss_logger", "max_norm"])
