import random
from collections import deque

import torch


class ReplayBuffer:
    def __init__(self, capacity):
        self.memory = deque(maxlen=capacity)

    def push(self, state, action, reward, next_state, done):
        self.memory.append((state, action, reward, next_state, done))

    def sample(self, batch_size):
        batch = random.sample(self.memory, batch_size)
        states, actions, rewards, next_states, dones = zip(*batch)
        return (torch.stack(states), torch.tensor(actions), torch.tensor(rewards),
                torch.stack(next_states), torch.tensor(dones, dtype=torch.float32))

    def __len__(self):
        return len(self.memory)
