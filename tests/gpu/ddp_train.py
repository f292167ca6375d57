"""ddp_train.py - a small PyTorch DistributedDataParallel training loop
(NCCL) for tests/gpu/ddp_job.sh, started by torchrun.

    torchrun --standalone --nproc_per_node=2 ddp_train.py [options]
      --steps N          training steps after 3 warm-up steps (default 30)
      --late-rank R      this rank does extra host work before each backward
      --late-ms MS       ... of this many milliseconds (default 0: none)
      --profile DIR      run under torch.profiler and write DIR/rank<R>.json:
                         the CUDA kernels it recorded inside the "train"
                         range (count, total GPU time in ns)
      --no-overlap       no gradient all-reduce under the backward pass: the
                         backward runs under DDP's no_sync() and each
                         gradient is all-reduced after it; no rank's
                         kernels then share its GPU with a waiting NCCL
                         kernel, whose spinning slows them by a share that
                         differs run to run (so two runs' GPU times compare)
      --one-gpu          every rank on cuda:0: NCCL is told the ranks are on
                         different hosts (NCCL_HOSTID) and talks over
                         sockets on the loopback, so two ranks can share
                         one GPU where only one is lent

Every step is an NVTX range "train_step"; all steps after the warm-up lie
inside one NVTX range "train". Prints "rank R step_ms X" per rank."""
import argparse
import json
import os
import re
import time

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=30)
ap.add_argument("--late-rank", type=int, default=-1)
ap.add_argument("--late-ms", type=float, default=0.0)
ap.add_argument("--profile")
ap.add_argument("--no-overlap", action="store_true")
ap.add_argument("--one-gpu", action="store_true")
args = ap.parse_args()

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
local = int(os.environ.get("LOCAL_RANK", rank))
if args.one_gpu:
    os.environ["NCCL_HOSTID"] = "perfkit-rank-%d" % rank
    os.environ.setdefault("NCCL_SOCKET_IFNAME", "lo")
    os.environ.setdefault("NCCL_IB_DISABLE", "1")
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

device = torch.device("cuda", 0 if args.one_gpu else local)
torch.cuda.set_device(device)
dist.init_process_group("nccl", device_id=device)
torch.manual_seed(0)
model = torch.nn.Sequential(*[m for _ in range(6) for m in (torch.nn.Linear(2048, 2048), torch.nn.GELU())],
                            torch.nn.Linear(2048, 16)).to(device)
ddp = DDP(model, device_ids=[device.index], bucket_cap_mb=25)
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
x = torch.randn(256, 2048, device=device)
y = torch.randint(0, 16, (256,), device=device)


def host_work(ms):
    end = time.perf_counter() + ms / 1e3
    while time.perf_counter() < end:
        pass


def step():
    torch.cuda.nvtx.range_push("train_step")
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(ddp(x), y)
    if rank == args.late_rank and args.late_ms > 0:
        host_work(args.late_ms)
    if args.no_overlap:
        with ddp.no_sync():
            loss.backward()
        for p in ddp.parameters():
            dist.all_reduce(p.grad)
            p.grad.div_(world)
    else:
        loss.backward()
    opt.step()
    torch.cuda.nvtx.range_pop()


for _ in range(3):
    step()
torch.cuda.synchronize()
dist.barrier()

prof = None
if args.profile:
    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                              torch.profiler.ProfilerActivity.CUDA])
    prof.__enter__()
torch.cuda.nvtx.range_push("train")
t0 = time.perf_counter()
for _ in range(args.steps):
    step()
torch.cuda.synchronize()
elapsed = time.perf_counter() - t0
torch.cuda.nvtx.range_pop()
if prof:
    prof.__exit__(None, None, None)
    # GPU-side events are kernels, copies, memsets and user annotations
    # projected onto the GPU ("nccl:all_reduce", "Optimizer.step#SGD.step"):
    # only the kernels compare with what CUPTI records as kernels.
    gpu = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
           and not e.name.startswith(("Memcpy", "Memset"))]
    annotations = {e.name for e in gpu if getattr(e, "is_user_annotation", False)
                   or re.fullmatch(r"[\w.]+#[\w.]+|[a-z]+:[\w]+", e.name)}
    kernels = [e for e in gpu if e.name not in annotations]
    os.makedirs(args.profile, exist_ok=True)
    with open(os.path.join(args.profile, "rank%d.json" % rank), "w") as f:
        json.dump({"rank": rank, "kernels": len(kernels),
                   "gpu_ns": int(sum(e.time_range.elapsed_us() for e in kernels) * 1000),
                   "nccl_kernels": sum(1 for e in kernels if "nccl" in e.name.lower()),
                   # an NCCL kernel lasts as long as it waits for the other
                   # ranks, which differs run to run; the rest does not
                   "compute_gpu_ns": int(sum(e.time_range.elapsed_us() for e in kernels
                                             if "nccl" not in e.name.lower()) * 1000),
                   "annotations_left_out": sorted(annotations)}, f)
print("rank %d step_ms %.3f" % (rank, elapsed / args.steps * 1e3), flush=True)
dist.destroy_process_group()
