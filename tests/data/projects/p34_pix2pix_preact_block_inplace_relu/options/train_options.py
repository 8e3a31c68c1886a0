from .base_options import BaseOptions


class TrainOptions(BaseOptions):
    def initialize(self, parser):
        parser = BaseOptions.initialize(self, parser)
        parser.add_argument("--n_iters", type=int, default=2)
        parser.add_argument("--lambda_L1", type=float, default=100.0)
        return parser
