"""The smallest cross-file hazard, shared by the tests of the project analysis in every face (the
CLI, the language server's protocol tests, Emacs and VS Code): the script hands the views that
``unbind`` returns to a helper of its package, whose slice assignment writes into one of them
(GW306, raises). The finding belongs in the helper (``row[ids] = -1.0``, line 4), with the
script's call in its related places. ``script(pkg)`` imports the helper from package ``pkg``."""
import textwrap

HELPER = textwrap.dedent("""\
    def ban_tokens_(logits, banned):
        for row, ids in zip(logits, banned):
            if ids:
                row[ids] = -1.0
        return logits
""")
CALL = "ban_tokens_(logits.unbind(0), [[1], [2]])"
SCRIPT = textwrap.dedent("""\
    import torch

    from {pkg}.sampling import ban_tokens_

    logits = torch.randn(2, 5, requires_grad=True).sigmoid()
    ban_tokens_(logits.unbind(0), [[1], [2]])
    logits.sum().backward()
""")


def script(pkg: str) -> str:
    return SCRIPT.format(pkg=pkg)
