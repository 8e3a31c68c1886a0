from .gp import compute_gradient_penalty
from .wasserstein import critic_loss, generator_loss
