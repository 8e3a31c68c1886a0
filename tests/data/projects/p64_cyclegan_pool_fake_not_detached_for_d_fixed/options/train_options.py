import argparse


class TrainOptions:
    def parse(self):
        parser = argparse.ArgumentParser()
        parser.add_argument("--pool_size", type=int, default=0, help="0 disables the image buffer")
        parser.add_argument("--lr", type=float, default=2e-4)
        parser.add_argument("--lambda_A", type=float, default=10.0)
        parser.add_argument("--n_epochs", type=int, default=2)
        return parser.parse_args()
