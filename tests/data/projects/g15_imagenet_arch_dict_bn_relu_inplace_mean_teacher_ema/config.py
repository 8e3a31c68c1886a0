from dataclasses import dataclass


@dataclass
class Config:
    arch: str = "vgg_small_bn"
    lr: float = 0.05
    consistency: float = 1.0
    steps: int = 3
