from .factory import create_model
