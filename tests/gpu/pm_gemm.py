"""pm_gemm.py - matrix products in PyTorch whose tensor-pipe use is known,
for checking sampled GPU metrics (tests/gpu/pm_sampling.sh): BF16 products
run on the tensor cores, FP32 products with TF32 off run as SIMT FFMA.
Each phase is an NVTX range ("bf16_gemm", "fp32_gemm") of about 0.3 s."""
import time

import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def phase(name, dtype, n, reps):
    a = torch.randn(n, n, device="cuda", dtype=dtype)
    b = torch.randn(n, n, device="cuda", dtype=dtype)
    torch.matmul(a, b)
    torch.cuda.synchronize()
    time.sleep(0.05)
    torch.cuda.nvtx.range_push(name)
    for _ in range(reps):
        torch.matmul(a, b)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    time.sleep(0.05)


phase("bf16_gemm", torch.bfloat16, 8192, 200)
phase("fp32_gemm", torch.float32, 4096, 60)
print("done")
