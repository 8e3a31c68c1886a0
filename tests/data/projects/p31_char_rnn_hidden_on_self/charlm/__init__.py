MODELS = {}


def register(name):
    def add(cls):
        MODELS[name] = cls
        return cls
    return add


def create(name, **kwargs):
    return MODELS[name](**kwargs)


from . import nets  # noqa: E402,F401  (registers the models)
