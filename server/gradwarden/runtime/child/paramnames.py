"""Names of parameters for reports: ``encoder.layers.0.weight`` and where its module was built."""
from .records import _mod_sites


def describe(param):
    """(qualified name, owning module's type name, construction site of the owning module) of
    ``param`` among the modules the run built; (None, None, None) when no module holds it."""
    best = None
    if _mod_sites is None:
        return None, None, None
    try:
        modules = list(_mod_sites.keys())
    except Exception:  # noqa: BLE001
        return None, None, None
    for m in modules:
        try:
            for name, p in m.named_parameters(recurse=False):
                if p is param:
                    owner = (name, m)
                    break
            else:
                continue
        except Exception:  # noqa: BLE001
            continue
        # the longest name from a root that holds the owner
        full = owner[0]
        for root in modules:
            try:
                for prefix, sub in root.named_modules():
                    if sub is m and prefix and len(prefix) + 1 + len(owner[0]) > len(full):
                        full = prefix + "." + owner[0]
            except Exception:  # noqa: BLE001
                continue
        best = (full, type(m).__name__, _mod_sites.get(m))
        break
    return best if best is not None else (None, None, None)


def quoted(param, name):
    """How a report names ``param``: its qualified name (from :func:`describe`) in backquotes, else
    its shape."""
    return "`%s`" % name if name else "a tensor of shape %s" % (list(param.shape),)
