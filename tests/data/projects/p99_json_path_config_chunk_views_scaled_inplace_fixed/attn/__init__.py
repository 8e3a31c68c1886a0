from .config import load_config
from .model import QKNet
