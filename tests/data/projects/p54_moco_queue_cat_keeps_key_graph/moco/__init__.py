from .builder import QueueContrast
from .encoder import MLPEncoder
