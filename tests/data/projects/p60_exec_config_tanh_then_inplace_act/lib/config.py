import os


class Config(dict):
    """A dict whose keys read as attributes (detectron2 / mmcv style, reduced)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError as e:
            raise AttributeError(name) from e


def load_config(path):
    ns = {}
    with open(path) as f:
        exec(compile(f.read(), os.path.basename(path), "exec"), ns)
    return Config({k: v for k, v in ns.items() if not k.startswith("__")})
