from .cnn import SmallCNN

MODEL_ZOO = {"small_cnn": SmallCNN}


def get_model(name, **kwargs):
    return MODEL_ZOO[name](**kwargs)
