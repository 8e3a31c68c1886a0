NETWORKS = {}


def register(name):
    def deco(cls):
        NETWORKS[name] = cls
        return cls
    return deco


def build_network(name, **kwargs):
    return NETWORKS[name](**kwargs)
