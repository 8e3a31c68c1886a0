import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def _convert(value):
    value = value.strip()
    if value.lower() in ("true", "yes"):
        return True
    if value.lower() in ("false", "no"):
        return False
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        return value


def load_config(name):
    cfg = {}
    with open(os.path.join(_HERE, name + ".yaml")) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if not line:
                continue
            key, value = line.split(":", 1)
            cfg[key.strip()] = _convert(value)
    return cfg
