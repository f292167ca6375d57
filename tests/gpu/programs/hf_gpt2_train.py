"""hf_gpt2_train.py - a Hugging Face GPT-2 training loop as a user writes
it: the model built from a GPT2Config (4 layers, n_embd 512, 8 heads,
sequence 256; no weights), random tokens as data (batch 8 x 256, already on
the GPU), bf16 autocast, AdamW with its defaults (the foreach
implementation, not fused), eager mode. Each step is an NVTX range
"train_step"; 5 warm-up steps, then 30 timed (STEPS in the environment
sets another count, for timings that need longer runs).

Prints steps, warmup, tokens_per_step, params_m, loss and step_ms (the
median over blocks of steps, each block ended by torch.cuda.synchronize)."""
import math
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402

from steptime import time_steps  # noqa: E402

WARMUP, STEPS, BATCH, SEQ = 5, int(os.environ.get("STEPS", 30)), 8, 256


def main():
    torch.manual_seed(0)
    config = GPT2Config(n_layer=4, n_embd=512, n_head=8, n_positions=SEQ)
    model = GPT2LMHeadModel(config).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    tokens = torch.randint(0, config.vocab_size, (BATCH, SEQ), device="cuda")
    losses = []

    def step():
        with torch.cuda.nvtx.range("train_step"):
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(input_ids=tokens, labels=tokens).loss
            loss.backward()
            opt.step()
        losses.append(loss.detach())

    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    step_ms = time_steps(step, STEPS, torch.cuda.synchronize)

    last = float(losses[-1])
    if not all(math.isfinite(v) for v in torch.stack(losses).tolist()):
        sys.exit("hf_gpt2_train: a loss is not finite")
    print("steps", STEPS)
    print("warmup", WARMUP)
    print("tokens_per_step", BATCH * SEQ)
    print("params_m %.1f" % (sum(p.numel() for p in model.parameters()) / 1e6))
    print("loss %.4f" % last)
    print("step_ms %.4f" % step_ms)


if __name__ == "__main__":
    main()
