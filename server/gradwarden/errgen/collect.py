"""Collect the autograd error and warning texts of the installed torch (no network).

Two sources, both inside the torch wheel:

- the C++ libraries (``libtorch_cpu.so``, ``libtorch_python.so``, ``libc10.so``): the
  printable strings of their ``.rodata`` section. The compiler lays out each translation
  unit's string literals together, next to that unit's ``__FILE__`` path (which every
  ``TORCH_CHECK`` records), so each string is attributed to the nearest preceding source
  path; the strings of autograd's own sources (``SOURCES``) are kept;
- the Python sources (``PY_SOURCES``): the string of every ``raise X("...")`` and
  ``warnings.warn("...")`` (f-string fields shown as ``{...}``).

A C++ message is often split around its formatted values (``"element "`` + i +
``" of tensors does not require grad ..."``): the fragments are kept as they are, which is
also what a pasted error message contains.
"""
from __future__ import annotations

import ast
import bisect
import os
import re
import struct
from typing import Dict, Iterator, List, Optional, Tuple

LIBS = ("libtorch_cpu.so", "libtorch_python.so", "libc10.so")

# autograd's own C++ sources (paths relative to the pytorch tree)
SOURCES = re.compile(
    r"^torch/csrc/autograd/(engine|autograd|variable|python_variable|VariableTypeUtils|VariableTypeManual|"
    r"custom_function|python_function|python_engine|saved_variable|input_buffer|function|python_hook|cpp_hook|"
    r"autograd_meta|autograd_not_implemented_fallback|python_legacy_variable|python_saved_variable_hooks|"
    r"functions/accumulate_grad|functions/tensor|functions/basic_ops|python_cpp_function|anomaly_mode|"
    r"python_anomaly_mode|forward_grad|input_metadata)\.(cpp|h)$"
    r"|^torch/csrc/autograd/generated/(VariableType_\d+|python_variable_methods)\.cpp$"
    r"|^(build/)?aten/src/ATen/core/TensorBody\.h$|^aten/src/ATen/MemoryOverlap\.cpp$"
    r"|^torch/csrc/api/src/optim/optimizer\.cpp$")

PY_SOURCES = ("autograd/__init__.py", "autograd/function.py", "autograd/graph.py", "autograd/grad_mode.py",
              "autograd/variable.py", "autograd/anomaly_mode.py", "optim/optimizer.py", "utils/checkpoint.py",
              "_tensor.py", "nn/parameter.py")

_PATH = re.compile(rb"/__w/pytorch/pytorch/([\x21-\x7e]+\.(?:cpp|h|cc|hpp))")
_TEXT = re.compile(rb"[\x20-\x7e]{12,}")
# not a message: code, schemas, identifiers, format directives
_CODE = re.compile(r"->|\(Tensor|Tensor\(|aten::|\bdef |::|%[sdu]|\{\}|SymInt|Tensor\?|=None|^[_A-Za-z0-9.]+$|"
                   r"^THP|^torch\.[\w.]+$|^[\w.]+\(\)$|TORCH_[A-Z_]+$|^\w+\(.*\)$")


def _rodata(path: str) -> bytes:
    """The ``.rodata`` section of a 64-bit little-endian ELF file."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2:
            return b""
        shoff, = struct.unpack_from("<Q", head, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", head, 0x3A)
        f.seek(shoff)
        table = f.read(shentsize * shnum)
        secs = [struct.unpack_from("<IIQQQQIIQQ", table, i * shentsize) for i in range(shnum)]
        names_sec = secs[shstrndx]
        f.seek(names_sec[4])
        names = f.read(names_sec[5])
        for s in secs:
            name = names[s[0]:names.index(b"\0", s[0])]
            if name == b".rodata":
                f.seek(s[4])
                return f.read(s[5])
    return b""


def torch_dir() -> Optional[str]:
    """The installed torch package directory, found without importing torch."""
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def is_message(text: str) -> bool:
    t = text.strip()
    return len(re.findall(r"[A-Za-z]{2,}", t)) >= 3 and not _CODE.search(t)


def from_libraries(root: str) -> Iterator[Tuple[str, str]]:
    """(source path, text) of every message-like string of autograd's C++ sources."""
    for lib in LIBS:
        path = os.path.join(root, "lib", lib)
        if not os.path.exists(path):
            continue
        data = _rodata(path)
        files = [(m.start(), m.group(1).decode()) for m in _PATH.finditer(data)]
        starts = [f[0] for f in files]
        for m in _TEXT.finditer(data):
            text = m.group().decode()
            if text.startswith("/__w/"):
                continue
            j = bisect.bisect(starts, m.start())
            if j == 0:
                continue
            src = files[j - 1][1]
            if SOURCES.search(src) and is_message(text):
                yield src, text.strip()


def _literal(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{...}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _literal(node.left), _literal(node.right)
        if a is not None or b is not None:
            return (a or "{...}") + (b or "{...}")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _literal(node.func.value)
    return None


def from_python(root: str) -> Iterator[Tuple[str, str]]:
    """(torch/<file>, text) of every raised or warned message in the Python sources."""
    for rel in PY_SOURCES:
        path = os.path.join(root, rel)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            call = None
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                call = node.exc
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "warn":
                call = node
            if call is None or not call.args:
                continue
            text = _literal(call.args[0])
            if text is None:
                continue
            text = " ".join(text.split())
            if len(re.findall(r"[A-Za-z]{2,}", text)) >= 3:
                yield "torch/" + rel, text


def collect(root: Optional[str] = None) -> Dict[str, List[str]]:
    """{text: sorted source paths} for the installed torch (or the package at ``root``)."""
    root = root or torch_dir()
    if root is None:
        raise RuntimeError("torch is not installed: nothing to collect from")
    out: Dict[str, set] = {}
    for src, text in list(from_libraries(root)) + list(from_python(root)):
        out.setdefault(text, set()).add(src)
    return {k: sorted(v) for k, v in sorted(out.items())}


def torch_version(root: Optional[str] = None) -> str:
    root = root or torch_dir()
    if root is None:
        return "?"
    path = os.path.join(root, "version.py")
    try:
        with open(path, encoding="utf-8") as f:
            m = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", f.read())
        return m.group(1) if m else "?"
    except OSError:
        return "?"
