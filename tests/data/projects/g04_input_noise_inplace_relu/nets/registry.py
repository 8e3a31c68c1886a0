NETS = {}


def register(cls):
    NETS[cls.__name__.lower()] = cls
    return cls


def build_net(cfg):
    cfg = dict(cfg)
    return NETS[cfg.pop("arch")](**cfg)
