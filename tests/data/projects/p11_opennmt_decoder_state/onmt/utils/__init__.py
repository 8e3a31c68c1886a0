from onmt.utils.optimizers import build_torch_optimizer

__all__ = ["build_torch_optimizer"]
