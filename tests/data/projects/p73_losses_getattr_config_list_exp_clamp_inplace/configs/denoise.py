MODEL = dict(channels=4, hidden=16)
TRAIN = dict(lr=1e-3, iters=3, batch_size=8)
LOSSES = [
    ("l1_loss", 1.0),
    ("gaussian_nll_loss", 0.1),
]
