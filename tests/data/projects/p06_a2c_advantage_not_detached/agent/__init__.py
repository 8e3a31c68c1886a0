from .a2c import ActorCritic

AGENTS = {"a2c": ActorCritic}


def build_agent(name, **kwargs):
    return AGENTS[name](**kwargs)
