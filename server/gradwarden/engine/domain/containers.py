"""Items stored into a module container by subscript: ``self.heads[name] = nn.Linear(...)``,
``self.bias[domain] = nn.Parameter(...)`` (``ModuleDict``/``ParameterDict``, also ``ModuleList``/
``ParameterList`` and ``Sequential`` by position). torch registers the value as a submodule / parameter of the
container, so it is among ``model.parameters()`` from then on — and not among the parameters an
optimizer built earlier took (a per-domain bias made lazily in ``forward``)."""
from __future__ import annotations

from typing import Any, List, Optional

from gradwarden.engine.state.model import UNKNOWN, ConstV, ObjV, SeqV, State, TensorV, UnknownV, Value

CONTAINER_CLASSES = ("torch.nn.Sequential", "torch.nn.ModuleDict", "torch.nn.ParameterDict", "torch.nn.ModuleList", "torch.nn.ParameterList")


def store_into_container(it: Any, obj: ObjV, key: Value, value: Value, st: State) -> bool:
    """``obj[key] = value`` for a module container: the child replaced (a key it has) or added (a
    new key; a key the analysis cannot read adds one child, then replaces it: the loop that stores
    one item per unknown key stays bounded). False when ``obj`` is not such a container."""
    attrs = st.attrs(obj.oid)
    torch_cls = attrs.get("__torch__")
    qual = torch_cls.value if isinstance(torch_cls, ConstV) else None
    children, keys_v = attrs.get("__children__"), attrs.get("__keys__")
    if qual not in CONTAINER_CLASSES or not isinstance(children, SeqV) or not isinstance(keys_v, SeqV):
        return False
    if not isinstance(value, (ObjV, TensorV)):
        return False
    kids: List[Value] = list(st.lists.get(children.lid, ()))
    keys: List[Value] = list(st.lists.get(keys_v.lid, ()))
    name = key.value if isinstance(key, ConstV) and isinstance(key.value, (str, int)) else None
    indexed = qual.endswith(("List", "Sequential"))  # `seq[-1] = head`: by position
    if name is not None and indexed and isinstance(name, int):
        name = str(name if name >= 0 else len(kids) + name)
    for i, k in enumerate(keys[:len(kids)]):
        if (name is not None and isinstance(k, ConstV) and k.value == str(name)) or \
                (name is None and isinstance(k, UnknownV)):
            kids[i] = value
            break
    else:
        if indexed and name is not None:
            return True  # an index past the end raises in torch: nothing added
        kids.append(value)
        keys.append(ConstV(str(name)) if name is not None else UNKNOWN)
    st.own("lists")[children.lid] = tuple(kids)
    st.own("lists")[keys_v.lid] = tuple(keys)
    return True


def container_length(obj: ObjV, st: State) -> Optional[int]:
    """``len(container)`` when the analysis knows its children (built from a list of known length,
    grown by ``append``/``extend``/a store): a ``while len(self.protos) < n:`` that fills a container
    made full in ``__init__`` then runs no step. None when the length is not known."""
    attrs = st.attrs(obj.oid)
    torch_cls = attrs.get("__torch__")
    if not isinstance(torch_cls, ConstV) or torch_cls.value not in CONTAINER_CLASSES + ("torch.nn.Sequential",):
        return None
    children = attrs.get("__children__")
    if not isinstance(children, SeqV) or children.kind == "homogeneous":
        return None
    return len(st.lists.get(children.lid, ()))


def replace_named_child(it: Any, obj: ObjV, attr: str, value: Value, st: State) -> bool:
    """``setattr(container, name, module)`` with the name of one of its children (``"0"`` of a
    ``Sequential`` walked with ``named_children()``, a key of a ``ModuleDict``): torch's
    ``Module.__setattr__`` replaces the entry of ``_modules`` the forward runs, in its place.
    False when ``obj`` is no such container or has no child of that name (a new attribute)."""
    keys_v = st.attrs(obj.oid).get("__keys__")
    if not isinstance(keys_v, SeqV) or not any(isinstance(k, ConstV) and k.value == attr
                                               for k in st.lists.get(keys_v.lid, ())):
        return False
    return store_into_container(it, obj, ConstV(attr), value, st)
