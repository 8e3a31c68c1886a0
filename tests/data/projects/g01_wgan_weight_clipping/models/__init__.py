from .mlp import MLPCritic, MLPGenerator

ARCHS = {"mlp": (MLPGenerator, MLPCritic)}


def get_models(arch, nz, dim):
    g_cls, d_cls = ARCHS[arch]
    return g_cls(nz, dim), d_cls(dim)
