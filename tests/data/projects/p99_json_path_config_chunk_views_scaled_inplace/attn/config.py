import json
from pathlib import Path

CONFIG_PATH = Path(__file__).parent / "cfg.json"


def load_config(path=CONFIG_PATH):
    with open(path) as f:
        cfg = json.load(f)
    cfg.setdefault("dim", 8)
    return cfg
