from .dcgan import Discriminator, Generator

MODELS = {"dcgan": (Generator, Discriminator)}


def build_models(name, nz, ngf, ndf):
    gen_cls, disc_cls = MODELS[name]
    return gen_cls(nz, ngf), disc_cls(ndf)
