from .unet import GatedUNet
