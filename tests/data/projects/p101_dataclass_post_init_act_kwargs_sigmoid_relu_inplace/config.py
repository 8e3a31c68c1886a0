from dataclasses import dataclass, field


@dataclass
class ModelConfig:
    in_dim: int = 5
    widths: list = field(default_factory=lambda: [8, 8])
    memory_efficient: bool = True
    act_kwargs: dict = field(init=False)

    def __post_init__(self):
        self.act_kwargs = {"inplace": self.memory_efficient}
