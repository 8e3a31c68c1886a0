# source: neural / differentiable HMM implementations of the scaled forward algorithm that preallocate alpha = torch.zeros(T, K) and fill alpha[t] row by row; the matmul at step t saves the view alpha[t-1], and the next row write bumps the shared version counter
# family: C
# expect: ok
# line: 33  (backward: 45)
# fix: (fixed version of C66_hmm_forward_alpha_rows_written_in_place.py) keep the rows in a Python list (alphas.append(a / c)) instead of writing into a preallocated tensor
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class NeuralHMM(nn.Module):
    def __init__(self, n_states=4, n_symbols=6):
        super().__init__()
        self.start_logits = nn.Parameter(torch.zeros(n_states))
        self.trans_logits = nn.Parameter(0.1 * torch.randn(n_states, n_states))
        self.emit_logits = nn.Parameter(0.1 * torch.randn(n_states, n_symbols))

    def log_likelihood(self, obs):
        pi = F.softmax(self.start_logits, -1)
        A = F.softmax(self.trans_logits, -1)
        B = F.softmax(self.emit_logits, -1)
        T, K = obs.size(0), pi.size(0)
        alphas = []
        a = pi * B[:, obs[0]]
        c = a.sum()
        alphas.append(a / c)
        log_lik = c.log()
        for t in range(1, T):
            a = (alphas[t - 1] @ A) * B[:, obs[t]]
            c = a.sum()
            alphas.append(a / c)
            log_lik = log_lik + c.log()
        return log_lik


if __name__ == "__main__":
    hmm = NeuralHMM()
    opt = torch.optim.Adam(hmm.parameters(), lr=0.05)
    sequences = [torch.randint(0, 6, (9,)) for _ in range(3)]
    for epoch in range(2):
        nll = -sum(hmm.log_likelihood(s) for s in sequences)
        opt.zero_grad()
        nll.backward()
        opt.step()
    print("nll", nll.item())
