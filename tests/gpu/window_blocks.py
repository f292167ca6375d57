"""The step times window_torch.py prints ("block FIRST N MS" after every N
steps), read for the windowed runs of window_long.sh and window_rounds.sh:
which blocks lie before a capture window, in it and after it, and the
median of a set of blocks with the order statistics that hold it with
about 95% confidence."""
import statistics


def blocks(path):
    """[(first_step, n_steps, ms_per_step)]; the first block of a run holds
    CUDA's and PyTorch's warm-up and is left to the caller."""
    with open(path) as f:
        return [(int(w[1]), int(w[2]), float(w[3]))
                for w in (line.split() for line in f) if w and w[0] == "block"]


def split(traced, first, last):
    """A traced run's blocks past its first, as (before, window, after) of
    the window that held steps first..last."""
    before = [b for b in traced[1:] if b[0] + b[1] <= first]
    window = [b for b in traced if b[0] <= last and b[0] + b[1] > first]
    after = [b for b in traced if b[0] > last]
    return before, window, after


def ci(values):
    """The median and the 95% interval of it (normal approximation of the
    binomial); with fewer than 6 values, the range."""
    v = sorted(values)
    n = len(v)
    h = 0.98 * n ** 0.5
    lo, hi = max(0, int(n / 2 - h)), min(n - 1, int(n / 2 + h))
    return statistics.median(v), v[lo], v[hi]


def ms(bs):
    return [b[2] for b in bs]
