"""Experiment config as Hydra hands it over (`_target_` keys, nested objects built recursively)."""

cfg = {
    "model": {
        "_target_": "models.classifier.Classifier",
        "in_dim": 16,
        "hidden": 32,
        "num_classes": 4,
        "act": {"_target_": "torch.nn.ReLU", "inplace": True},
        "temperature": 2.0,
    },
    "optim": {"_target_": "torch.optim.SGD", "_partial_": True, "lr": 0.05, "momentum": 0.9},
    "trainer": {"max_steps": 3, "batch_size": 8},
}
