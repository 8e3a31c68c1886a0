from .convnet import ConvNet
