from .methods import smooth_grad, vanilla_gradient

__all__ = ["smooth_grad", "vanilla_gradient"]
