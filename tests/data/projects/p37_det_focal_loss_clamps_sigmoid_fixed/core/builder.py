from .registry import HEADS, LOSSES


def build(cfg, registry):
    args = dict(cfg)
    obj_type = args.pop("type")
    return registry.get(obj_type)(**args)


def build_head(cfg):
    return build(cfg, HEADS)


def build_loss(cfg):
    return build(cfg, LOSSES)
