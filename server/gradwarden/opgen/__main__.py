"""``python -m gradwarden.opgen [--out PATH] [--check] [-v]``: (re)generate the op table."""
from __future__ import annotations

import argparse
import sys

from gradwarden.opgen import default_out_path, dumps, generate


def main(argv: "list[str] | None" = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gradwarden.opgen", description=__doc__)
    ap.add_argument("--out", default=default_out_path(), help="where to write the table (default: shipped file)")
    ap.add_argument("--check", action="store_true",
                    help="do not write; exit 1 if the file differs from what the installed torch generates")
    ap.add_argument("-v", "--verbose", action="count", default=0, help="also list the skipped call templates")
    ap.add_argument("-q", "--quiet", action="store_true", help="do not print coverage counts")
    ns = ap.parse_args(argv)
    text = dumps(generate(verbose=0 if ns.quiet else 1 + ns.verbose))
    if ns.check:
        try:
            with open(ns.out, encoding="utf-8") as f:
                old = f.read()
        except OSError:
            old = None
        if old != text:
            print(f"{ns.out} is out of date (run: python -m gradwarden.opgen)", file=sys.stderr)
            return 1
        print(f"{ns.out} is up to date", file=sys.stderr)
        return 0
    with open(ns.out, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    print(f"wrote {ns.out} ({len(text.encode())} bytes)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
