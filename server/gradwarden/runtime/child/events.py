"""The events file of this process: JSON lines the parent reads (never the target's stdout)."""
import json
import os
import time


class Events:
    """Appends JSON lines to this process's own file in the output folder."""
    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.rank = _rank()
        self.fd = -1
        self.path = ""
        self._open()

    def _open(self):
        self.path = os.path.join(self.out_dir, "events.%s.%d.jsonl" % (self.rank, os.getpid()))
        self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def reopen_after_fork(self):
        try:
            os.close(self.fd)
        except OSError:
            pass
        self._open()

    def emit(self, ev, **fields):
        fields["ev"] = ev
        fields["pid"] = os.getpid()
        fields["rank"] = self.rank
        fields["t"] = round(time.time(), 3)
        try:
            data = (json.dumps(fields, default=str, separators=(",", ":")) + "\n").encode("utf-8", "replace")
            os.write(self.fd, data)
        except Exception:  # noqa: BLE001 - reporting must never break the user's program
            pass


def _rank():
    for name in ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"):
        value = os.environ.get(name)
        if value and value.isdigit():
            return value
    return "0"
