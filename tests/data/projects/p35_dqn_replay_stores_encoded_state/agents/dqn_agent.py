import torch
import torch.nn.functional as F

from memory import ReplayMemory, Transition
from utils.torch_utils import soft_update

from .networks import Encoder, QHead


class DQNAgent:
    def __init__(self, config):
        self.gamma = config["gamma"]
        self.batch_size = config["batch_size"]
        self.encoder = Encoder(config["obs_dim"], config["hidden"])
        self.q = QHead(config["hidden"], config["n_actions"])
        self.target_q = QHead(config["hidden"], config["n_actions"])
        soft_update(self.target_q, self.q, 1.0)
        params = list(self.q.parameters())  # the encoder is pretrained, not fine-tuned
        self.optimizer = torch.optim.Adam(params, lr=config["lr"])
        self.memory = ReplayMemory(config["memory_size"])

    def act(self, obs):
        z = self.encoder(obs)
        action = self.q(z).argmax(-1)
        return z, action

    def remember(self, z, action, next_z, reward):
        self.memory.push(z, action, next_z, reward)

    def learn(self):
        batch = Transition(*zip(*self.memory.sample(self.batch_size)))
        z = torch.stack(batch.state)
        next_z = torch.stack(batch.next_state)
        action = torch.stack(batch.action)
        reward = torch.tensor(batch.reward)
        q = self.q(z).gather(1, action.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            target = reward + self.gamma * self.target_q(next_z).max(1).values
        loss = F.smooth_l1_loss(q, target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        soft_update(self.target_q, self.q, 0.05)
        return loss.item()
