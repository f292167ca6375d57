"""hf_gpt2_infer_b1.py - greedy decoding with the GPT-2 of hf_gpt2_train.py
(4 layers, n_embd 512, 8 heads; built from its config, no weights), in
bf16, batch 1, the naive way: each new token runs the whole model over the
whole sequence so far (use_cache=False, logits for every position), then
argmax and torch.cat. No NVTX, no synchronisation inside a generation: the
host launches small kernels as fast as Python lets it.

A generation is a 16-token prompt plus 32 new tokens; 2 warm-up
generations, then 10 timed. A step is one new token (one forward).

Prints tokens_per_generation, generations, warmup, steps, generation_ms and
step_ms (the median generation's time over its 32 tokens; each generation
ended by torch.cuda.synchronize)."""
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402

from steptime import time_steps  # noqa: E402

PROMPT, NEW_TOKENS, WARMUP, GENERATIONS = 16, 32, 2, 10


def main():
    torch.manual_seed(0)
    config = GPT2Config(n_layer=4, n_embd=512, n_head=8, n_positions=256)
    model = GPT2LMHeadModel(config).cuda().to(torch.bfloat16).eval()
    prompt = torch.randint(0, config.vocab_size, (1, PROMPT), device="cuda")
    last = {}

    @torch.inference_mode()
    def generate():
        ids = prompt
        for _ in range(NEW_TOKENS):
            logits = model(input_ids=ids, use_cache=False).logits
            next_id = logits[:, -1, :].argmax(dim=-1, keepdim=True)
            ids = torch.cat([ids, next_id], dim=1)
        last["ids"], last["logits"] = ids, logits

    for _ in range(WARMUP):
        generate()
    torch.cuda.synchronize()
    generation_ms = time_steps(generate, GENERATIONS, torch.cuda.synchronize,
                               blocks=GENERATIONS)

    ids = last["ids"]
    if ids.shape != (1, PROMPT + NEW_TOKENS) or int(ids.max()) >= config.vocab_size:
        sys.exit("hf_gpt2_infer_b1: unexpected tokens %s" % (tuple(ids.shape),))
    if not bool(torch.isfinite(last["logits"]).all()):
        sys.exit("hf_gpt2_infer_b1: logits are not finite")
    print("tokens_per_generation", NEW_TOKENS)
    print("generations", GENERATIONS)
    print("warmup", WARMUP)
    print("steps", GENERATIONS * NEW_TOKENS)
    print("generation_ms %.4f" % generation_ms)
    print("step_ms %.4f" % (generation_ms / NEW_TOKENS))


if __name__ == "__main__":
    main()
