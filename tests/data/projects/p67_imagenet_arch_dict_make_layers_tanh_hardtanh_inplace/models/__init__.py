from .vgg import *
