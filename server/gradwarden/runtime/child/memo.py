"""Functions memoised with ``functools.lru_cache`` / ``functools.cache``: where each was decorated.

A method that returns a tensor computed from parameters, memoised by the cache decorator, returns
the first call's tensor, with the first step's graph, at every later call: the second step's
backward runs into the graph the first one freed (freed.py names the decorator, the line to change).
"""
import functools

from .userfiles import _caller, _site, _user_frame

_decorated = {}  # code object of a memoised function of the program -> where the decorator is
_MAX = 256


def note(fn, site):
    code = getattr(fn, "__code__", None)
    if code is not None and site is not None and len(_decorated) < _MAX:
        _decorated.setdefault(code, site)


def site_of(code):
    return _decorated.get(code)


def install():
    orig = functools.lru_cache

    def lru_cache(*args, **kwargs):
        out = orig(*args, **kwargs)
        try:
            site = _site(_user_frame(_caller(1)))
            if args and callable(args[0]):  # `@lru_cache` without arguments: `out` is the wrapper
                note(args[0], site)
                return out

            def decorating_function(user_function, _deco=out, _site=site):
                note(user_function, _site)
                return _deco(user_function)

            return decorating_function
        except Exception:  # noqa: BLE001
            return out

    lru_cache.__wrapped__ = orig
    lru_cache.__doc__ = orig.__doc__
    functools.lru_cache = lru_cache
