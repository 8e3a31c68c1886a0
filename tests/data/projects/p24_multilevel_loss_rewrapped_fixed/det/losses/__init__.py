LOSSES = {}


def register_loss(name):
    def deco(cls):
        LOSSES[name] = cls
        return cls
    return deco


def build_loss(cfg):
    cfg = dict(cfg)
    return LOSSES[cfg.pop("name")](**cfg)


from . import focal, regression  # noqa: E402,F401  (registers the losses)
