from .dense import Dense
from .expo import Expo
from .gate import HalfGate

__all__ = ["Dense", "Expo", "HalfGate"]
