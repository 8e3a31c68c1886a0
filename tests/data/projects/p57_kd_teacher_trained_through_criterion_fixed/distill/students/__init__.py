from .small_mlp import SmallMLP
