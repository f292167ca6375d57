"""steptime.py - the step time every Python program of the corpus prints.

Steps run in blocks, each ended by a synchronisation; the figure is the
median block's mean step in ms (a hiccup of the machine spoils one block,
not the figure)."""
import time


def median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def time_steps(step, steps, sync, blocks=10):
    """Run step() steps times in at most `blocks` blocks, calling sync()
    after each block; return the median block's mean step in ms."""
    blocks = max(1, min(blocks, steps))
    per, rest = divmod(steps, blocks)
    means = []
    for b in range(blocks):
        n = per + (1 if b < rest else 0)
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        sync()
        means.append((time.perf_counter() - t0) * 1e3 / n)
    return median(means)
