import sys

from .terms import ce_loss, zero_reg

_self = sys.modules[__name__]


def build_total_loss(terms):
    fns = [(getattr(_self, name), w) for name, w in terms]
    return lambda out, aux, y: sum(w * fn(out, aux, y) for fn, w in fns)
