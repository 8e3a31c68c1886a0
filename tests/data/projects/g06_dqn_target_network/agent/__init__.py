from .factory import make_agent

__all__ = ["make_agent"]
