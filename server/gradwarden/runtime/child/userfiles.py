"""Which files are the user's, and the user's frame and line of a call."""
import os
import sys

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # gradwarden/runtime: the bridge's own files


class UserFiles:
    """Which files are the user's: everything but the standard library, installed packages,
    torch and this file (the target file itself is always the user's)."""

    def __init__(self, include=()):
        import sysconfig

        prefixes = set()
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            try:
                path = sysconfig.get_paths().get(key)
            except Exception:  # noqa: BLE001
                path = None
            if path:
                prefixes.add(os.path.realpath(path))
        for p in (getattr(sys, "base_prefix", ""), getattr(sys, "prefix", "")):
            if p:
                prefixes.add(os.path.realpath(os.path.join(p, "lib")))
                prefixes.add(os.path.realpath(os.path.join(p, "lib64")))
        prefixes.add(_HERE)
        self.prefixes = tuple(sorted(p.rstrip(os.sep) + os.sep for p in prefixes if p))
        self.include = set(os.path.realpath(p) for p in include if p)
        self.cache = {}

    def add_excluded(self, folder):
        folder = os.path.realpath(folder).rstrip(os.sep) + os.sep
        if folder not in self.prefixes:
            self.prefixes = self.prefixes + (folder,)
            self.cache.clear()

    def classify(self, filename):
        result = self._classify(filename)
        self.cache[filename] = result
        return result

    def _classify(self, filename):
        if not filename or filename[0] == "<":
            return False
        real = os.path.realpath(filename) if os.path.isabs(filename) else os.path.realpath(os.path.abspath(filename))
        if real in self.include:
            return True
        if os.sep + "site-packages" + os.sep in real or os.sep + "dist-packages" + os.sep in real:
            return False
        for p in self.prefixes:
            if real.startswith(p):
                return False
        return True

_USER = None  # UserFiles

_ucache = {}  # filename -> bool (the UserFiles cache, bound for speed)


def _is_user(filename):
    u = _ucache.get(filename)
    if u is None:
        u = _USER.classify(filename)
    return u


def _caller(depth):
    """``sys._getframe(depth)`` of the function calling this one, or None when the stack is not
    that deep (code called from a C++ thread, e.g. autograd's CUDA device threads)."""
    try:
        return sys._getframe(depth + 1)
    except ValueError:
        return None


def _user_frame(f):
    """The innermost frame at or above ``f`` that runs user code (None: none)."""
    cache = _ucache
    while f is not None:
        fn = f.f_code.co_filename
        u = cache.get(fn)
        if u is None:
            u = _USER.classify(fn)
        if u:
            return f
        f = f.f_back
    return None


def _library_call(inner, user):
    """The name of the library function the user's frame ``user`` called for ``inner`` (a frame
    at or inside it) to run: ``vector_to_parameters`` when the ``.data`` read is torch's, not the
    program's. None when ``inner`` is the user's frame, or the function is a module call or
    private (the program spelt the operation itself, or named nothing else)."""
    prev = None
    f = inner
    while f is not None and f is not user:
        prev = f
        f = f.f_back
    if f is None or prev is None:
        return None
    code = prev.f_code
    name = code.co_name
    if name.startswith("_") or name in ("forward", "<lambda>", "<module>") or \
            os.path.abspath(code.co_filename).startswith(_HERE + os.sep):
        return None
    return name


_GRAD_OFF = frozenset(("no_grad", "inference_mode", "set_grad_enabled"))


def _grad_off_decorator(user):
    """[file, line, function] of the ``@torch.no_grad()`` (``inference_mode``) decorator of a
    function of the user's that runs at or around frame ``user`` (the call that turned grad off:
    the line a fix removes), else None."""
    f = user
    for _ in range(64):
        if f is None:
            return None
        code = f.f_code
        if code.co_name == "decorate_context" and code.co_filename.endswith("_contextlib.py"):
            try:
                local = f.f_locals
                ctx = getattr(local.get("ctx_factory"), "__self__", None)
                func = local.get("func")
            except Exception:  # noqa: BLE001
                return None
            inner = getattr(func, "__code__", None)
            if type(ctx).__name__ in _GRAD_OFF and inner is not None and _is_user(inner.co_filename):
                return [_display_file(inner.co_filename), _decorator_line(inner, type(ctx).__name__), inner.co_name]
        f = f.f_back
    return None


def _lined_instructions(code):
    """``(line, instruction)`` for each bytecode instruction of ``code``, the line being the last
    one an instruction started (3.13+: every instruction has its ``line_number``; before, only the
    first of a line has ``starts_line``)."""
    import dis

    line = code.co_firstlineno
    for ins in dis.get_instructions(code):
        start = ins.line_number if hasattr(ins, "line_number") else ins.starts_line
        if start:
            line = start
        yield line, ins


def _decorator_line(code, name):
    """The line of the decorator naming ``name`` above ``code``'s ``def`` (``co_firstlineno`` is
    the first decorator's line)."""
    import linecache

    first = code.co_firstlineno
    for row in range(first, first + 16):
        text = linecache.getline(code.co_filename, row).strip()
        if text.startswith("@") and name in text:
            return row
        if text.startswith(("def ", "async def ")):
            break
    return first


def _site(f):
    if f is None:
        return None
    return [_display_file(f.f_code.co_filename), f.f_lineno, f.f_code.co_name]

_abs_cache = {}


def _display_file(filename):
    out = _abs_cache.get(filename)
    if out is None:
        out = os.path.abspath(filename) if filename and filename[0] != "<" else filename
        _abs_cache[filename] = out
    return out
