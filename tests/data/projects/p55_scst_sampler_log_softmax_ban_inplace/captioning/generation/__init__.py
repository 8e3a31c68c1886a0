from .sampler import MultinomialSampler as Sampler

__all__ = ["Sampler"]
