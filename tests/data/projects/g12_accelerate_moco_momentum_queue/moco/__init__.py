from .builder import MoCo
