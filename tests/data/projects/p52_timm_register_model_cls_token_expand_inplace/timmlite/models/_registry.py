"""Model registry: entrypoint functions register themselves by their name."""

_model_entrypoints = {}


def register_model(fn):
    _model_entrypoints[fn.__name__] = fn
    return fn


def list_models():
    return sorted(_model_entrypoints)


def create_model(model_name, pretrained=False, **kwargs):
    if model_name not in _model_entrypoints:
        raise RuntimeError(f"Unknown model ({model_name})")
    create_fn = _model_entrypoints[model_name]
    return create_fn(pretrained=pretrained, **kwargs)
