"""The generated op table (gradwarden/engine/domain/data/optable.json) and its loader.

Spot checks of the facts in shared/design/autograd-facts.md, loader behaviour (overload
selection, merging, aliases, unknown names), and a regeneration test that rebuilds the table
with the installed torch and requires a byte-identical result.
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from gradwarden.engine.domain import optable
from gradwarden.engine.domain.optable import lookup_function, lookup_method, lookup_module

F = "torch.nn.functional."
ALL = [True] * 8


def fn(q, kinds, kwargs=()):
    info = lookup_function(q, kinds, kwargs)
    assert info is not None, q
    return info


def meth(name, kinds=(), kwargs=()):
    info = lookup_method(name, kinds, kwargs)
    assert info is not None, name
    return info


def saved_slots(info, rg=None):
    """Names of the slots (and outputs) saved when every slot requires grad."""
    rg = rg if rg is not None else [True] * len(info.slots)
    res = {s for i, s in enumerate(info.slots) if info.saves(i, rg)}
    for j in range(max(info.n_outputs, 1)):
        key = "out" if j == 0 else f"out{j}"
        if info.saves(key, rg):
            res.add(key)
    return res


# ---------------------------------------------------------------------------------------------
# table basics


def test_table_file_small_and_loads_in_a_fresh_interpreter():
    path = optable._DATA_PATH
    assert os.path.getsize(path) < 600_000
    # load in a fresh interpreter: import + first lookup (how long it takes is a benchmark's
    # business, not a test's)
    code = ("from gradwarden.engine.domain import optable as o; "
            "print(o.lookup_function('torch.mul', ['T','T']) is not None)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
    assert "torch" not in out.stderr


def test_loader_does_not_import_torch():
    code = ("import sys; from gradwarden.engine.domain import optable as o; o.lookup_module('torch.nn.Linear'); "
            "o.known_function_names(); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_table_metadata():
    info = optable.table_info()
    assert info["format"] == 1
    assert info["torch"].startswith("2.")


def test_coverage_numbers():
    assert len(optable.known_module_names()) >= 100
    fns = optable.known_function_names()
    for q in ("torch.matmul", "torch.nn.functional.relu", "torch.linalg.solve", "torch.special.expit",
              "torch.nn.functional.conv2d", "torch.einsum", "torch.nn.functional.cross_entropy"):
        assert q in fns, q
    ms = optable.known_method_names()
    for m in ("add_", "view", "__getitem__", "__setitem__", "__mul__", "T", "relu_", "detach"):
        assert m in ms, m
    for m in ("torch.nn.Linear", "torch.nn.LSTM", "torch.nn.MultiheadAttention", "torch.nn.BatchNorm2d"):
        assert m in optable.known_module_names()


def test_unknown_names_return_none():
    assert lookup_function("torch.not_an_op", ["T"]) is None
    assert lookup_function("numpy.mul", ["T", "T"]) is None
    assert lookup_method("not_a_method", []) is None
    assert lookup_module("torch.nn.NotAModule") is None
    assert lookup_module("mypkg.Linear") is None


# ---------------------------------------------------------------------------------------------
# what is saved (autograd-facts.md table)

NOTHING = [
    ("torch.add", ["T", "T"]), ("torch.sub", ["T", "T"]), ("torch.mul", ["T", "N"]), ("torch.div", ["T", "N"]),
    ("torch.neg", ["T"]), ("torch.sum", ["T"]), ("torch.mean", ["T"]), ("torch.cumsum", ["T", "N"]),
    ("torch.cat", ["L"]), ("torch.stack", ["L"]), ("torch.clone", ["T"]), (F + "dropout", ["T"]),
    (F + "l1_loss", ["T", "T"]), (F + "adaptive_avg_pool2d", ["T", "N=1"]),
    ("Tensor.repeat", ["T", "S"]), ("Tensor.view", ["T", "S"]), ("Tensor.t", ["T"]),
    ("torch.transpose", ["T", "N", "N"]), ("torch.unsqueeze", ["T", "N"]), ("Tensor.expand", ["T", "N", "N"]),
    (F + "adaptive_avg_pool2d", ["T"], ["output_size=1"]),
]
OUTPUT_ONLY = [
    ("torch.relu", ["T"]), (F + "relu", ["T"]), ("torch.sigmoid", ["T"]), ("torch.tanh", ["T"]),
    ("torch.exp", ["T"]), ("torch.sqrt", ["T"]), ("torch.rsqrt", ["T"]), ("torch.reciprocal", ["T"]),
    ("torch.softmax", ["T", "N"]), (F + "softmax", ["T"]), (F + "log_softmax", ["T"]),
]
INPUT_ONLY = [
    ("torch.abs", ["T"]), ("torch.log", ["T"]), ("torch.sin", ["T"]), ("torch.clamp", ["T", "N", "N"]),
    (F + "leaky_relu", ["T"]), (F + "gelu", ["T"]), (F + "silu", ["T"]), (F + "elu", ["T"]),
    (F + "softplus", ["T"]), (F + "hardtanh", ["T"]), ("torch.var", ["T"]), (F + "avg_pool2d", ["T", "N"]),
    (F + "max_pool2d", ["T", "N"]),
]
INPUT_AND_OUTPUT = [
    ("torch.amax", ["T", "N"]), ("torch.max", ["T"]), ("torch.logsumexp", ["T", "N"]), ("torch.prod", ["T"]),
    ("torch.pow", ["T", "T"]), ("torch.norm", ["T"]),
]


@pytest.mark.parametrize("args", NOTHING)
def test_saves_nothing(args):
    assert saved_slots(fn(*args)) == set()


def test_adaptive_avg_pool_depends_on_output_size():
    # autograd-facts.md lists adaptive_avg_pool as saving nothing: true only for output size 1
    # (it decomposes into mean); any other size saves the input
    assert fn(F + "adaptive_avg_pool2d", ["T", "N=2"]).saves("input", [True]) is True
    assert fn(F + "adaptive_avg_pool2d", ["T", "N=1"]).saves("input", [True]) is False
    assert fn(F + "adaptive_avg_pool2d", ["T", "N"]).saves("input", [True]) is None


@pytest.mark.parametrize("q,kinds", OUTPUT_ONLY)
def test_saves_output_only(q, kinds):
    assert saved_slots(fn(q, kinds)) == {"out"}


@pytest.mark.parametrize("q,kinds", INPUT_ONLY)
def test_saves_input_only(q, kinds):
    assert saved_slots(fn(q, kinds)) == {"input"}


@pytest.mark.parametrize("q,kinds", INPUT_AND_OUTPUT)
def test_saves_input_and_output(q, kinds):
    info = fn(q, kinds)
    s = saved_slots(info)
    assert "out" in s and info.slots[0] in s


def test_pow_scalar_saves_input():
    assert saved_slots(meth("__pow__", ["N"])) == {"self"}


def test_sigmoid_saves_out():
    info = fn("torch.sigmoid", ["T"])
    assert info.saves("out", [True]) is True
    assert info.saves("input", [True]) is False
    assert info.saves("out", [False]) is False
    assert info.saves("out", [None]) is None


@pytest.mark.parametrize("q,kinds", [("torch.mul", ["T", "T"]), ("torch.mm", ["T", "T"]),
                                     ("torch.matmul", ["T", "T"]), ("torch.bmm", ["T", "T"])])
def test_binary_saves_other_operand_conditionally(q, kinds):
    info = fn(q, kinds)
    assert info.measured
    assert info.saves(0, [True, True]) is True
    assert info.saves(0, [True, False]) is False   # a saved only if b requires grad
    assert info.saves(0, [False, True]) is True
    assert info.saves(1, [True, False]) is True
    assert info.saves(1, [False, True]) is False
    assert info.saves(0, [True, None]) is None
    assert info.saves("out", [True, True]) is False


def test_mul_by_python_scalar_saves_nothing():
    info = fn("torch.mul", ["T", "N"])
    assert info.slots == ("input",)
    assert info.saves(0, [True]) is False
    assert meth("__mul__", ["N"]).saves(0, [True]) is False
    assert meth("mul", ["N"]).saves(0, [True]) is False


def test_addmm_and_linear_conditional():
    info = fn("torch.addmm", ["T", "T", "T"])
    assert info.saves("mat1", [True, False, True]) is True
    assert info.saves("mat1", [True, True, False]) is False
    assert info.saves("input", [True, True, True]) is False  # bias never
    lin = fn(F + "linear", ["T", "T", "T"])
    assert lin.slots == ("input", "weight", "bias")
    assert lin.saves("input", [True, False, True]) is False
    assert lin.saves("input", [False, True, False]) is True
    assert lin.saves("weight", [True, True, True]) is True
    assert lin.saves("weight", [False, True, True]) is False
    assert lin.saves("bias", [True, True, True]) is False
    lin2 = fn(F + "linear", ["T", "T"])
    assert lin2.slots == ("input", "weight")


def test_div_saves_divisor_always_dividend_conditionally():
    info = fn("torch.div", ["T", "T"])
    assert info.saves("other", [True, False]) is True
    assert info.saves("input", [True, False]) is False
    assert info.saves("input", [False, True]) is True


@pytest.mark.parametrize("q,kinds,expected", [
    ("torch.conv2d", ["T", "T", "T"], {"input", "weight"}),
    (F + "conv2d", ["T", "T"], {"input", "weight"}),
    (F + "layer_norm", ["T", "S", "T", "T"], {"input", "weight", "bias"}),
    (F + "group_norm", ["T", "N", "T", "T"], {"input", "weight"}),
    (F + "mse_loss", ["T", "T"], {"input", "target"}),
    (F + "binary_cross_entropy_with_logits", ["T", "T"], {"input", "target"}),
    ("torch.clamp", ["T", "T", "T"], {"input", "min", "max"}),
])
def test_saves_always(q, kinds, expected):
    info = fn(q, kinds)
    assert saved_slots(info) == expected
    # conv2d: both even when only one requires grad
    if q.endswith("conv2d"):
        assert info.saves("input", [True, False, False][: len(info.slots)]) is True
        assert info.saves("weight", [True, False, False][: len(info.slots)]) is True


def test_conv_via_functional_alias():
    a = fn(F + "conv2d", ["T", "T", "T"])
    b = fn("torch.conv2d", ["T", "T", "T"])
    assert a.qualname == b.qualname == "torch.conv2d"
    assert "torch.nn.functional.conv2d" in optable.known_function_names()


def test_batch_norm_functional_training_and_eval():
    for tr in ("True", "False"):
        info = fn(F + "batch_norm", ["T", "T", "T", "T", "T"], [f"training={tr}"])
        assert saved_slots(info) >= {"input", "weight", "running_mean", "running_var"}


@pytest.mark.parametrize("q,kinds,saved", [
    ("torch.index_select", ["T", "N", "T"], {"index"}),
    ("torch.masked_fill", ["T", "T", "N"], {"mask"}),
    ("torch.where", ["T", "T", "T"], {"condition"}),
    (F + "embedding", ["T", "T"], {"input"}),
    (F + "cross_entropy", ["T", "T"], {"target"}),
])
def test_saves_index_tensors_only(q, kinds, saved):
    assert saved_slots(fn(q, kinds)) == saved


def test_getitem_variants():
    adv = meth("__getitem__", ["T"])
    assert adv.alias is None
    assert saved_slots(adv, [True, False]) == {"key"}
    assert meth("__getitem__", ["N"]).alias == "view"
    assert meth("__getitem__", ["S"]).alias is None   # x[[0, 2]] copies
    sl = meth("__getitem__", ["O"])
    assert sl.alias in ("view", "may_alias")


def test_setitem_mutates_and_saves_nothing_visible():
    info = meth("__setitem__", ["O", "N"])
    assert info.mutates == (0,)
    assert saved_slots(info, [True]) == set()


# ---------------------------------------------------------------------------------------------
# in-place ops


@pytest.mark.parametrize("name", ["relu_", "sigmoid_", "exp_", "tanh_"])
def test_inplace_activation_saves_mutated_tensor(name):
    info = meth(name)
    assert info.alias == "same"
    assert info.mutates == (0,)
    assert info.saves("self", [True]) is True
    assert info.saves("out", [True]) is True


def test_relu_inplace_functional_and_module():
    info = fn(F + "relu", ["T"], ["inplace=True"])
    assert info.mutates == (0,) and info.saves(0, [True]) is True
    plain = fn(F + "relu", ["T"])
    assert plain.mutates == () and plain.saves(0, [True]) is False and plain.saves("out", [True]) is True
    explicit_false = fn(F + "relu", ["T"], ["inplace=False"])
    assert explicit_false.mutates == ()
    unknown = fn(F + "relu", ["T"], ["inplace"])          # value unknown: merged conservatively
    assert unknown.mutates == (0,) and unknown.saves(0, [True]) is None
    assert fn("torch.relu_", ["T"]).saves(0, [True]) is True
    mod = lookup_module("torch.nn.ReLU", inplace=True)
    assert mod.mutates == (0,) and mod.saves("input", [True]) is True
    assert lookup_module("torch.nn.ReLU").saves("input", [True]) is False


def test_mul_div_inplace_save_other_not_self():
    for name in ("mul_", "div_"):
        info = meth(name, ["T"])
        assert info.mutates == (0,)
        assert info.saves("self", [True, True]) is False   # a clone of the old self is saved
        assert info.saves("other", [True, True]) is True


@pytest.mark.parametrize("name,kinds", [("add_", ["T"]), ("add_", ["N"]), ("clamp_", ["N", "N"]),
                                        ("sub_", ["T"])])
def test_inplace_saving_nothing_visible(name, kinds):
    info = meth(name, kinds)
    assert info.mutates == (0,) and info.alias == "same"
    assert saved_slots(info) == set()


def test_add_inplace_mutates_self():
    info = meth("add_", ["T"])
    assert info.slots == ("self", "other")
    assert info.mutates == (0,)


# ---------------------------------------------------------------------------------------------
# aliases


@pytest.mark.parametrize("name,kinds,alias", [
    ("view", ["N", "N"], "view"), ("view", ["S"], "view"), ("transpose", ["N", "N"], "view"),
    ("t", [], "view"), ("unsqueeze", ["N"], "view"), ("narrow", ["N", "N", "N"], "view"),
    ("select", ["N", "N"], "view"), ("permute", ["N", "N"], "view"), ("T", [], "view"),
    ("expand", ["N", "N"], "expand"), ("expand_as", ["T"], "expand"), ("detach", [], "detach"),
    ("split", ["N"], "multi_view"), ("chunk", ["N"], "multi_view"), ("unbind", [], "multi_view"),
    ("reshape", ["S"], "may_alias"), ("flatten", [], "may_alias"), ("contiguous", [], "may_alias"),
    ("to", ["O"], "may_alias"), ("float", [], "may_alias"), ("requires_grad_", [], "same"),
    ("add_", ["T"], "same"), ("clone", [], None), ("sum", [], None),
])
def test_alias_kinds(name, kinds, alias):
    assert meth(name, kinds).alias == alias


def test_function_view_aliases():
    assert fn("torch.split", ["T", "N"]).alias == "multi_view"
    assert fn("torch.chunk", ["T", "N"]).alias == "multi_view"
    assert fn("torch.unbind", ["T"]).alias == "multi_view"
    assert fn("torch.transpose", ["T", "N", "N"]).alias == "view"
    assert fn("torch.detach", ["T"]).alias == "detach"
    assert fn("torch.reshape", ["T", "S"]).alias == "may_alias"
    assert fn("torch.flatten", ["T"]).alias == "may_alias"
    assert lookup_module("torch.nn.Dropout", training=False).alias == "may_alias"


# ---------------------------------------------------------------------------------------------
# outputs, differentiability, factories, overloads


def test_max_overloads_differ():
    full = fn("torch.max", ["T"])
    assert full.n_outputs == 1 and full.saves("input", [True]) and full.saves("out", [True])
    dim = fn("torch.max", ["T", "N"])
    assert dim.n_outputs == 2 and dim.nondiff_outputs == (1,)
    assert dim.saves("input", [True]) is False and dim.saves("out1", [True]) is True
    assert fn("torch.max", ["T"], ["dim"]).n_outputs == 2
    assert fn("torch.max", ["T"], ["dim", "keepdim"]).n_outputs == 2
    binary = fn("torch.max", ["T", "T"])
    assert binary.slots == ("input", "other")
    assert meth("max", ["N"]).n_outputs == 2
    # unknown second argument: merged, slots union
    merged = fn("torch.max", ["T", "O"])
    assert set(merged.slots) == {"input", "other"}


def test_clamp_overloads():
    assert saved_slots(fn("torch.clamp", ["T", "N", "N"])) == {"input"}
    assert saved_slots(fn("torch.clamp", ["T", "T", "T"])) == {"input", "min", "max"}
    assert fn("torch.clamp", ["T"], ["max"]) is not None


def test_mul_unknown_operand_merges_conservatively():
    info = fn("torch.mul", ["T", "O"])
    assert info.slots == ("input", "other")
    assert info.saves("input", [True, True]) is None   # differs between mul(T,T) and mul(T,N)
    assert info.saves("input", [True, False]) is False
    assert info.saves("input", [False, False]) is False


def test_round_is_differentiable():
    # round/floor/sign have (zero) derivatives: their output requires grad
    assert fn("torch.round", ["T"]).differentiable is True


def test_literal_values_in_kinds():
    assert fn(F + "relu", ["T", "B=True"]).mutates == (0,)
    assert fn(F + "relu", ["T", "B=False"]).mutates == ()
    assert fn(F + "dropout", ["T", "N", "B=False"]).alias == "may_alias"


def test_non_differentiable_and_factory():
    for q, kinds in (("torch.argmax", ["T"]), ("torch.eq", ["T", "T"]), ("torch.isnan", ["T"]),
                     ("torch.randn_like", ["T"]), ("torch.zeros_like", ["T"])):
        assert fn(q, kinds).differentiable is False, q
    for q, kinds in (("torch.zeros", ["N", "N"]), ("torch.randn", ["N", "N"]), ("torch.tensor", ["O"]),
                     ("torch.arange", ["N"]), ("torch.randn_like", ["T"])):
        assert fn(q, kinds).factory is True, q
    assert fn("torch.sigmoid", ["T"]).factory is False
    assert fn("torch.sort", ["T"]).nondiff_outputs == (1,)
    assert fn("torch.topk", ["T", "N"]).nondiff_outputs == (1,)


def test_list_argument_is_one_slot():
    assert fn("torch.cat", ["L"]).slots == ("tensors",)
    assert fn("torch.stack", ["L", "N"]).slots == ("tensors",)
    e = fn("torch.einsum", ["O", "T", "T"])
    assert e.slots == ("operands",)
    assert e.saves("operands", [True]) is True
    assert fn("torch.einsum", ["O", "L"]).slots == ("operands",)


def test_slot_sources():
    lin = fn(F + "linear", ["T", "T"], ["bias"])
    assert lin.slot_sources(2, ["bias"]) == (0, 1, "bias")
    m = meth("add_", ["T"])
    assert m.slot_sources(1) == ("self", 0)


def test_aten_fallback():
    info = lookup_function("aten.mul.Tensor", ["T", "T"])
    assert info is not None and not info.measured
    assert info.saves("self", [True, False]) is False
    assert info.saves("self", [False, True]) is True
    relu_ = lookup_function("aten.relu_", ["T"])
    assert relu_.alias == "same" and relu_.mutates == (0,) and relu_.saves("self", [True]) is True
    assert lookup_function("aten.view", ["T", "S"]).alias == "view"
    assert lookup_function("aten.split.Tensor", ["T", "N"]).alias == "multi_view"
    assert lookup_function("aten.add_.Tensor", ["T", "T"]).mutates == (0,)
    assert lookup_function("aten.argmax", ["T"]).differentiable is False
    mm = lookup_function("aten.mm", ["T", "T"])
    assert mm.saves("self", [True, False]) is False and mm.saves("mat2", [True, False]) is True
    # composite implicit ops: saving unknown
    assert lookup_function("aten.conv2d", ["T", "T"]).saves("input", [True, True]) is None


# ---------------------------------------------------------------------------------------------
# modules


def test_linear_module():
    info = lookup_module("torch.nn.Linear")
    assert info.slots == ("input", "weight", "bias") and info.n_inputs == 1
    assert info.saves("input", [True]) is True          # weight requires grad by default
    assert info.saves("input", [True, False]) is False  # frozen weight
    assert info.saves("weight", [True]) is True
    assert info.saves("weight", [False]) is False       # only if the input requires grad
    assert info.saves("bias", [True]) is False
    assert info.saves("weight", [None]) is None


@pytest.mark.parametrize("training", [True, False])
def test_batchnorm2d_module(training):
    info = lookup_module("torch.nn.BatchNorm2d", training=training)
    for s in ("input", "weight", "running_mean", "running_var"):
        assert info.saves(s, [True]) is True, s
    assert info.saves("bias", [True]) is False


def test_module_misc():
    emb = lookup_module("torch.nn.Embedding")
    assert emb.saves("weight", [False]) is False and emb.saves("input", [False]) is True
    for name in ("torch.nn.Dropout", "torch.nn.Dropout2d", "torch.nn.AlphaDropout"):
        assert saved_slots(lookup_module(name), [True]) == set(), name
    drop_ip = lookup_module("torch.nn.Dropout", inplace=True)
    assert drop_ip.mutates == (0,)
    assert saved_slots(lookup_module("torch.nn.Conv2d")) == {"input", "weight"}
    assert saved_slots(lookup_module("torch.nn.LayerNorm")) == {"input", "weight", "bias"}
    lstm = lookup_module("torch.nn.LSTM")
    assert lstm.n_outputs == 3
    assert {"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "out"} <= saved_slots(lstm)
    gru = lookup_module("torch.nn.GRU")
    assert {"weight_ih_l0", "weight_hh_l0"} <= saved_slots(gru)
    assert lookup_module("torch.nn.modules.linear.Linear").qualname == "torch.nn.Linear"


@pytest.mark.parametrize("name", ["Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
                                  "ConvTranspose2d", "ConvTranspose3d", "BatchNorm1d", "BatchNorm3d",
                                  "LayerNorm", "GroupNorm", "InstanceNorm2d", "Embedding", "EmbeddingBag",
                                  "LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell", "Dropout2d",
                                  "ReLU6", "LeakyReLU", "PReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish",
                                  "Sigmoid", "Tanh", "Hardtanh", "Hardswish", "Hardsigmoid", "Softplus",
                                  "Softmax", "LogSoftmax", "Softmin", "MaxPool1d", "MaxPool2d", "MaxPool3d",
                                  "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
                                  "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "Flatten", "Unflatten",
                                  "Identity", "Upsample", "PixelShuffle", "ZeroPad2d", "MSELoss", "L1Loss",
                                  "SmoothL1Loss", "HuberLoss", "CrossEntropyLoss", "NLLLoss", "BCELoss",
                                  "BCEWithLogitsLoss", "KLDivLoss", "CosineEmbeddingLoss",
                                  "MultiheadAttention"])
def test_module_covered(name):
    assert lookup_module("torch.nn." + name) is not None


# ---------------------------------------------------------------------------------------------
# regeneration with the installed torch


def _have(mod):
    return importlib.util.find_spec(mod) is not None


@pytest.mark.skipif(not _have("torch"), reason="torch not installed")
def test_regenerated_table_equals_shipped():
    """Rebuild the table with the installed torch (in a subprocess: this process stays torch-free)
    and require a byte-identical file. On failure: python -m gradwarden.opgen"""
    if not _have("yaml"):
        pytest.fail("torchgen needs PyYAML to regenerate the table: pip install pyyaml")
    out = subprocess.run([sys.executable, "-m", "gradwarden.opgen", "--check", "-v"], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr[-3000:]
