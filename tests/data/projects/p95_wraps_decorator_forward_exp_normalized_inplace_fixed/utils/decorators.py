import functools


def normalized(dim=-1):
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(self, *args, **kwargs):
            out = fn(self, *args, **kwargs)
            out = out / out.sum(dim=dim, keepdim=True)
            return out
        return wrapper
    return decorator
