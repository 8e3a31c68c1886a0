from functools import partial

from .model import RNNModel, TinyAttnLM

MODELS = {
    "lstm": partial(RNNModel, nlayers=1),
    "attn": partial(TinyAttnLM, num_heads=2),
}
