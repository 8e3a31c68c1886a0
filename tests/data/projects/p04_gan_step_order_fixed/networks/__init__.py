from . import mlp  # noqa: F401  (registers the networks)
from .registry import NETWORKS, build_network

__all__ = ["NETWORKS", "build_network"]
