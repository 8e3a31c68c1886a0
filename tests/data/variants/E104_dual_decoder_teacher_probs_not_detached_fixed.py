# source: https://github.com/pytorch/translate/pull/391 ("dual-decoder: teacher_probs.detach()": the teacher decoder's output probabilities are the targets of the student decoder's KD term; without detach the KD term also trains the teacher toward the student)
# family: E
# expect: ok
# verify: the teacher decoder's gradient is compared with its gradient from its own NLL term only
# line: 31
# fix: (fixed version of E104_dual_decoder_teacher_probs_not_detached.py) use the teacher's probabilities as constant targets: teacher_probs = teacher_lprobs.exp().detach()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM = 20, 16


class DualDecoderModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Embedding(VOCAB, DIM), nn.Linear(DIM, DIM), nn.Tanh())
        self.teacher_decoder = nn.Sequential(nn.Linear(DIM, 32), nn.ReLU(), nn.Linear(32, VOCAB))
        self.student_decoder = nn.Linear(DIM, VOCAB)

    def forward(self, src):
        enc = self.encoder(src)
        return F.log_softmax(self.teacher_decoder(enc), -1), F.log_softmax(self.student_decoder(enc), -1)


def dual_decoder_loss(teacher_lprobs, student_lprobs, target, kd_weight=0.5):
    teacher_nll = F.nll_loss(teacher_lprobs.reshape(-1, VOCAB), target.reshape(-1))
    student_nll = F.nll_loss(student_lprobs.reshape(-1, VOCAB), target.reshape(-1))
    teacher_probs = teacher_lprobs.exp().detach()
    kd = -(teacher_probs * student_lprobs).sum(-1).mean()
    return teacher_nll + (1 - kd_weight) * student_nll + kd_weight * kd, teacher_nll


if __name__ == "__main__":
    model = DualDecoderModel()
    src, tgt = torch.randint(0, VOCAB, (4, 7)), torch.randint(0, VOCAB, (4, 7))
    teacher_lprobs, student_lprobs = model(src)
    loss, teacher_nll = dual_decoder_loss(teacher_lprobs, student_lprobs, tgt)
    params = list(model.teacher_decoder.parameters())
    got = torch.autograd.grad(loss, params, retain_graph=True)
    ref = torch.autograd.grad(teacher_nll, params)
    ok = all(torch.allclose(a, b, atol=1e-6) for a, b in zip(got, ref))
    print("MATCH" if ok else "MISMATCH: the KD term also moves the teacher decoder")
