"""compile_reduce_overhead.py - compile_default.py's MLP and training step
(forward and loss compiled, bf16 autocast inside, AdamW with its defaults,
eager) under torch.compile(mode="reduce-overhead"): the compiled forward
and backward are replayed as CUDA graphs, and each step begins with
torch.compiler.cudagraph_mark_step_begin(). The batch is small, 32, so
that launch overhead matters. The warm-up steps include the compilation and
the recording of the graphs. Each step is an NVTX range "train_step"; 5
warm-up steps, then 30 timed. Prints what compile_default.py prints."""
from compile_default import run

if __name__ == "__main__":
    run("reduce-overhead", 32)
