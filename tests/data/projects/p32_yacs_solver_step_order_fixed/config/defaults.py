from .node import CfgNode

_C = CfgNode()
_C.MODEL = CfgNode()
_C.MODEL.DIM = 6
_C.SOLVER = CfgNode()
_C.SOLVER.OPTIMIZER = "Adam"
_C.SOLVER.LR = 1e-3
_C.SOLVER.ITERS = 3
