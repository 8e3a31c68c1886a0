"""Two workers started with torch.multiprocessing.spawn, and one mp.Process with the spawn start
method; with --hazard the workers overwrite a tensor sigmoid saved (and catch the error)."""
import sys

import torch
import torch.multiprocessing as mp


def worker(rank, hazard, queue):
    torch.manual_seed(rank)
    x = torch.randn(5, requires_grad=True)
    y = torch.sigmoid(x)
    if hazard:
        y.mul_(2)
    try:
        y.sum().backward()
        queue.put((rank, "grad %.6f" % x.grad.sum().item()))
    except RuntimeError as exc:
        queue.put((rank, "error: " + str(exc).split(":")[0]))


def single(queue):
    worker(9, False, queue)


if __name__ == "__main__":
    hazard = "--hazard" in sys.argv
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    mp.spawn(worker, args=(hazard, queue), nprocs=2, join=True)
    p = ctx.Process(target=single, args=(queue,))
    p.start()
    p.join()
    results = sorted(queue.get() for _ in range(3))
    for rank, text in results:
        print(rank, text)
    print("exit codes", p.exitcode)
