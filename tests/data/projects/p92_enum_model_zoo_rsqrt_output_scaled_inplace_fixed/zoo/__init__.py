from .registry import Arch, build_model
