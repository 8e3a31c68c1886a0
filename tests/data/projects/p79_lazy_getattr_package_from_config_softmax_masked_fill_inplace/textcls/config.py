class Config:
    def __init__(self, vocab_size=50, dim=16, num_classes=3, pad_id=0):
        self.vocab_size = vocab_size
        self.dim = dim
        self.num_classes = num_classes
        self.pad_id = pad_id
