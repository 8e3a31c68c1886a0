from .registry import NETS, build_net
from . import resnet  # noqa: F401,E402  (registers the networks)

__all__ = ["NETS", "build_net"]
