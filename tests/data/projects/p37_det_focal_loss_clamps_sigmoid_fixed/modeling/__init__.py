from . import heads, losses  # noqa: F401  (fills the registries)
