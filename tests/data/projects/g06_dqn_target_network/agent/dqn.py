import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class DQNAgent:
    def __init__(self, q_net, optimizer, gamma=0.99, target_update=2, max_grad_norm=10.0):
        self.q_net = q_net
        self.target_net = copy.deepcopy(q_net)
        self.optimizer = optimizer
        self.gamma, self.target_update, self.max_grad_norm = gamma, target_update, max_grad_norm
        self.updates = 0

    def compute_loss(self, batch):
        states, actions, rewards, next_states, dones = batch
        q = self.q_net(states).gather(1, actions[:, None]).squeeze(1)
        with torch.no_grad():
            next_actions = self.q_net(next_states).argmax(dim=1, keepdim=True)
            next_q = self.target_net(next_states).gather(1, next_actions).squeeze(1)
            target = rewards + self.gamma * (1 - dones) * next_q
        return F.smooth_l1_loss(q, target)

    def learn(self, batch):
        loss = self.compute_loss(batch)
        self.optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.q_net.parameters(), self.max_grad_norm)
        self.optimizer.step()
        self.updates += 1
        if self.updates % self.target_update == 0:
            self.target_net.load_state_dict(self.q_net.state_dict())
        return loss.item()
