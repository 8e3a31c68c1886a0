"""A minimal PPO (stable-baselines3 layout, reduced)."""
__version__ = "0.1.0"
