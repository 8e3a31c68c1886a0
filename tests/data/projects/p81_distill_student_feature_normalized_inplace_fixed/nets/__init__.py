from .mlp import MLPNet

model_dict = {
    "teacher": lambda: MLPNet(hidden=64),
    "student": lambda: MLPNet(hidden=16),
}
