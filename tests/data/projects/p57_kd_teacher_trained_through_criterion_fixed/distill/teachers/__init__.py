from .wide_mlp import build_teacher
