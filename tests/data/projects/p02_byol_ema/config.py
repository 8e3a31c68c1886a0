"""Hyper-parameters (a module-level config, as many self-supervised repos keep them)."""
CFG = {
    "in_dim": 12,
    "hidden": 32,
    "proj": 8,
    "tau": 0.99,
    "optimizer": "Adam",
    "lr": 3e-3,
    "steps": 3,
    "batch": 16,
}
