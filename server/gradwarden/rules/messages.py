"""PyTorch's own autograd error and warning texts, and the rule that predicts each one.

One table, three readers: the runtime bridge (a message seen while running a script ->
the code of the static diagnostic it confirms), the catalogue ``docs/errors.md`` (generated
by ``python -m gradwarden.errgen``), and the tests that label programs by running them.
``pattern`` is a regular expression searched in the first line of the exception message
(or the warning text); ``codes`` lists the rules that find the hazard statically, the most
specific first.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple


@dataclass(frozen=True)
class TorchMessage:
    pattern: str
    codes: Tuple[str, ...]
    kind: str  # the runtime bridge's finding kind
    exc: str = "RuntimeError"  # RuntimeError | ValueError | AttributeError | TypeError | UserWarning
    bridge: bool = True  # the runtime bridge (gradwarden debug) maps this message (runtime/findings.py)

    def matches(self, text: str) -> bool:
        return re.search(self.pattern, text) is not None


# Order matters where one text contains another (the view-of-a-leaf message first).
TORCH_MESSAGES: Tuple[TorchMessage, ...] = (
    TorchMessage(r"a view of a leaf Variable that requires grad is being used in an in-place operation",
                 ("GW101",), "leaf-inplace"),
    TorchMessage(r"a leaf Variable that requires grad is being used in an in-place operation", ("GW101",),
                 "leaf-inplace"),
    TorchMessage(r"one of the variables needed for gradient computation has been modified by an inplace operation",
                 ("GW201", "GW202", "GW203", "GW501"), "version-counter"),
    TorchMessage(r"more than one element of the written-to tensor refers to a single memory location",
                 ("GW301", "GW303", "GW304"), "expanded-write"),
    TorchMessage(r"some elements of the input tensor and the written-to tensor refer to a single memory location",
                 ("GW713", "GW302"), "overlapping-write"),
    TorchMessage(r"This view is the output of a function that returns multiple views", ("GW306",),
                 "multi-view-inplace"),
    TorchMessage(r"This view was created inside a custom Function", ("GW305",), "custom-function-view"),
    TorchMessage(r"(A view was created in no_grad mode|is a view of a view which was created in no_grad mode) and is "
                 r"being modified inplace with grad mode enabled", ("GW711",), "no-grad-view-inplace"),
    TorchMessage(r"Can't detach views in-place", ("GW712",), "detach-view"),
    TorchMessage(r"Trying to backward through the graph a second time", ("GW402", "GW401", "GW403", "GW504"),
                 "freed-graph"),
    TorchMessage(r"returned an incorrect number of gradients", ("GW307",), "custom-function-contract"),
    TorchMessage(r"returned a gradient different than None at position \d+, but the corresponding forward input "
                 r"was not a Variable", ("GW309",), "custom-function-contract"),
    TorchMessage(r"Legacy autograd function with non-static forward method is deprecated", ("GW308",),
                 "custom-function-contract"),
    TorchMessage(r"element \d+ of tensors does not require grad and does not have a grad_fn", ("GW701",),
                 "no-grad-backward"),
    TorchMessage(r"'(float|int|list|numpy\.ndarray|numpy\.float\d*)' object has no attribute 'backward'",
                 ("GW701",), "no-grad-backward", "AttributeError"),
    TorchMessage(r"grad can be implicitly created only for scalar outputs", ("GW702",), "non-scalar-backward"),
    TorchMessage(r"One of the differentiated Tensors does not require grad", ("GW703",), "grad-input"),
    TorchMessage(r"(One of the differentiated Tensors|The differentiated Tensor at index \d+) appears to not have "
                 r"been used in the graph", ("GW703",), "grad-input"),
    TorchMessage(r"you can only change requires_grad flags of leaf variables", ("GW704",), "requires-grad-non-leaf"),
    TorchMessage(r"The \.grad attribute of a Tensor that is not a leaf Tensor is being accessed", ("GW705",),
                 "grad-of-non-leaf", "UserWarning"),
    TorchMessage(r"can't optimize a non-leaf Tensor", ("GW706",), "optimize-non-leaf", "ValueError"),
    TorchMessage(r"Inference tensors cannot be saved for backward", ("GW717",), "inference-saved"),
    TorchMessage(r"None of the inputs have requires_grad=True\. Gradients will be None", ("GW708",),
                 "checkpoint-without-grad", "UserWarning"),
)


def classify(text: str, exc: str = "") -> Optional[TorchMessage]:
    """The table entry whose pattern the message matches (and, when given, whose exception
    type agrees), or None."""
    first = text.strip().splitlines()[0] if text.strip() else text
    for m in TORCH_MESSAGES:
        if m.matches(first) and (not exc or m.exc == exc or exc.endswith("Warning") == m.exc.endswith("Warning")):
            return m
    return None
