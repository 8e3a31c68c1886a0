from .decoder import GRUDecoder
