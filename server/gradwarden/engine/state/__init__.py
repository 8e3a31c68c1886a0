"""The abstract state every other room reads and writes: values (``ConstV``, ``TensorV``,
``SeqV``, ``ObjV`` ...), tensor facts (``TInfo``), graph nodes and what they saved, writes,
backwards, and the per-path ``State`` with its fork and join (``model``); ``Halt``, the end of a
path where PyTorch would raise (``halt``).

Plain data and the operations that keep it consistent: no analysis, no torch knowledge.

May import: ``engine.diagnostic`` and itself.
"""
