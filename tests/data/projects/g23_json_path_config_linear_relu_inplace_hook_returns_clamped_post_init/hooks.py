def make_clip_hook(limit):
    def clip_activation(module, inputs, output):
        return output.clamp(-limit, limit)
    return clip_activation


def install_hooks(model, limit):
    for name, module in model.named_modules():
        if name == "act":
            module.register_forward_hook(make_clip_hook(limit))
