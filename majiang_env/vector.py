"""``VectorGame``: B games stepped together by one compiled call, and ``selfplay``.

Autoreset is Gymnasium 1.x's *same-step* mode: when game i finishes during
``step``, ``done[i]`` and ``rewards[i]`` belong to the finished game, while the
returned ``obs[i]``, ``mask[i]`` and ``player[i]`` are already those of the
next game in slot i. Slot i plays games i, i + B, i + 2B, ... and game j uses
``game_seed(seed, j)``, so game i of ``VectorGame(seed=s)`` equals
``Game(seed=game_seed(s, i))`` whatever ``num_envs`` is.

Threads: a batch of at least ``PARALLEL_MIN_ENVS`` games is split over numba's
threads (``prange``), all of them by default; smaller ones run on the calling
thread. Each ``step`` is one short parallel region that waits for its slowest
thread, so on a machine whose cores are busy with other work (a learner's
threads, other processes) ``num_threads=1`` can be several times faster.
"""
from __future__ import annotations

import contextlib
import time

import numba
import numpy as np

from . import tables
from .game import Game, _check_seed
from .kernel import batch
from .kernel import layout as L
from .kernel.observe import OBS_SIZE
from .rules import NUM_ACTIONS, make_rules


PARALLEL_MIN_ENVS = 64  # smaller batches are stepped on the calling thread


def game_seed(seed: int, index: int) -> int:
    """The ``Game`` seed of game ``index`` of a batch started from ``seed``."""
    return int(batch.game_seed(np.uint64(_check_seed(seed)), np.uint64(index)))


@contextlib.contextmanager
def _threads(n):
    """Run the enclosed kernel calls on ``n`` numba threads (None: leave as is)."""
    if n is None:
        yield
        return
    prev = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        yield
    finally:
        numba.set_num_threads(prev)


def _positive_int(name, v):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ValueError(f"{name} must be a positive int, got {v!r}")
    return int(v)


def _check_threads(n):
    if n is None:
        return None
    top = numba.config.NUMBA_NUM_THREADS
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= top:
        raise ValueError(f"num_threads must be None or an int in 1..{top}, got {n!r}")
    return int(n)


class VectorGame:
    """B games stepped by one compiled call (API.md "Batched games").

    ``reset()`` -> ``(obs, mask, player)``; ``step(actions)`` -> ``(obs, mask,
    player, rewards, done)``: int16 (B, 436), int8 (B, 156), int32 (B,), int32
    (B, 4), bool (B,). ``rewards[i]`` holds each seat's points for a hand of slot
    i that closed in this step. The arrays are the object's own buffers,
    overwritten by the next call: copy what you keep.
    """

    def __init__(self, num_envs: int, rules=None, seed: int = 0, num_threads=None):
        self.num_envs = B = _positive_int("num_envs", num_envs)
        self.num_threads = _check_threads(num_threads)
        self._ready = False
        self.rules = make_rules(rules)
        self.seed = _check_seed(seed)
        self._rules = self.rules.to_array(auto_forced=True)
        self._wt = tables.win_table()
        self._st = np.zeros((B, L.SIZE), np.int32)
        self.mask = np.zeros((B, NUM_ACTIONS), np.int8)
        self.obs = np.zeros((B, OBS_SIZE), np.int16)
        self.player = np.zeros(B, np.int32)
        self.rewards = np.zeros((B, 4), np.int32)
        self.done = np.zeros(B, np.bool_)
        self.game_index = np.zeros(B, np.int64)

    def _parallel(self) -> bool:
        """Use numba's threads only for batches big enough to pay for waking them."""
        threads = self.num_threads or numba.get_num_threads()
        return threads > 1 and self.num_envs >= PARALLEL_MIN_ENVS

    @property
    def state_bytes_per_game(self) -> int:
        return self._st[0].nbytes + self.mask[0].nbytes + self.obs[0].nbytes + 4 * 4 + 1 + 4 + 8

    def reset(self):
        """Start games 0..B-1 of the run again."""
        reset = batch.batch_reset if self._parallel() else batch.batch_reset_serial
        with _threads(self.num_threads):
            reset(self._st, self._rules, self._wt, self.mask, self.obs, self.player,
                  self.game_index, np.uint64(self.seed))
        self._ready = True
        return self.obs, self.mask, self.player

    def step(self, actions):
        """Apply one legal action per slot (for the player to act there)."""
        if not self._ready:
            raise RuntimeError("call reset() before step()")
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":
            raise ValueError(f"actions must be an integer array of shape ({self.num_envs},), "
                             f"got {a.dtype} {a.shape}")
        a = a.astype(np.int64)
        bad = (a < 0) | (a >= NUM_ACTIONS)
        if not bad.any():
            bad = self.mask[np.arange(self.num_envs), a] == 0
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"action {int(a[i])} is not legal in env {i} (seat {int(self.player[i])}); "
                             f"legal ids {np.flatnonzero(self.mask[i]).tolist()}")
        step = batch.batch_step if self._parallel() else batch.batch_step_serial
        with _threads(self.num_threads):
            step(self._st, self._rules, self._wt, self.mask, self.obs, self.player,
                 self.rewards, self.done, self.game_index, a, np.uint64(self.seed))
        return self.obs, self.mask, self.player, self.rewards, self.done

    def game(self, i: int) -> Game:
        """A ``Game`` copy of slot i's current game."""
        g = Game(self.rules, seed=game_seed(self.seed, int(self.game_index[i])))
        g._st[:] = self._st[i]
        g._n = int(self.mask[i].sum())
        g._mask[:] = self.mask[i]
        return g

    def record(self, i: int) -> dict:
        """The ``majiang-record/1`` record of slot i's current game so far."""
        return self.game(i).record()


AGENTS = {"random": batch.AGENT_RANDOM, "greedy": batch.AGENT_GREEDY}


def _progress_bar(total):
    try:
        from tqdm.auto import tqdm
    except ImportError:
        raise ImportError("selfplay(progress=True) needs tqdm: pip install tqdm") from None
    return tqdm(total=total, unit="game", desc="selfplay")


def selfplay(num_games: int = 10_000, agents=("random", "random", "random", "random"), seed: int = 0,
             num_envs: int = 1024, rules=None, progress: bool = False, first_game: int = 0,
             num_threads=None) -> dict:
    """Play ``num_games`` whole games inside the compiled kernel; return stats (API.md).

    The games are ``first_game .. first_game + num_games - 1`` of the run: game j
    is dealt from ``game_seed(seed, j)`` and its random agents draw from a stream
    derived from that seed alone, so the stats of consecutive ranges add up to
    those of one call over their union (``majiang_env.distributed`` relies on it).
    ``progress=True`` shows a tqdm bar (the run is then made of about 50 kernel calls).
    ``num_threads``: numba threads for the run (None: numba's current setting).
    """
    agents = tuple(agents)
    if len(agents) != 4 or any(a not in AGENTS for a in agents):
        raise ValueError(f"agents must be 4 names from {sorted(AGENTS)}, got {agents!r}")
    if isinstance(num_games, bool) or not isinstance(num_games, (int, np.integer)) or num_games < 0:
        raise ValueError(f"num_games must be a non-negative int, got {num_games!r}")
    if isinstance(first_game, bool) or not isinstance(first_game, (int, np.integer)) or first_game < 0:
        raise ValueError(f"first_game must be a non-negative int, got {first_game!r}")
    rules = make_rules(rules)
    seed = _check_seed(seed)
    num_threads = _check_threads(num_threads)
    B = max(1, min(_positive_int("num_envs", num_envs), int(num_games)))
    st = np.zeros((B, L.SIZE), np.int32)
    mask = np.zeros((B, NUM_ACTIONS), np.int8)
    stats = np.zeros((B, 11), np.int64)
    codes = np.array([AGENTS[a] for a in agents], np.int32)
    dtab = tables.deficiency_table() if "greedy" in agents else np.zeros((1, tables.DEF_COLS), np.uint16)
    r, wt = rules.to_array(True), tables.win_table()
    # one kernel call, or (progress=True) about 50 calls over consecutive game ranges,
    # which add up to the same stats
    chunk = num_games if not progress else max(B, -(-num_games // 50))
    bar = _progress_bar(num_games) if progress else None
    t = time.perf_counter()
    for start in range(0, num_games, max(chunk, 1)):
        n = min(chunk, num_games - start)
        with _threads(num_threads):
            batch.selfplay_kernel(st, r, wt, mask, np.uint64(seed), int(n), codes, stats,
                                  int(first_game) + start, dtab)
        if bar is not None:
            bar.update(n)
    dt = time.perf_counter() - t
    if bar is not None:
        bar.close()
    s = stats.sum(0)
    return {"games": int(s[0]), "hands": int(s[1]), "decisions": int(s[2]), "seconds": dt,
            "mean_points": (s[3:7] / max(1, s[0])).tolist(), "wins": s[7:11].tolist()}
