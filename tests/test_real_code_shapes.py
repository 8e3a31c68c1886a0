"""Shapes of real library code that once crashed the engine or made it cry wolf.

Each test is the pattern found on a real tree (benchmarks/real_trees.py lists every error and
warning on timm, torchvision, ultralytics, torchrl, transformers ...), reduced to a few lines.
The programs that must stay silent are correct code; the hazards next to them prove the rule
still fires when the same shape really is a hazard.
"""
import subprocess
import sys
import textwrap

from gradwarden.engine.analyze import analyze_source
from gradwarden.engine.diagnostic import Severity


def loud(src, filename="t.py"):
    """(row, code) of every error and warning."""
    return [(d.row, d.code) for d in analyze_source(textwrap.dedent(src), filename) if d.severity <= Severity.WARNING]


def test_unreached_function_calling_an_imported_helper_does_not_crash(tmp_path):
    # The helper's statements sit on rows past the end of main.py: they must be looked up in
    # helpers.py's own lines (an IndexError used to abort the whole run with exit code 2).
    (tmp_path / "helpers.py").write_text(textwrap.dedent("""
        import torch


        def pad(a):
            return a


        def helper(x, flag=True):
            y = x * 2
            if flag:
                y = y + 1
            for i in range(3):
                if i > 1:
                    y = y * 3
            while y.sum() > 100:
                y = y / 2
            return y
    """))
    (tmp_path / "main.py").write_text(textwrap.dedent("""
        import torch
        from helpers import helper

        w = torch.randn(3, requires_grad=True)
        print(w.sum())


        def unreached(x):
            y = torch.sigmoid(x)
            loss = helper(y).sum()
            loss.backward()
            return loss
    """))
    proc = subprocess.run([sys.executable, "-m", "gradwarden", "check", "--output-format", "json", "main.py"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "internal error" not in proc.stderr


def test_a_loop_over_an_imported_generator_runs_this_files_body_in_this_files_lines(tmp_path):
    # timm efficientnet: `for n, m in named_modules(model):` (a generator of _manipulate.py, a
    # short file) runs this file's loop body, whose rows lie past the end of _manipulate.py
    (tmp_path / "walk.py").write_text("def named(model):\n    for m in model:\n        yield m\n")
    body = "\n" * 40 + textwrap.dedent("""
        import torch
        import torch.nn as nn
        from walk import named

        layers = [nn.Linear(2, 2), nn.ReLU()]
        w = torch.randn(3, requires_grad=True)
        print(w.sum())


        def init_weights(model, scale):
            for m in named(model):
                if scale > 1:
                    nn.init.zeros_(m.weight)
                else:
                    m.inplace = True
    """)
    (tmp_path / "main.py").write_text(body)
    proc = subprocess.run([sys.executable, "-m", "gradwarden", "check", "main.py"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 0 and "internal error" not in proc.stderr, proc.stderr


def test_rebinding_an_element_of_an_annotated_list_is_not_an_overlapping_copy():
    # ultralytics / transformers SAM3: `src` is a list of tensors; the element is rebound.
    assert loud("""
        import torch
        from typing import List

        def restore(src: List[torch.Tensor], pos: "list[torch.Tensor]", sizes):
            bs = src[0].shape[1]
            for i, (h, w) in enumerate(sizes):
                src[i] = src[i].reshape(h, w, bs, -1).permute(2, 3, 0, 1)
                pos[i] = pos[i].reshape(h, w, bs, -1).permute(2, 3, 0, 1)
            return src, pos
    """) == []
    # the same statement on a tensor the code made is a real overlapping copy
    assert loud("""
        import torch
        x = torch.randn(4, 4)
        x[0] = x[0].reshape(2, 2).t().reshape(4)
    """) == [(4, "GW302")]


def test_iterating_the_dict_an_opaque_submodule_returns_is_not_an_unbind():
    # transformers maskformer: `for k, loss in self.criterion(...).items(): loss *= w`
    assert loud("""
        import torch.nn as nn

        class Model(nn.Module):
            def __init__(self, criterion):
                super().__init__()
                self.criterion = criterion
                self.weight_dict = {"loss_ce": 1.0}

            def get_loss_dict(self, logits, labels):
                loss_dict = self.criterion(logits, labels)
                for key, weight in self.weight_dict.items():
                    for loss_key, loss in loss_dict.items():
                        if key in loss_key:
                            loss *= weight
                return loss_dict
    """) == []


def test_a_helper_every_caller_runs_under_no_grad_is_analysed_without_grad():
    src = """
        import torch
        import torch.nn as nn

        def copy_into(dst, src):
            dst.weight.copy_(src.weight)
            dst.bias.copy_(src.bias)

        def convert(src):
            new = nn.Linear(4, 4)
            with torch.no_grad():
                copy_into(new, src)
            return new

        @torch.no_grad()
        def convert_again(src):
            new = nn.Linear(4, 4)
            copy_into(new, src)
            return new
    """
    assert loud(src) == []
    # code that runs it with grad on: the write raises there
    assert loud(src + """
        old, fresh = nn.Linear(4, 4), nn.Linear(4, 4)
        copy_into(fresh, old)
    """) == [(6, "GW101")]


def test_weights_copied_into_a_module_a_never_called_function_builds_are_information():
    # accelerate's convert_model: whether it raises depends on callers we cannot see
    diags = analyze_source(textwrap.dedent("""
        import torch.nn as nn

        def convert_model(model):
            for name, module in model.named_children():
                new_module = nn.Linear(module.in_features, module.out_features)
                new_module.weight.copy_(module.weight)
                setattr(model, name, new_module)
    """), "t.py")
    assert [(d.code, d.severity) for d in diags] == [("GW101", Severity.INFORMATION)]
    # the same write in code that runs here, with grad on, is an error
    assert loud("""
        import torch.nn as nn
        old = nn.Linear(4, 4)
        new = nn.Linear(4, 4)
        new.weight.copy_(old.weight)
    """) == [(5, "GW101")]


# pytorch/examples distributed/rpc/rl: the episode's log-probabilities arrive through RPC calls
# the analysis cannot see, into containers that look empty where the loss is built.
RPC_POLICY = """
    import torch


    class Agent:
        def __init__(self, opt):
            self.saved_log_probs = {}
            self.optimizer = opt

        def finish_episode(self):
            probs = []
            for ob_id in self.saved_log_probs:
                probs.extend(self.saved_log_probs[ob_id])
            returns = torch.tensor([1.0, 2.0])
            policy_loss = []
            for log_prob, R in zip(probs, returns):
                policy_loss.append(-log_prob * R)
            policy_loss = torch.cat(policy_loss).sum()
            policy_loss.backward()
"""


def test_a_loss_from_containers_filled_elsewhere_is_not_a_loss_without_grad():
    assert loud(RPC_POLICY) == []


def test_an_empty_cat_means_the_list_was_filled_where_the_analysis_cannot_see():
    # torch.cat([]) raises, so a program that reaches backward filled the list
    assert loud("""
        import torch
        losses = []
        loss = torch.cat(losses).sum()
        loss.backward()
    """) == []
    # ... while a list the code visibly fills with values that never require grad still is one
    found = loud("""
        import torch
        losses = []
        for i in range(3):
            losses.append(torch.randn(2))
        loss = torch.cat(losses).sum()
        loss.backward()
    """)
    assert [code for _, code in found] == ["GW701"]
