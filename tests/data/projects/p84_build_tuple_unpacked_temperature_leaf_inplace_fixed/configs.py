CFG = {
    "model": {"dim": 12, "n_classes": 3},
    "optim": {"name": "SGD", "lr": 0.05},
    "temperature_decay": 0.9,
}
