class CfgNode(dict):
    """An attribute-style config (as yacs' CfgNode): `cfg.SOLVER.LR` reads `cfg["SOLVER"]["LR"]`."""

    def __getattr__(self, name):
        if name in self:
            return self[name]
        raise AttributeError(name)

    def __setattr__(self, name, value):
        self[name] = value
