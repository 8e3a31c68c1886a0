"""How one path of the abstract run ends early.

An error that PyTorch raises on the spot (a leaf written in place, a write into an expanded
tensor) ends its path: what follows it cannot run. The semantics (torchsem, autograd, the flow
checks) raise ``Halt``; the interpreter catches it where a path ends. Kept apart from the
interpreter so that the semantics need not import the interpreter that mixes them in.
"""


class Halt(Exception):
    """The current path raises here (an error PyTorch throws immediately)."""
