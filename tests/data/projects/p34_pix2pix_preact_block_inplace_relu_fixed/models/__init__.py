import importlib


def find_model_using_name(model_name):
    modellib = importlib.import_module("models." + model_name + "_model")
    target = model_name.replace("_", "") + "model"
    for name, cls in modellib.__dict__.items():
        if name.lower() == target:
            return cls
    raise ValueError(model_name)


def create_model(opt):
    model_class = find_model_using_name(opt.model)
    return model_class(opt)
