"""The device a run uses (CPU or CUDA), chosen before the target imports torch."""
import sys


def select_device(config, torch_mod, environ):
    """Resolve ``--device`` in the child. Returns (device_string, error_message_or_None).

    ``auto`` does not touch CUDA before the script runs (a script may still choose its GPUs
    through CUDA_VISIBLE_DEVICES): the device actually used is read at exit, see
    ``used_device``. ``cuda`` (or a default device) needs CUDA now. ``cpu`` hides the GPUs
    (the parent sets CUDA_VISIBLE_DEVICES to empty)."""
    want = config.get("device", "auto")
    if want == "cpu":
        return "cpu", None
    default = config.get("default_device", False)
    if want == "cuda" or default:
        if not torch_mod.cuda.is_available():
            if want == "cuda":
                return None, "--device cuda: CUDA is not available in %s (torch %s, CUDA build %s)" % (
                    sys.executable, torch_mod.__version__, getattr(torch_mod.version, "cuda", None))
            return "cpu", None
        index = torch_mod.cuda.current_device()
        if default:
            torch_mod.set_default_device("cuda:%d" % index)
        return "cuda:%d (%s)" % (index, torch_mod.cuda.get_device_name(index)), None
    return "auto", None


def used_device(torch_mod, chosen):
    """What the run used: CUDA when the script initialised it, else the CPU."""
    try:
        if chosen not in ("auto", None) and chosen != "cpu":
            return chosen
        cuda = getattr(torch_mod, "cuda", None)
        if cuda is not None and cuda.is_initialized():
            index = cuda.current_device()
            return "cuda:%d (%s)" % (index, cuda.get_device_name(index))
    except Exception:  # noqa: BLE001
        pass
    return "cpu"


def child_environment(config, environ):
    """Environment changes the child makes before importing torch."""
    changes = {}
    device = config.get("device", "auto")
    if device in ("auto", "cuda"):
        changes["CUDA_LAUNCH_BLOCKING"] = "1"  # errors point at the line that launched the kernel
    if device == "cpu":
        changes["CUDA_VISIBLE_DEVICES"] = ""
    return changes
