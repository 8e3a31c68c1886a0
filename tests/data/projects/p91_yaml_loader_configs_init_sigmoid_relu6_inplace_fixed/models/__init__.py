from .gated import GatedMLP
