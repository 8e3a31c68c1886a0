"""GW724: a training step that runs a model holding BatchNorm/Dropout (or a module reading
``self.training``) in eval mode, switched there by a helper or by a validation run inside the loop,
reported at the switch the fix changes, across files. The correct look-alikes (``.train()`` at the
top of every epoch, a frozen backbone deliberately in eval, a model without mode-dependent layers,
an evaluation-only script, BatchNorm without running statistics, a whole model put in eval on
purpose by the training function itself) stay silent."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from project_runs import loud, project


HELPER = """
    import torch


    def evaluate(model, x):
        model.eval()
        with torch.no_grad():
            return model(x).mean().item()
"""

LOOP = """
    import torch
    import torch.nn as nn
    from utils.metrics import evaluate


    def main():
        model = nn.Sequential(nn.Linear(6, 8), {layer}, nn.ReLU(), nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        {before}
        for epoch in range(3):
            {top}
            loss = model(torch.randn(8, 6)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            {after}


    if __name__ == "__main__":
        main()
"""


def _loop(tmp_path, layer="nn.BatchNorm1d(8)", before="pass", top="pass", after="pass"):
    return loud(project(tmp_path, {"utils/__init__.py": "", "utils/metrics.py": HELPER,
                                   "train.py": LOOP.format(layer=layer, before=before, top=top, after=after)}))


def test_validation_inside_the_loop_and_train_once_before_it(tmp_path):
    # torch: from the second epoch on BatchNorm normalises with running statistics in the steps
    assert _loop(tmp_path, before="model.train()", after="evaluate(model, torch.randn(4, 6))") == [
        ("train.py", 9, "GW724")]


def test_a_helper_leaves_the_model_in_eval_before_the_loop(tmp_path):
    found = _loop(tmp_path, layer="nn.Dropout(0.5)", before="evaluate(model, torch.randn(4, 6))")
    assert found == [("utils/metrics.py", 5, "GW724")]


@pytest.mark.parametrize("kw", [
    dict(before="model.train()", top="model.train()", after="evaluate(model, torch.randn(4, 6))"),  # train() per epoch
    dict(layer="nn.Tanh()", before="evaluate(model, torch.randn(4, 6))"),  # nothing depends on the mode
    dict(layer="nn.BatchNorm1d(8, track_running_stats=False)", before="evaluate(model, torch.randn(4, 6))"),
    dict(layer="nn.Dropout(0.0)", before="evaluate(model, torch.randn(4, 6))"),
    dict(before="model.eval()"),  # the training function itself keeps the whole model in eval, no train() anywhere
    dict(before="evaluate(model, torch.randn(4, 6)); model.train()"),
])
def test_correct_look_alikes_stay_silent(tmp_path, kw):
    assert _loop(tmp_path, **kw) == []


def test_a_frozen_backbone_deliberately_in_eval(tmp_path):
    files = {"utils/__init__.py": "", "utils/metrics.py": HELPER, "train.py": """
        import torch
        import torch.nn as nn
        from utils.metrics import evaluate

        backbone = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU())
        head = nn.Linear(8, 1)
        evaluate(backbone, torch.randn(4, 6))
        opt = torch.optim.SGD(head.parameters(), lr=0.1)
        for epoch in range(3):
            loss = head(backbone(torch.randn(8, 6))).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """}
    assert loud(project(tmp_path, files)) == []


def test_an_evaluation_only_script(tmp_path):
    files = {"utils/__init__.py": "", "utils/metrics.py": HELPER, "score.py": """
        import torch
        import torch.nn as nn
        from utils.metrics import evaluate

        model = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.Linear(8, 1))
        model.train()
        for _ in range(3):
            print(evaluate(model, torch.randn(4, 6)))
    """}
    assert loud(project(tmp_path, files)) == []


@pytest.mark.parametrize("name, row, code", [
    ("H49_ste_quantizer_left_in_eval_after_validation", 57, "GW718"),  # the round branch: zero gradients
    ("H50_freeze_bn_helper_switches_gumbel_gates_to_eval", 52, "GW719"),  # the gates' parameters: none
])
def test_one_finding_per_switch_when_gw718_or_gw719_names_it(name, row, code):
    path = Path(__file__).parent / "data" / "variants" / (name + ".py")
    proc = subprocess.run([sys.executable, "-m", "gradwarden", "check", "--no-cache", "--output-format", "json",
                           str(path)], capture_output=True, text=True, timeout=300)
    found = [(d["location"]["row"], d["code"]) for d in json.loads(proc.stdout) if d["severity"] == "warning"]
    assert found == [(row, code)]
