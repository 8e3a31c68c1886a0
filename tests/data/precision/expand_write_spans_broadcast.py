# from: the GW301 rule's own example; an integer index that leaves a broadcast dimension whole
# pattern: `mask[0] = ...` into `base.expand(2, 5, 3)` of a (2, 1, 3) base: the written part still
#          repeats one memory cell 5 times, and torch raises (a literal index is not always silent)
# expect: GW301 error 10
# torch: raises
import torch

base = torch.zeros(2, 1, 3)
mask = base.expand(2, 5, 3)
mask[0] = torch.ones(5, 3)
