import torch.nn.functional as F


class Learner:
    """One-network DQN (no target network, as in many tutorials)."""

    def __init__(self, qnet, optimizer, gamma=0.9):
        self.qnet = qnet
        self.optimizer = optimizer
        self.gamma = gamma

    def td_loss(self, batch):
        states, actions, rewards, next_states, dones = batch
        q = self.qnet(states).gather(1, actions.unsqueeze(1)).squeeze(1)
        next_q = self.qnet(next_states).max(1)[0]
        target = rewards + self.gamma * next_q * (1 - dones)
        return F.smooth_l1_loss(q, target)

    def update(self, batch):
        loss = self.td_loss(batch)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()
