from .embeddings import add_placeholder_token, frozen_rows_mask, restore_frozen_rows
from .model import TinyTextEncoder

__all__ = ["add_placeholder_token", "frozen_rows_mask", "restore_frozen_rows", "TinyTextEncoder"]
