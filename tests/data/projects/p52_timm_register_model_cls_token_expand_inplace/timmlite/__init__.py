from .models import create_model, list_models, register_model

__version__ = "0.0.1"
