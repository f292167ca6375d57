"""jax_jit_mlp.py - a JAX training loop: one jax.jit step (forward, grad
and a plain SGD update; the parameters donated) of a bf16 MLP of 4 x
4096x4096 layers (GELU between), batch 4096, mean squared error against a
random target; the data stay on the GPU. Each step is waited for with
block_until_ready. 5 warm-up steps (the first compiles, and XLA autotunes
its GEMMs), then 50 timed. No NVTX of its own: XLA marks each run of the
step as an NVTX range "XlaModule:#hlo_module=jit_train_step,...".
JAX is told not to preallocate most of the GPU's memory (the GPU is shared).

Prints backend, steps, warmup, loss and step_ms (the median over blocks
of steps)."""
import math
import os
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from steptime import time_steps  # noqa: E402

WIDTH, LAYERS, BATCH, LR = 4096, 4, 4096, 1e-2
WARMUP, STEPS = 5, 50


def init(key):
    params = []
    for k in jax.random.split(key, LAYERS):
        w = jax.random.normal(k, (WIDTH, WIDTH), jnp.float32) / math.sqrt(WIDTH)
        params.append((w.astype(jnp.bfloat16), jnp.zeros((WIDTH,), jnp.bfloat16)))
    return params


def loss_fn(params, x, y):
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = jax.nn.gelu(h)
    return jnp.mean((h.astype(jnp.float32) - y) ** 2)


def train_step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    params = jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads)
    return params, loss


def main():
    if jax.default_backend() != "gpu":
        sys.exit("jax_jit_mlp: JAX has no GPU backend here (%s)" % jax.default_backend())
    step_fn = jax.jit(train_step, donate_argnums=0)
    kp, kx, ky = jax.random.split(jax.random.PRNGKey(0), 3)
    state = {"params": init(kp)}
    x = jax.random.normal(kx, (BATCH, WIDTH), jnp.bfloat16)
    y = jax.random.normal(ky, (BATCH, WIDTH), jnp.float32)
    losses = []

    def step():
        state["params"], loss = step_fn(state["params"], x, y)
        losses.append(loss.block_until_ready())

    for _ in range(WARMUP):
        step()
    step_ms = time_steps(step, STEPS, lambda: jax.block_until_ready(state["params"]))

    values = [float(v) for v in losses]
    if not all(math.isfinite(v) for v in values):
        sys.exit("jax_jit_mlp: a loss is not finite")
    print("backend", jax.default_backend(), jax.devices()[0].device_kind)
    print("steps", STEPS)
    print("warmup", WARMUP)
    print("loss %.4f" % values[-1])
    print("step_ms %.4f" % step_ms)


if __name__ == "__main__":
    main()
