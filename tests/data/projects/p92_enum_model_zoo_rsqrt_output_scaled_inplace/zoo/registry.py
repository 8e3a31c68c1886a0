import enum

from .nets import ConvMixerLite, MLPNet


class Arch(enum.Enum):
    MLP = "mlp"
    MIXER = "mixer"

    @classmethod
    def from_str(cls, name):
        return cls(name.lower())


ZOO = {
    Arch.MLP: MLPNet,
    Arch.MIXER: ConvMixerLite,
}


def build_model(arch, **kwargs):
    return ZOO[arch](**kwargs)
