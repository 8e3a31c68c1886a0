DEFAULTS = {
    "LR": 1e-4,
    "D2G_LR": 0.1,
    "BETA1": 0.0,
    "BETA2": 0.9,
    "OPTIMIZER": "Adam",
    "L1_LOSS_WEIGHT": 1.0,
    "ADV_LOSS_WEIGHT": 0.1,
    "ITERS": 2,
}


class Config(dict):
    def __init__(self, **overrides):
        super().__init__(DEFAULTS)
        self.update(overrides)

    def __getattr__(self, name):
        return self[name]
