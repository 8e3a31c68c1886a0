NET = {"arch": "tinyresnet", "width": 8, "blocks": 2, "num_classes": 4, "inplace": True}
TRAIN = {"lr": 0.05, "noise_std": 0.15, "steps": 2}
