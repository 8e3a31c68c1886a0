import functools


def scaled(factor):
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(self, *args, **kwargs):
            out = fn(self, *args, **kwargs)
            out *= factor
            return out
        return wrapper
    return decorator
