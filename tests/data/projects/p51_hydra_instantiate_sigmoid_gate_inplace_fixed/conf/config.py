"""Experiment config, as Hydra hands it over once `config.yaml` is loaded (`_target_` keys)."""

cfg = {
    "model": {
        "_target_": "models.gated_mlp.GatedMLP",
        "in_dim": 16,
        "hidden": 32,
        "num_classes": 4,
    },
    "optim": {"_target_": "torch.optim.AdamW", "lr": 1e-3, "weight_decay": 0.01},
    "trainer": {"max_steps": 3, "batch_size": 8},
}
