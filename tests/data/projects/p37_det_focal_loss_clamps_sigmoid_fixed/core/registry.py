class Registry:
    def __init__(self, name):
        self.name = name
        self._module_dict = {}

    def register(self, cls=None, name=None):
        def _register(c):
            self._module_dict[name or c.__name__] = c
            return c
        return _register(cls) if cls is not None else _register

    def get(self, key):
        return self._module_dict[key]


HEADS = Registry("heads")
LOSSES = Registry("losses")
