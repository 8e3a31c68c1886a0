from .multihead import MultiHeadNet
