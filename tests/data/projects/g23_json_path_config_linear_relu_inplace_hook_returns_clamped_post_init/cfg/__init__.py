import json
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class NetConfig:
    dim: int = 6
    hidden: list = field(default_factory=lambda: [16])
    options: dict = field(default_factory=dict)
    act_kwargs: dict = field(init=False)

    def __post_init__(self):
        self.act_kwargs = {"inplace": bool(self.options.get("act_inplace", False))}


def load(name="net.json"):
    with open(Path(__file__).parent / name) as f:
        return NetConfig(options=json.load(f))
