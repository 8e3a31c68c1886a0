from dataclasses import dataclass


@dataclass
class TrainConfig:
    width: int = 16
    depth: int = 2
    squash: str = "tanh"
    act: str = "elu"
    act_inplace: bool = False
    lr: float = 1e-2
    steps: int = 3
