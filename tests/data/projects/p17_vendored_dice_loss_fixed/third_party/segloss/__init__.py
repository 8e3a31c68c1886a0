"""Segmentation losses, vendored (after JunMa11/SegLoss and hubutui/DiceLoss-PyTorch)."""
from .dice import BinaryDiceLoss, DiceLoss

__all__ = ["BinaryDiceLoss", "DiceLoss"]
