"""gradwarden: find PyTorch autograd hazards before (and while) they bite."""

__version__ = "0.1.0"
