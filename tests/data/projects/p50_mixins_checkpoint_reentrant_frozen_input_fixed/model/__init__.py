from .backbone import BackboneMixin
from .heads import ClassificationHeadMixin
from .classifier import Classifier
