# source: domain-adversarial training written without a gradient-reversal layer (DANN re-implementations; forum threads "modified by an inplace operation: [torch.FloatTensor [1, 16]], which is output 0 of TBackward0"): the domain classifier is stepped on its own loss, then the feature extractor's loss subtracts the same domain loss and is backwarded through the classifier's updated weight
# family: E
# expect: ok
# line: 27  (backward: 30)
# fix: (fixed version of E113_domain_classifier_stepped_before_the_adversarial_term_is_backwarded.py) step the domain classifier after the feature extractor's backward (move domain_opt.step() below the second backward)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

features = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
label_head = nn.Linear(16, 3)
domain_head = nn.Linear(16, 1)
main_opt = torch.optim.SGD(list(features.parameters()) + list(label_head.parameters()), lr=0.05)
domain_opt = torch.optim.SGD(domain_head.parameters(), lr=0.05)

if __name__ == "__main__":
    xs, ys = torch.randn(8, 10), torch.randint(0, 3, (8,))
    xt = torch.randn(8, 10) + 1.0
    domains = torch.cat([torch.zeros(8, 1), torch.ones(8, 1)])
    for step in range(2):
        f = features(torch.cat([xs, xt]))
        domain_loss = F.binary_cross_entropy_with_logits(domain_head(f), domains)
        domain_opt.zero_grad()
        domain_loss.backward(retain_graph=True)

        task_loss = F.cross_entropy(label_head(f[:8]), ys)
        main_opt.zero_grad()
        (task_loss - 0.1 * domain_loss).backward()
        main_opt.step(); domain_opt.step()
    print("task loss %.4f" % task_loss.item())
