"""``gradwarden serve``: the language server on stdio (``--tcp HOST:PORT`` for debugging)."""
from __future__ import annotations

import argparse
from typing import Callable, Optional, Tuple


def _host_port(text: str) -> Tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", text
    try:
        number = int(port)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}") from None
    if not 0 < number < 65536:
        raise argparse.ArgumentTypeError(f"port out of range: {number}")
    return host or "127.0.0.1", number


def register(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser(
        "serve",
        help="run the language server",
        description="Run gradwarden's language server (LSP over stdio, or TCP for debugging).",
    )
    p.set_defaults(handler=cmd_serve)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default)")
    mode.add_argument("--tcp", type=_host_port, metavar="HOST:PORT",
                      help="listen on a TCP socket instead (one client; for debugging)")
    p.add_argument("--log-file", metavar="FILE", help="write the server's log to FILE (default: stderr)")
    p.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="info",
                   help="how much to log (default: info; debug adds per-analysis timings)")
    p.add_argument("--log-protocol", action="store_true", help="also log every LSP message (pygls)")
    p.add_argument("--workers", type=int, metavar="N", default=None,
                   help="analysis worker processes (default 2; 0 analyses in threads); overrides the editor setting")


def cmd_serve(args: argparse.Namespace) -> int:
    # Only stdlib modules until the front answers initialize (front.py); pygls and the server
    # are imported meanwhile.
    from gradwarden.lsp.logsetup import configure_logging

    configure_logging(args.log_level, args.log_file, protocol=args.log_protocol)
    workers: Optional[int] = args.workers
    if workers is not None and not 0 <= workers <= 16:
        import sys

        print("error: --workers must be between 0 and 16", file=sys.stderr)
        return 2
    if args.tcp is not None:
        from gradwarden.lsp.server import serve

        return serve(tcp=args.tcp, workers=workers)
    from gradwarden.lsp.front import serve_stdio

    def load_server() -> Callable[..., int]:  # in the main thread, while the front answers
        from gradwarden.lsp.server import create_server, run_server

        ls = create_server()
        return lambda **stream: run_server(ls, workers=workers, **stream)

    return serve_stdio(load_server)
