"""accelerate 1.15.0, utils/transformer_engine.py:75 and :82 (GW101 information): converting a
TransformerEngine model back (`convert_model(model, to_transformer_engine=False)`, which
utils/other.py:349 `extract_model_from_parallel(..., keep_fp32_wrapper=False)` calls without
no_grad) builds a fresh nn.Linear / nn.LayerNorm and fills its parameters with
`new_module.weight.copy_(module.weight)`: an in-place write on a leaf that requires grad, which
raises when gradients are on (the forward conversion in accelerator.py runs under no_grad)."""
import sys

import torch
from torch import nn

te_linear = nn.Linear(4, 4)  # stands for the transformer_engine module being converted back
new_module = nn.Linear(te_linear.in_features, te_linear.out_features, bias=True)
try:
    new_module.weight.copy_(te_linear.weight)
except RuntimeError as e:
    with torch.no_grad():
        new_module.weight.copy_(te_linear.weight)  # what runs when the caller disables grad
    print("REPRODUCED:", str(e).splitlines()[0][:120])
    sys.exit(0)
print("not reproduced: the copy ran")
sys.exit(1)
