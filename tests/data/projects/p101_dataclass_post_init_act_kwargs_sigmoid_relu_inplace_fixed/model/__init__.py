from .mlp import GatedMLP
