from .gaussian import GaussianDiffusion
from .schedule import LearnedNoiseSchedule
