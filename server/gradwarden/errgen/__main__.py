"""``python -m gradwarden.errgen``: print docs/errors.md (from the stored texts).

``--collect`` re-collects the texts from the installed torch into
``gradwarden/errgen/data/torch_messages.json`` first; ``--check`` exits 1 when the stored
texts differ from what the installed torch holds.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from gradwarden.errgen.render import DATA, load, render


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gradwarden.errgen", description=__doc__)
    ap.add_argument("--collect", action="store_true", help="re-collect the texts from the installed torch")
    ap.add_argument("--check", action="store_true", help="compare the stored texts with the installed torch")
    args = ap.parse_args(argv)
    if args.collect or args.check:
        from gradwarden.errgen.collect import collect, torch_version

        data = {"torch": torch_version().split("+")[0], "texts": collect()}
        if args.check:
            same = data == load()
            print("stored texts match the installed torch" if same else "stored texts differ from the installed torch",
                  file=sys.stderr)
            return 0 if same else 1
        os.makedirs(os.path.dirname(DATA), exist_ok=True)
        with open(DATA, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, sort_keys=True)
            f.write("\n")
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
