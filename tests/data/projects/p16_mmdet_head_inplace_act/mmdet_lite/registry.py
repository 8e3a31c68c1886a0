class Registry:
    """A name -> class table filled by a decorator, as in mmcv/mmengine."""

    def __init__(self, name):
        self.name = name
        self._module_dict = {}

    def register_module(self, name=None):
        def _register(cls):
            self._module_dict[name or cls.__name__] = cls
            return cls
        return _register

    def get(self, key):
        return self._module_dict[key]

    def build(self, cfg, **default_args):
        args = dict(cfg)
        obj_type = args.pop("type")
        args.update(default_args)
        return self.get(obj_type)(**args)


BACKBONES = Registry("backbone")
HEADS = Registry("head")
DETECTORS = Registry("detector")
