from .dqn_agent import DQNAgent

AGENTS = {"dqn": DQNAgent}
