import inspect


class Registry:
    def __init__(self, name):
        self.name = name
        self._modules = {}

    def register(self, cls=None):
        if cls is None:
            return self.register
        self._modules[cls.__name__] = cls
        return cls

    def get(self, name):
        return self._modules.get(name)


def build_from_cfg(cfg, registry, **defaults):
    args = cfg.copy()
    obj_type = args.pop("type")
    obj_cls = registry.get(obj_type) if isinstance(obj_type, str) else obj_type
    if obj_cls is None or not inspect.isclass(obj_cls):
        raise KeyError(obj_type)
    for k, v in defaults.items():
        args.setdefault(k, v)
    return obj_cls(**args)
