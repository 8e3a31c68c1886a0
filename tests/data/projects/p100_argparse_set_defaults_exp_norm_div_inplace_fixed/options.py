import argparse

DEFAULTS = {
    "dim": 6,
    "lr": 0.05,
    "steps": 2,
    "norm_inplace": False,
}


def get_parser():
    parser = argparse.ArgumentParser(description="energy model")
    parser.add_argument("--dim", type=int)
    parser.add_argument("--lr", type=float)
    parser.add_argument("--steps", type=int)
    parser.add_argument("--norm-inplace", dest="norm_inplace", action="store_true")
    parser.set_defaults(**DEFAULTS)
    return parser


def parse(argv=None):
    return get_parser().parse_args([] if argv is None else argv)
