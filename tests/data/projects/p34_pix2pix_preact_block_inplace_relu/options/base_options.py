import argparse


class BaseOptions:
    def initialize(self, parser):
        parser.add_argument("--ngf", type=int, default=8)
        parser.add_argument("--n_blocks", type=int, default=2)
        parser.add_argument("--model", type=str, default="pix2pix")
        parser.add_argument("--lr", type=float, default=0.0002)
        return parser

    def parse(self):
        parser = argparse.ArgumentParser()
        parser = self.initialize(parser)
        opt, _ = parser.parse_known_args()
        self.opt = opt
        return opt
