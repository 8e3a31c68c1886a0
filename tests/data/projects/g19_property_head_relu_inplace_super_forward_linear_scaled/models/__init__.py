from .net import MultiHeadNet
