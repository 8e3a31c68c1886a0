class DictConfig(dict):
    """A small stand-in for omegaconf.DictConfig: nested dicts read as attributes."""

    def __init__(self, content):
        super().__init__()
        for key, value in content.items():
            self[key] = DictConfig(value) if isinstance(value, dict) else value

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name)


def compose(overrides=None):
    cfg = {
        "model": {"in_dim": 6, "hidden": 12, "n_classes": 3},
        "trainer": {"max_steps": 4, "val_every": 2, "lr": 0.05},
    }
    for key, value in (overrides or {}).items():
        section, name = key.split(".")
        cfg[section][name] = value
    return DictConfig(cfg)
