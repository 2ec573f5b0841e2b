"""8 threads, each running a small model under its own scope."""
import threading

import torch

from inferscope import scope

torch.set_num_threads(1)


def worker(i):
    model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 64))
    x = torch.randn(16, 256)
    for _ in range(3):
        with scope("worker"):
            with torch.no_grad():
                for _ in range(20):
                    model(x)


threads = [threading.Thread(target=worker, args=(i,), name="infer-%d" % i) for i in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("done")
