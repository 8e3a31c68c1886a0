# source: hand-written GNN message passing (GraphSAGE/GCN ports without torch_geometric) that allocates the aggregation buffer with requires_grad=True "so gradients flow" and sums messages into it with index_add_ (forum threads "a leaf Variable that requires grad is being used in an in-place operation"): the buffer is a leaf that requires grad and index_add_ raises
# family: A
# expect: ok
# line: 21, 22
# fix: (fixed version of A105_message_passing_aggregate_buffer_made_with_requires_grad_then_index_add.py) a plain buffer: agg = torch.zeros(n_nodes, msg.size(1), dtype=msg.dtype)  (index_add_ records the messages' graph)
import torch
import torch.nn as nn

torch.manual_seed(0)


class SumAggregationLayer(nn.Module):
    def __init__(self, d_in=5, d_out=6):
        super().__init__()
        self.message = nn.Linear(d_in, d_out)
        self.update = nn.Linear(d_in + d_out, d_out)

    def forward(self, x, edge_index):
        src, dst = edge_index
        msg = self.message(x[src])
        agg = torch.zeros(x.size(0), msg.size(1), dtype=msg.dtype)
        agg.index_add_(0, dst, msg)
        return self.update(torch.cat([x, agg], dim=-1))


if __name__ == "__main__":
    layer = SumAggregationLayer()
    x = torch.randn(4, 5)
    edge_index = torch.tensor([[0, 1, 2, 3, 0], [1, 2, 3, 0, 2]])
    layer(x, edge_index).pow(2).mean().backward()
    print("grad", layer.message.weight.grad.norm().item())
