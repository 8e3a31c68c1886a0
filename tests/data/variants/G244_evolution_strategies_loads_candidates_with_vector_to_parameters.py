# source: evolution strategies for policy search (OpenAI ES, Salimans et al. 2017; the parameters_to_vector / vector_to_parameters loop of ES implementations): every perturbed candidate is loaded into the policy with vector_to_parameters and only evaluated, and the update is computed from the returns without any backward, so .data-style loading cuts nothing that should carry a gradient
# family: G
# expect: ok
# line: 29
# fix: none needed: no gradient is wanted through the loaded vector (the ES update is computed from fitness values)
import torch
import torch.nn as nn
from torch.nn.utils import parameters_to_vector, vector_to_parameters

torch.manual_seed(0)


def episode_return(policy, states):
    with torch.no_grad():
        actions = policy(states)
        return -(actions - states[:, :2]).pow(2).sum().item()


if __name__ == "__main__":
    policy = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    theta = parameters_to_vector(policy.parameters()).detach()
    states = torch.randn(32, 4)
    sigma, lr, pop = 0.05, 0.02, 10
    start = episode_return(policy, states)
    for generation in range(5):
        noise = torch.randn(pop, theta.numel())
        returns = torch.empty(pop)
        for i in range(pop):
            vector_to_parameters(theta + sigma * noise[i], policy.parameters())
            returns[i] = episode_return(policy, states)
        advantage = (returns - returns.mean()) / (returns.std() + 1e-8)
        theta = theta + lr / (pop * sigma) * noise.t() @ advantage
    vector_to_parameters(theta, policy.parameters())
    print("return %.3f -> %.3f" % (start, episode_return(policy, states)))
