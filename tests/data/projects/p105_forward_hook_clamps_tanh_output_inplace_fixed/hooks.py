def clip_activation(module, inputs, output):
    return output.clamp(-0.9, 0.9)


def install_hooks(model):
    handles = []
    for name, module in model.named_modules():
        if name == "act":
            handles.append(module.register_forward_hook(clip_activation))
    return handles
