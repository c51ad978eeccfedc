"""Settings of a PPO run: :class:`PPOConfig`, and what tunes the process for it
(torch and numba threads, the network's matrix precision, the C allocator)."""
from __future__ import annotations

import ctypes
import functools
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from majiang_env.engine.threads import numba_threads as _numba_threads

__all__ = ["PPOConfig", "keep_freed_memory", "matmul_dtype"]


@dataclass
class PPOConfig:
    num_envs: int = 1024          # games stepped together (one network call per step for all)
    rollout: int = 32             # decisions per env per update
    epochs: int = 1
    minibatch: int = 4096
    lr: float = 3e-4
    gamma: float = 0.99           # per decision of the same seat
    lam: float = 0.95
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: int = 256
    win_bonus: float = 1.0        # shaping (self-play only): reward on a winning decision
    point_scale: float = 1 / 30   # reward per point of a hand's point change
    shaping: float = 0.0          # potential-based shaping (see compute_advantages): the potential of a
                                  # decision is -shaping x the deficiency of the hand now (0 at a hand's end)
    opponents: str = "self"       # "self", or an in-kernel agent name for the other three seats
    critic: str = "observation"   # the value's input: "observation" (the policy's features) or "state"
                                  # (the full-information state: a privileged critic; the policy still
                                  # reads only its observation)
    threads: int = 2              # torch threads; see _threads
    numba_threads: int = 2        # kernel threads during training
    precision: str = "auto"       # the network's matrix products: "fp32", "bf16" or "auto"; see matmul_dtype
    keep_freed_memory: bool = True    # tune the C allocator of this process; see keep_freed_memory
    seed: int = 0


@functools.lru_cache(maxsize=None)
def keep_freed_memory() -> bool:
    """Make this process's C allocator (glibc's ``malloc``) keep the memory torch frees
    for reuse instead of returning it to the OS; True where ``mallopt`` accepted both
    settings (it may still change nothing, e.g. under a preloaded jemalloc).

    The network's largest activations (the kind head's, samples x 36 x 64) are
    megabytes. glibc serves blocks that large with ``mmap`` and unmaps them when
    freed (its threshold adapts upwards, but only to 32 MiB), and it trims the
    top of its heap once more than twice that threshold is free there, so
    forward and backward passes kept page-faulting their activations in again:
    a PPO update spent about a quarter of its time there
    (``benchmarks/bench_ppo.py``). This fixes the ``mmap`` threshold at 32 MiB
    (the ceiling of 64-bit glibc; the adaptive threshold stops adapting) and
    raises the trim threshold to 1 GiB, so up to that much freed memory stays
    with the process. The setting is process-wide and stays after the
    ``Trainer`` is gone; it is applied once per process. Elsewhere (no glibc,
    or a glibc that refuses the first setting) it does nothing.
    ``PPOConfig(keep_freed_memory=False)`` leaves the allocator alone."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):   # no C library to load, or no mallopt in it
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3
    return bool(mallopt(m_mmap_threshold, 32 << 20)) and bool(mallopt(m_trim_threshold, 1 << 30))


@functools.lru_cache(maxsize=None)
def _native_bf16() -> bool:
    """Does this CPU multiply bfloat16 matrices in hardware (Intel AMX)? Read from the
    Linux CPU flags; False where they cannot be read."""
    try:
        with open("/proc/cpuinfo") as fh:
            return any(line.startswith("flags") and " amx_bf16" in line for line in fh)
    except OSError:
        return False


def matmul_dtype(precision: str):
    """The dtype the network's linear layers run in: ``"fp32"`` (float32), ``"bf16"``
    (bfloat16 under ``torch.autocast``; weights, optimiser state, softmax and losses
    stay float32) or ``"auto"``: bfloat16 where the CPU has it in hardware (AMX,
    about 1.5 times faster updates measured on a 2-core Xeon), else float32."""
    if precision not in ("fp32", "bf16", "auto"):
        raise ValueError(f"precision must be 'fp32', 'bf16' or 'auto', got {precision!r}")
    if precision == "auto":
        precision = "bf16" if _native_bf16() else "fp32"
    return torch.bfloat16 if precision == "bf16" else torch.float32


@contextmanager
def _threads(n_torch, n_numba):
    """torch and numba thread counts for one call, restored afterwards. The defaults
    (2 and 2) are fastest on an idle 2-core machine; with another busy process on
    it, one of each was faster (``benchmarks/bench_ppo.py --busy 0 1``: the rollout
    alternates the numba kernel and the network, and threads woken from sleep
    for every small operation wait for a core)."""
    old = torch.get_num_threads()
    torch.set_num_threads(n_torch)
    try:
        with _numba_threads(n_numba):
            yield
    finally:
        torch.set_num_threads(old)
