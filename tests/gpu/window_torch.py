"""A PyTorch training loop whose steps are NVTX ranges "step", for the
capture window checks (tests/gpu/windows.sh): with --profiler A B it calls
torch.cuda.profiler.start() before step A and stop() after step B, as a
user marks the steps to profile."""
import argparse

import torch

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=30)
p.add_argument("--profiler", type=int, nargs=2, metavar=("A", "B"))
args = p.parse_args()

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 512)
).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(256, 512, device="cuda")
for i in range(1, args.steps + 1):
    if args.profiler and i == args.profiler[0]:
        torch.cuda.profiler.start()
    torch.cuda.nvtx.range_push("step")
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    loss.item()
    torch.cuda.nvtx.range_pop()
    if args.profiler and i == args.profiler[1]:
        torch.cuda.profiler.stop()
print("done", args.steps)
