"""A PyTorch training loop whose steps are NVTX ranges "step", for the
capture window checks (tests/gpu/windows.sh): with --profiler A B it calls
torch.cuda.profiler.start() before step A and stop() after step B, as a
user marks the steps to profile. With --seconds it runs steps until that
long has passed (the long run of window_long.sh); with --block N it prints
"block FIRST_STEP N MS_PER_STEP" after every N steps (each step ends in
loss.item(), a synchronisation, so a block's time is its steps' own)."""
import argparse
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=30)
p.add_argument("--profiler", type=int, nargs=2, metavar=("A", "B"))
p.add_argument("--seconds", type=float, help="run steps for this long instead of --steps")
p.add_argument("--block", type=int, help="print the mean step time of every N steps")
args = p.parse_args()

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 512)
).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(256, 512, device="cuda")
t_end = time.monotonic() + args.seconds if args.seconds else None
t_block = time.perf_counter()
i = 0
while (i < args.steps) if t_end is None else (time.monotonic() < t_end):
    i += 1
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
    if args.block and i % args.block == 0:
        now = time.perf_counter()
        print("block %d %d %.6f" % (i - args.block + 1, args.block, (now - t_block) * 1e3 / args.block))
        t_block = now
print("done", i)
