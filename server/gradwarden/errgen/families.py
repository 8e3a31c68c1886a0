"""Every autograd text of torch, grouped into families: what each means for a user, the rule
that finds it before the code runs, or why it is out of this analyzer's reach.

A family is matched against the collected texts (errgen/collect.py) by ``match`` (a regular
expression, searched); the first family that matches a text owns it. ``codes`` name the
rules (their torch message and runtime kind live in rules/messages.py); ``reason`` says why
no rule can find it statically.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Tuple

# Why a family is out of reach (reused wording).
INTERNAL = ("an internal consistency check of PyTorch (an assert, a call on an undefined tensor, an API meant for "
            "PyTorch's own code): not reachable from user code through the public API")
FORWARD_AD = "forward-mode AD (`torch.autograd.forward_ad`, `jvp`): not modelled by the analyzer"
TRANSFORMS = "functorch / `torch.func` / `vmap` transforms: not modelled by the analyzer"
COMPILE = "`torch.compile`, compiled autograd, dynamo or CUDA graph capture: not modelled by the analyzer"
DISTRIBUTED = "distributed training / DTensor / DDP internals: not modelled by the analyzer"
SUBCLASS = "tensor subclasses, `__torch_dispatch__` and custom operator registration: not modelled by the analyzer"
VALUES = ("depends on dtypes, devices or sizes at run time (or on values computed by the program), which the "
          "analyzer does not track")
TYPES = "a wrong argument type to an autograd API: the job of a type checker, not of gradient-flow analysis"
HOOKS = "hooks (`register_hook`, saved-tensor hooks, post-accumulate hooks): not modelled by the analyzer yet"
MESSAGE_PART = ("a part of a longer message (a hint or a continuation line) printed with another family's error: "
                "see that family")
DEPRECATION = "a deprecation notice about the API itself, not a gradient hazard"
CHECKPOINT_RT = ("non-reentrant `checkpoint` re-runs the forward during backward and checks it behaves the same: "
                 "depends on run-time behaviour")
OPTIM = "optimizer construction and `state_dict` loading checks: structural, not gradient flow (no rule yet)"
SPECIAL_TENSORS = "sparse, nested, quantized, meta or complex tensors: not modelled by the analyzer"
NO_RULE = "statically detectable in principle; no rule yet"
SERIALIZATION = "serialization, DLPack and CUDA array interfaces of tensors: not gradient flow"


@dataclass(frozen=True)
class Family:
    key: str  # the anchor in docs/errors.md
    title: str  # what torch says, in short
    match: str  # regex searched in each collected text
    codes: Tuple[str, ...] = ()
    reason: str = ""
    note: str = ""  # what it means, when the title does not say


F = Family

FAMILIES: Tuple[Family, ...] = (
    # ------------------------------------------------------------------ found by rules
    F("leaf-inplace", "a leaf Variable that requires grad is being used in an in-place operation",
      r"leaf Variable that requires grad (is being|has been) used in an in-place operation", ("GW101",)),
    F("version-counter", "one of the variables needed for gradient computation has been modified by an inplace "
      "operation", r"variables needed for gradient computation has been modified by an inplace operation|"
      r"^Hint: (enable anomaly detection|the backtrace further above) to find the operation that failed|"
      r"^Hint: the backtrace further above", ("GW201", "GW202", "GW203", "GW501")),
    F("expanded-write", "more than one element of the written-to tensor refers to a single memory location",
      r"more than one element of the written-to tensor refers to a single memory location",
      ("GW301", "GW303", "GW304")),
    F("overlapping-write", "some elements of the input tensor and the written-to tensor refer to a single memory "
      "location", r"some elements of the input tensor and the written-to tensor refer to a single memory location",
      ("GW713", "GW302")),
    F("multi-view-inplace", "This view is the output of a function that returns multiple views ... modified inplace",
      r"output of a function that returns multiple views", ("GW306",)),
    F("custom-function-view", "This view was created inside a custom Function (or because an input was returned "
      "as-is) ... modified inplace", r"This view was created inside a custom Function", ("GW305",)),
    F("no-grad-view-inplace", "A view was created in no_grad mode and is being modified inplace with grad mode enabled",
      r"^A view was created in$|is a view of a view which was created in$|modified inplace with grad mode enabled|"
      r"Given that this use case is ambiguous and error-prone, it is forbidden|^its base or another view of its "
      r"base has been$|^modified inplace in normal mode\.$", ("GW711",),
      note="also: `Output 0 of ... is a view of a view which was created in no_grad mode`"),
    F("detach-view", "Can't detach views in-place. Use detach() instead", r"Can't detach views in-place", ("GW712",)),
    F("freed-graph", "Trying to backward through the graph a second time (or directly access saved tensors after "
      "they have already been freed)", r"backward through the graph a second time", ("GW402", "GW401", "GW403",
                                                                                     "GW504")),
    F("incorrect-gradient-count", "function backward returned an incorrect number of gradients (expected N, got M)",
      r"returned an incorrect number of gradients", ("GW307",)),
    F("gradient-for-non-tensor", "function backward returned a gradient different than None at position N, but the "
      "corresponding forward input was not a Variable",
      r"returned a gradient different than None at position|the corresponding forward input was not a Variable",
      ("GW309",)),
    F("legacy-function", "Legacy autograd function with non-static forward method is deprecated",
      r"Legacy autograd function with non-static forward method|should not be instantiated\. Methods on autograd "
      r"functions are all static|style autograd functions, see https", ("GW308",)),
    F("no-grad-backward", "element 0 of tensors does not require grad and does not have a grad_fn",
      r"of tensors does not require grad and does not have a grad_fn", ("GW701",)),
    F("non-scalar-backward", "grad can be implicitly created only for scalar outputs",
      r"grad can be implicitly created only for scalar outputs", ("GW702",)),
    F("grad-input-no-grad", "One of the differentiated Tensors does not require grad",
      r"One of the differentiated Tensors does not require grad|of the input tensors does not require grad",
      ("GW703",)),
    F("grad-input-unused", "The differentiated Tensor at index N appears to not have been used in the graph. Set "
      "allow_unused=True if this is the desired behavior",
      r"appears to not have been used in the graph|^The differentiated Tensor at index$", ("GW703",)),
    F("requires-grad-non-leaf", "you can only change requires_grad flags of leaf variables",
      r"you can only change requires_grad flags of leaf variables|If you want to use a computed variable in a "
      r"subgraph that doesn't require differentiation", ("GW704",)),
    F("grad-of-non-leaf", "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed (warning)",
      r"The \.grad attribute of a Tensor that is not a leaf Tensor is being accessed", ("GW705",)),
    F("optimize-non-leaf", "can't optimize a non-leaf Tensor", r"can't optimize a non-leaf Tensor", ("GW706",)),
    F("checkpoint-no-grad", "None of the inputs have requires_grad=True. Gradients will be None (warning, reentrant "
      "checkpoint)", r"None of the inputs have requires_grad=True\. Gradients will be None", ("GW708",)),
    # ------------------------------------------------------------------ statically detectable, no rule yet
    F("inference-tensor-saved", "Inference tensors cannot be saved for backward",
      r"Inference tensors cannot be saved for backward", ("GW717",),
      note="a tensor made under `torch.inference_mode()` used in a computation that records a graph"),
    F("inference-tensor-inplace", "Inplace update to inference tensor outside InferenceMode is not allowed",
      r"Inplace update to inference tensor outside InferenceMode|Setting requires_grad=True on inference tensor|"
      r"Cannot set version_counter for inference tensor|Inference tensors do not track version counter",
      reason=NO_RULE),
    F("float-only-grad", "only Tensors of floating point and complex dtype can require gradients",
      r"(?i)only Tensors of floating point and complex dtype can require gradients|data set to a tensor that "
      r"requires gradients must be floating point or complex dtype", reason=NO_RULE,
      note="`torch.tensor([1, 2], requires_grad=True)` (integers)"),
    F("retain-grad-no-grad", "can't retain_grad on Tensor that has requires_grad=False",
      r"can't retain_grad on Tensor that has requires_grad=False", reason=NO_RULE),
    F("hook-no-grad", "cannot register a hook on a tensor that doesn't require gradient",
      r"cannot register a hook on a (tensor|variable) that doesn't require gradient|post accumulate grad hooks "
      r"cannot be registered on non-leaf tensors|It is not possible to get the gradient edge for a Tensor that does "
      r"not require gradients", reason=NO_RULE),
    F("numpy-requires-grad", "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead",
      r"Can't call (numpy|apply_|map_|map2_)\(\) on (Tensor|Variable) that requires grad|Can't export tensors that "
      r"require gradient|Can't get __cuda_array_interface__ on Variable that requires grad", reason=NO_RULE),
    F("scalar-conversion", "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior "
      "(warning)", r"Converting a tensor with requires_grad=True to a scalar|^Consider using tensor\.detach\(\) "
      r"first\.$", reason=NO_RULE, note="`float(loss)` where `loss.item()` is meant; see GW701 for the re-wrap "
      "that cuts the graph"),
    F("resize-requires-grad", "cannot resize variables that require grad",
      r"cannot resize variables that require grad", reason=NO_RULE),
    F("out-requires-grad", "functions with out=... arguments don't support automatic differentiation, but one of the "
      "arguments requires grad", r"functions with out=\.\.\. arguments don't support automatic differentiation",
      reason=NO_RULE),
    F("not-differentiable", "the derivative for an op or argument is not implemented (X is not differentiable with "
      "respect to argument Y)", r"is not differentiable with respect to argument|This input cannot have "
      r"requires_grad True|which does not have a derivative implemented is forbidden|an autograd kernel was not "
      r"registered to the Autograd key|but we are trying to backprop through it|does not support automatic "
      r"differentiation for outputs with complex dtype|^Please file an issue to PyTorch at https://github\.com/"
      r"pytorch/pytorch/issues/new\?template=feature-request", reason=VALUES,
      note="which ops have no derivative is in the op table; the call site is not checked yet"),
    F("mark-dirty", "Some elements marked as dirty during the forward method were not returned as output / "
      "ctx.mark_dirty() received a tensor that was not an input",
      r"marked as dirty during the forward method were not returned|mark_dirty\(\) received a tensor that was not "
      r"an input|Only input Tensors should be given to ctx\.mark_dirty|mark_dirty can only accept variables|"
      r"mark_non_differentiable only accepts variable arguments|If your Function modifies inplace an input that is "
      r"a view of another Tensor|Functions which modify views in-place must return a single Variable",
      reason=NO_RULE),
    F("saved-input-setup-context", "An input that has been returned as-is as output is being saved for backward "
      "(setup_context)", r"returned as-is as output is being saved for backward", reason=NO_RULE),
    F("function-contract", "custom autograd.Function contract (forward/backward/setup_context/vjp not implemented, "
      "save_for_forward arguments, non-differentiable outputs)",
      r"You must implement (either the backward or vjp|the forward function)|Implementing both 'backward' and 'vjp'|"
      r"setup_context is not implemented|save_for_forward expects all arguments to be tensors|the corresponding "
      r"forward output is not a differentiable Tensor|saved_tensors can only be accessed once when "
      r"clear_saved_tensors_on_access|'saved_variables' is deprecated|is invalid for this instance of "
      r"_C\._FunctionBase|^expected Variable or None \(got$", reason=NO_RULE),
    F("retain-graph-cycle", "Using backward() with create_graph=True will create a reference cycle between the "
      "parameter and its gradient (warning)", r"create_graph=True will create a reference cycle", reason=NO_RULE),
    F("empty-grad-inputs", "grad requires non-empty inputs / No tensors provided for gradient computation",
      r"grad requires non-empty inputs|No tensors provided for gradient computation", reason=NO_RULE),
    F("only-inputs", "only_inputs argument is deprecated and is ignored now", r"only_inputs argument is deprecated",
      reason=DEPRECATION),
    F("saved-detached-inplace", "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()",
      r"saved tensor that has been detached in-place", reason=NO_RULE),
    F("own-grad", "can't assign Variable as its own grad", r"can't assign Variable as its own grad", reason=NO_RULE),
    F("deepcopy-non-leaf", "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol",
      r"Only Tensors created explicitly by the user \(graph leaves\) support the deepcopy|__setstate__ can be only "
      r"called on leaf Tensors", reason=NO_RULE),
    F("checkpoint-use-reentrant", "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly "
      "(warning)", r"use_reentrant parameter should be passed explicitly|When use_reentrant=True, torch\.utils\."
      r"checkpoint is incompatible with \.grad\(\)|Passing `context_fn` or `debug` is only supported when "
      r"use_reentrant=False|none of output has requires_grad=True, this checkpoint\(\) is not necessary",
      reason=NO_RULE, note="GW708 reports the reentrant checkpoint whose parameters get no gradient"),
    F("optimizer-params", "optimizer parameter checks (empty parameter list, duplicates, sets, non-tensors, "
      "state_dict groups)", r"optimizer got an empty parameter list|duplicate parameters|some parameters appear in "
      r"more than one parameter group|optimizer can only optimize Tensors|ordered collections|param_group must be a "
      r"dict|didn't specify a value of required optimization parameter|params argument given to the optimizer|"
      r"loaded state dict|all optimizer param|capturable|must return None or a tuple of \(new_args, new_kwargs\)|"
      r"Expected (param_groups|per_device_and_dtype_grads) to be set|`fused=True` requires", reason=OPTIM),
    # ------------------------------------------------------------------ out of reach
    F("grad-assignment", "attempting to assign a gradient of the wrong size / dtype / device (`t.grad = ...`)",
      r"assign a gradient|Please ensure that the gradient and the tensor are|grad_dtype|assigned grad expected to "
      r"be a Tensor or None|to a tensor (located on device|with device type)|because there is already a gradient "
      r"with dtype", reason=VALUES),
    F("gradient-shape", "gradient / grad_output of the wrong shape or dtype (backward with gradient=, custom "
      "backward outputs)", r"Mismatch in (shape|dtype)|For complex Tensors, both grad_output and output are "
      r"required|to have the same dtype\. Mismatch in dtype|grad can be computed only for real scalar outputs|"
      r"invalid number of gradients - expected|has changed the (size|type) of value|but expected shape compatible "
      r"with|could not compute gradients for some functions|gradients can be either Tensors or None|"
      r"of gradients tuple is|is_grads_batched|Batched grads are not supported|grad and param do not obey the "
      r"gradient layout contract|Expected isFloatingType\(grad\.scalar_type\(\)\)", reason=VALUES),
    F("api-types", "wrong argument types to torch.autograd.backward / grad / GradientEdge",
      r"GradientEdge|inputs to run_backward must be a tuple|argument is expected to be a tuple|Expected tensors to "
      r"be a tuple|Expected output to be a torch\.Tensor|all inputs have to be Tensors|of tensors tuple is neither|"
      r"Auto nesting doesn't know how to process|Expects mode to be one of|keyword arguments are not supported|"
      r"Variable data has to be a tensor|_grad_fn (argument|has to be|can be only)|Deletion of|Deleting tensor "
      r"data is not allowed|Expected a proper Tensor but got None|materialize_grads|Tensor\.__contains__|"
      r"Variable can't be volatile|volatile was removed|torch\.autograd\.variable\(\.\.\.\) is deprecated|"
      r"^Expected (out_device|out_size|gradient function|nb_calls) to be set|`inputs` argument to `(backward|grad)\(\)`",
      reason=TYPES),
    F("tensor-api", "other tensor Python API errors raised next to autograd (0-d iteration, unflatten sizes)",
      r"0-d tensor|unflatten: sizes must be non-empty", reason=TYPES),
    F("lazy-modules", "uninitialized parameters of lazy modules (`nn.Lazy*`) used before their first forward",
      r"uninitialized parameter", reason="lazy modules (`nn.LazyLinear` ...) before their first forward: not "
      "modelled by the analyzer"),
    F("hooks", "hook protocol errors (a hook returning the wrong thing, saved-tensor hook misuse)",
      r"register_hooks on a saved tensor|pack hook is modifying its input|unpack_hook expected to be a Tensor|"
      r"post accumulate grad hooks should return None|can't replace (a None|an empty) gradient|no hook at position|"
      r"expected this hook to be called inside a backward|allow_mutation_on_saved_tensors|_register_hook_dict|"
      r"Final callbacks can only be installed during backward pass", reason=HOOKS),
    F("forward-ad", "forward-mode AD errors (dual tensors, jvp, forward gradients)",
      r"forward AD|forward grad|forward gradient|Forward AD|forward mode|forward-mode|jvp|_fw_primal|_make_dual|"
      r"dual Tensor|forward differentiable view|tangent|Nested forward mode|forward AD level|Resetting a non-existent "
      r"level|forward view info|^that does not support it because it has not been implemented yet\.$",
      reason=FORWARD_AD),
    F("transforms", "functorch / vmap transforms", r"vmap|functorch|torch\.func|grad, vjp, jacrev|setup_context "
      r"staticmethod|generate_vmap_rule|being vmapped over|called inside$", reason=TRANSFORMS),
    F("compile", "torch.compile / compiled autograd / CUDA graphs / tracing",
      r"[Cc]ompiled [Aa]utograd|compiled_autograd|dynamo|eval_frame|CUDA graph|capture|stream|Stream|[Tt]rac(e|ing)|"
      r"torch\.compile|region_activation_memory_budget|GraphExecGroup|fullgraph|recursion limit|"
      r"selective activation checkpoint|_compiled_autograd_key|view_fn not supported|functionalization",
      reason=COMPILE),
    F("distributed", "distributed / DTensor / DDP", r"DTensor|DeviceMesh|Sharding|sharding|DistributedDataParallel|"
      r"dtensor|XLA|Caffe2|grandfathered", reason=DISTRIBUTED),
    F("subclass", "tensor subclasses / __torch_dispatch__ / custom ops",
      r"subclass|__torch_dispatch__|TensorBase|python object|DispatchKey|_custom_op_handlers|ADInplaceOrView|"
      r"differentiable view, but the tensor already had autograd metadata|View operation returned a tensor that is "
      r"the same as the input base tensor|Attempted to chain views|set_data\(tensor\)|sizes_strides_policy|"
      r"storage offset without stride|strides' or 'sizes'|python class for|__deepcopy__|deepcopy|"
      r"_test_autograd|Pure view custom Function", reason=SUBCLASS),
    F("special-tensors", "sparse / nested / quantized / meta tensors", r"[Ss]parse|[Nn]ested|qtensor|qscheme|"
      r"quantized|meta device|[Dd]lpack|nbytes|skip_data|Serializ|__cuda_array_interface__|dim order|memory format|"
      r"memory_format|Unknown device type|conjugate bit|layout other than|Can't export tensors", reason=SPECIAL_TENSORS),
    F("checkpoint-recompute", "torch.utils.checkpoint recomputation checks (a different number of tensors saved, "
      "different metadata, unpacked twice)", r"torch\.utils\.checkpoint:|checkpoint|Checkpoint|context_fn|"
      r"determinism_check|policy_fn_or_list|OpOverload|target_frame|capture_logs|encountered during backward but not "
      r"found in storage|Only tuple of tensors is supported|Tensor arguments, excluding CPU tensors|Unexpected "
      r"keyword arguments|Unexpected state", reason=CHECKPOINT_RT),
    F("anomaly-mode", "anomaly mode messages (the traceback of the forward call that caused the error)",
      r"Traceback of forward call|Previous calculation was induced by|Anomaly|anomaly|This mode should be enabled "
      r"only for debugging", reason=MESSAGE_PART),
    F("message-parts", "continuation lines of other messages (code samples, hints)",
      r"^\.\.\.|^>>>|^To fix, either|^\([abc]\) |^with torch\.|^output = model|^If you want to calculate higher order",
      reason=MESSAGE_PART),
    F("deprecations", "other deprecation notices", r"deprecated|This behavior is deprecated|non-inplace resize",
      reason=DEPRECATION),
    F("runtime-environment", "threads, fork and process-level errors of the autograd engine",
      r"fork-based multiprocessing|pthread_atfork|multithreading|GraphTask|thread_shutdown|"
      r"Unhandled exception caught|DelayWarningHandler|autograd initialization failed|cls isn't a typeinfo|"
      r"Unable to instantiate PyTypeObject|You attempted to access the anomaly metadata", reason=INTERNAL),
    F("internal", "internal consistency checks (INTERNAL ASSERT FAILED, undefined tensors, PyTorch-only APIs)",
      r"INTERNAL ASSERT FAILED|to be true, but got false|on undefined tensor|[Ii]nternal error|should (only )?be "
      r"(only )?called|can only exist for (backward|forward) views|Shared view info|Can't get base of non|"
      r"topological_nr|grad_accumulator|leaf variable has been moved into the graph interior|requires_grad should "
      r"be false if grad_fn is set|Something went unexpectedly wrong|Accessing the reverse view|Invalid level|"
      r"Reverse view_func|Module containing hooks|boxed_grads_call|clear_saved_tensors_on_access|compiled_args|"
      r"attr_version|creation_meta|promote_types|unable to register|is not currently supported for|Unknown layout|"
      r"^File a bug|register extra index|Tracing a list|_rev_view_func|tensor_meta", reason=INTERNAL),
)


def families_for(code: str) -> List[Family]:
    """The families a rule finds (for `gradwarden rule` and the rule docs)."""
    return [f for f in FAMILIES if code in f.codes]
