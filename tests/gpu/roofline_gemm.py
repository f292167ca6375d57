"""roofline_gemm.py - matrix products whose FLOPs are known, for the
tensor-core roofline (tests/gpu/roofline_and_cost.sh): N x N x N BF16
products on the tensor cores (NVTX range "bf16_gemm"), then FP32 products
with TF32 off on the CUDA cores ("fp32_gemm"). Each product is 2 N^3 FLOPs;
the sizes and counts are printed as one JSON line for the check."""
import json
import sys

import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
N_BF16, N_FP32 = 4096, 2048
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 8


def phase(name, dtype, n, reps):
    a = torch.randn(n, n, device="cuda", dtype=dtype)
    b = torch.randn(n, n, device="cuda", dtype=dtype)
    c = torch.empty(n, n, device="cuda", dtype=dtype)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(name)
    for _ in range(reps):
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()


phase("bf16_gemm", torch.bfloat16, N_BF16, REPS)
phase("fp32_gemm", torch.float32, N_FP32, REPS)
print(json.dumps({"bf16_n": N_BF16, "fp32_n": N_FP32, "reps": REPS}))
