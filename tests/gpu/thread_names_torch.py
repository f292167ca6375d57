"""thread_names_torch.py - PyTorch's own threads, for
tests/gpu/thread_names.sh: a backward on the GPU (PyTorch's autograd
thread, pt_autograd_0) fed by a DataLoader with pin_memory (its pin-memory
thread, pt_data_pin). Prints "steps N" and "main_tid N"."""
import os

import torch


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = torch.utils.data.TensorDataset(torch.randn(1024, 256), torch.randint(0, 10, (1024,)))
    loader = torch.utils.data.DataLoader(data, batch_size=64, num_workers=1, pin_memory=True)
    steps = 0
    for _ in range(2):
        for x, y in loader:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            steps += 1
    torch.cuda.synchronize()
    assert torch.isfinite(loss).item()
    print("steps", steps)
    print("main_tid", os.getpid())


if __name__ == "__main__":
    main()
