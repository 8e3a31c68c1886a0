from ._registry import create_model, list_models, register_model
from .mlp_mixer import *
from .vision_transformer import *
