cfg = {
    "model": {"channels": [16, 32], "act": "ReLU", "act_kwargs": {"inplace": True}, "ckpt": True},
    "optim": {"name": "Adam", "lr": 1e-3},
    "train": {"steps": 3, "batch_size": 8},
}
