cfg = {
    "model": {
        "channels": [16, 32, 32],
        "act": "ReLU6",
        "act_kwargs": {"inplace": False},
        "gate": True,
    },
    "optim": {"name": "SGD", "lr": 0.05},
    "train": {"steps": 3, "batch_size": 8},
}
