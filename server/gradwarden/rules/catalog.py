"""The catalog: every rule of gradwarden, in documentation order.

Each rule is one small class in the module of its family (leaf, saved, views, graph,
optimizer, data, flow, flowviews): docstring, message, severity and VALID/INVALID examples together. The
interpreter emits events naming a rule's ``event``; the rule's ``message`` template words it.
INVALID snippets mark the flagged line with ``# <-``; tests/test_rule_examples.py checks them.
"""
from __future__ import annotations

from typing import Tuple, Type

from gradwarden.rules.base import Rule
from gradwarden.rules.parse import AnalysisStopped, ParseError
from gradwarden.rules.leaf import LeafInplace
from gradwarden.rules.saved import SavedTensorModified, SavedTensorModifiedInBackward, CtxStashModified, DoubleBackwardConstant
from gradwarden.rules.views import ExpandedWrite, OverlappingAssign, GradOutputInplace, ExpandedParameterData, CustomFunctionOutputInplace, MultiViewInplace, BackwardGradientCount, LegacyFunction, GradientForNonTensorInput, SaveForBackwardNonTensor
from gradwarden.rules.graph import BackwardFreesGraph, StaleGraphUse, GraphCarriedIntoLoop, StaleRetainedGraph, RunningLossKeepsGraph
from gradwarden.rules.optimizer import StepBeforeBackward, FusedStepBeforeBackward, PollutedGradients, MissingDetachFreesGraph, TargetNotDetached, PolicyWeightNotDetached, PeerTargetNotDetached
from gradwarden.rules.data import AnchorAliasesParameter, DataWriteToSaved, HiddenWrite, UnregisteredTensor
from gradwarden.rules.flow import (
    BackwardWithoutGrad, NonScalarBackward, GradInputNotInGraph, RequiresGradOnNonLeaf, GradOfNonLeaf, OptimizeNonLeaf,
    OptimizerWithoutGrad, CheckpointWithoutGrad, BackwardIgnoresGradOutput, GradientsNeverZeroed, GradientsPartlyZeroed,
    InputGradAccumulates,
    ModuleRequiresGradAttribute, OptimizedPlainTensor, InferenceTensorSaved, ZeroGradientOp,
)
from gradwarden.rules.flowterms import (
    UntrainedParameter, NonfiniteBranchGradient, HookOverwritesActivation, DeadLossTerm, GradientOrder,
    EvalModeTraining,
)
from gradwarden.rules.stepping import (
    ClipExhaustedParameters, GradientClippedToZero, GradientHookReturnsZero, GradientsClearedBeforeStep,
    LearningRateAlwaysZero, LearningRateDecayedToZero,
)
from gradwarden.rules.recurrent import StateDetachedEveryStep
from gradwarden.rules.flowviews import NoGradViewInplace, DetachViewInplace, SelfOverlappingWrite, UnfoldWindowWrite

RULES: Tuple[Type[Rule], ...] = (
    ParseError,
    AnalysisStopped,
    LeafInplace,
    SavedTensorModified,
    SavedTensorModifiedInBackward,
    CtxStashModified,
    DoubleBackwardConstant,
    ExpandedWrite,
    OverlappingAssign,
    GradOutputInplace,
    ExpandedParameterData,
    CustomFunctionOutputInplace,
    MultiViewInplace,
    BackwardGradientCount,
    LegacyFunction,
    GradientForNonTensorInput,
    SaveForBackwardNonTensor,
    BackwardFreesGraph,
    StaleGraphUse,
    GraphCarriedIntoLoop,
    StaleRetainedGraph,
    RunningLossKeepsGraph,
    StepBeforeBackward,
    FusedStepBeforeBackward,
    PollutedGradients,
    MissingDetachFreesGraph,
    TargetNotDetached,
    PolicyWeightNotDetached,
    PeerTargetNotDetached,
    DataWriteToSaved,
    HiddenWrite,
    AnchorAliasesParameter,
    UnregisteredTensor,
    BackwardWithoutGrad,
    NonScalarBackward,
    GradInputNotInGraph,
    RequiresGradOnNonLeaf,
    GradOfNonLeaf,
    OptimizeNonLeaf,
    OptimizerWithoutGrad,
    OptimizedPlainTensor,
    CheckpointWithoutGrad,
    BackwardIgnoresGradOutput,
    GradientsNeverZeroed,
    GradientsPartlyZeroed,
    InputGradAccumulates,
    ModuleRequiresGradAttribute,
    InferenceTensorSaved,
    ZeroGradientOp,
    UntrainedParameter,
    EvalModeTraining,
    NonfiniteBranchGradient,
    HookOverwritesActivation,
    DeadLossTerm,
    GradientOrder,
    NoGradViewInplace,
    DetachViewInplace,
    SelfOverlappingWrite,
    UnfoldWindowWrite,
    GradientsClearedBeforeStep,
    ClipExhaustedParameters,
    StateDetachedEveryStep,
    LearningRateAlwaysZero,
    GradientHookReturnsZero,
    GradientClippedToZero,
    LearningRateDecayedToZero,
)
