MODEL = {"channels": 4, "num_classes": 2}
LOSS_CLS = {"name": "sigmoid_focal", "alpha": 0.25, "gamma": 2.0}
LOSS_BOX = {"name": "multi_level_l1", "beta": 0.11}
LEVELS = (8, 4)
