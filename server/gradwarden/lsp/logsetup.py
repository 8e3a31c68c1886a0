"""The server's logging set-up (stdlib only: ``gradwarden serve`` sets it up before pygls is
imported, see ``front.py``)."""
from __future__ import annotations

import logging
import sys
from typing import Optional


def configure_logging(level: str = "info", log_file: Optional[str] = None, protocol: bool = False) -> None:
    handler: logging.Handler
    if log_file:
        handler = logging.FileHandler(log_file, encoding="utf-8")
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("gradwarden").setLevel(getattr(logging, level.upper(), logging.INFO))
    # pygls logs every message body at INFO; keep it quiet unless asked (--log-protocol).
    logging.getLogger("pygls").setLevel(logging.DEBUG if protocol else logging.WARNING)
