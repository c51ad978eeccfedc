"""The throughput table of this machine: ``python -m majiang_env bench``.

Each row times one face for a fixed number of decisions (never a fixed time),
best of ``--repeats`` runs, after one untimed warm-up run (which also compiles
the kernels). Two loops:

* **agent's loop**: at every decision the caller reads the observation and the
  legal actions of the player to act and picks a uniformly random legal action
  in Python (numpy), as an agent does;
* **bare loop**: the legal action is drawn without reading an observation in
  Python (in the kernel where the face can: ``sample_step``, ``selfplay``).

Peers are measured in the same run when they are installed (the ``peers``
extra): OpenSpiel's hearts through pyspiel and PettingZoo's connect_four_v3, on
the same two loops. ``benchmarks/`` in the repository holds the full peer
comparison and the published tables.
"""
from __future__ import annotations

import json
import os
import platform
import sys
import time

import numpy as np

__all__ = ["main", "rows"]


def _best(fn, repeats):
    fn()                                   # warm-up: compiles, fills caches
    best = None
    for _ in range(repeats):
        t = time.perf_counter()
        n = fn()
        dt = time.perf_counter() - t
        rate = n / dt
        best = rate if best is None else max(best, rate)
    return best


def _aec(n, seed=0):
    import majiang_env
    env = majiang_env.env()
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    done = 0
    while done < n:
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))
            done += 1
        env.reset(seed=int(rng.integers(2 ** 31)))
    return done


def _game(n, read, seed=0):
    from .engine.game import Game
    rng = np.random.default_rng(seed)
    done, g = 0, Game(seed=seed)
    while done < n:
        if g.done:
            g = Game(seed=int(rng.integers(2 ** 31)))
        if read:
            g.observe(g.current_player)
            legal = np.flatnonzero(g.legal_mask())
        else:
            legal = g.legal_actions()
        g.step(int(legal[rng.integers(len(legal))]))
        done += 1
    return done


def _vector(n, B, read, seed=0):
    from .agents.baselines import RandomAgent
    from .engine.vector import VectorGame
    vg = VectorGame(B, seed=seed, num_threads=1)
    obs, mask, _ = vg.reset()
    agent = RandomAgent(seed)
    zeros = np.zeros((B, 156), np.float32)
    steps = max(1, n // B)
    for _ in range(steps):
        if read:
            obs, mask, _, _, _ = vg.step(agent.act_batch(obs, mask))
        else:
            vg.sample_step(zeros)
    return steps * B


def _selfplay(n, B, seed=0):
    from .engine.vector import selfplay
    games = max(1, n // 400)               # about 400 decisions per 4-hand game
    return selfplay(games, num_envs=min(B, games), seed=seed, num_threads=1)["decisions"]


def _seat(n, B, seed=0):
    from .envs.seat_vector import SeatVectorEnv
    env = SeatVectorEnv(B, opponents="greedy", seat="random", obs_type="float", copy=False, num_threads=1)
    env.reset(seed=seed)
    zeros = np.zeros((B, 156), np.float32)
    steps = max(1, n // B)
    for _ in range(steps):
        env.step(env.sample_actions(zeros))
    return steps * B


def _openspiel(n, read, seed=0):
    import pyspiel
    game = pyspiel.load_game("hearts")
    rng = np.random.default_rng(seed)
    done, st = 0, game.new_initial_state()
    while done < n:
        if st.is_terminal():
            st = game.new_initial_state()
        if st.is_chance_node():
            outcomes = st.chance_outcomes()
            st.apply_action(outcomes[rng.integers(len(outcomes))][0])
            continue
        if read:
            st.information_state_tensor()
        legal = st.legal_actions()
        st.apply_action(legal[rng.integers(len(legal))])
        done += 1
    return done


def _connect_four(n, seed=0):
    from pettingzoo.classic import connect_four_v3
    env = connect_four_v3.env()
    rng = np.random.default_rng(seed)
    done = 0
    while done < n:
        env.reset(seed=int(rng.integers(2 ** 31)))
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))
            done += 1
    return done


def rows(decisions=200_000, repeats=3, num_envs=1024, log=None) -> list:
    """Every row: ``{"face", "loop", "decisions_per_second", "decisions"}`` (peers only when installed)."""
    small, B = max(1000, decisions // 10), num_envs
    plan = [("env() AEC loop (PettingZoo majiang_v2)", "agent", lambda: _aec(small)),
            ("Game", "agent", lambda: _game(small, True)),
            ("Game", "bare", lambda: _game(small, False)),
            (f"VectorGame({B})", "agent", lambda: _vector(decisions, B, True)),
            (f"VectorGame({B}).sample_step", "bare", lambda: _vector(decisions, B, False)),
            (f"selfplay (B={B}, random agents in the kernel)", "bare", lambda: _selfplay(decisions * 5, B)),
            (f"SeatVectorEnv({B}), 3 greedy opponents (learner steps)", "bare", lambda: _seat(decisions // 4, B))]
    try:
        import pyspiel  # noqa: F401
        plan += [("OpenSpiel hearts (pyspiel)", "agent", lambda: _openspiel(small, True)),
                 ("OpenSpiel hearts (pyspiel)", "bare", lambda: _openspiel(small, False))]
    except ImportError:
        pass
    try:
        from pettingzoo.classic import connect_four_v3  # noqa: F401
        plan.append(("PettingZoo connect_four_v3 AEC loop", "agent", lambda: _connect_four(small)))
    except ImportError:
        pass
    out = []
    for face, loop, fn in plan:
        rate = _best(fn, repeats)
        out.append({"face": face, "loop": loop, "decisions_per_second": rate})
        if log is not None:
            log(f"{face} [{loop}]: {rate:,.0f}/s")
    return out


def _fmt(rate):
    return f"{rate / 1e6:.2f} M" if rate >= 1e6 else f"{rate / 1e3:.1f} k"


def main(args) -> int:
    before = os.getloadavg()
    out = rows(args.decisions, args.repeats, args.num_envs, log=lambda s: print(s, file=sys.stderr, flush=True))
    after = os.getloadavg()
    print("| face | loop | decisions/s (best of %d) |" % args.repeats)
    print("|---|---|---|")
    for r in out:
        print(f"| {r['face']} | {r['loop']} | {_fmt(r['decisions_per_second'])} |")
    cpu = platform.processor() or platform.machine()
    print(f"\nmachine: {cpu}, {os.cpu_count()} cores; load average {before[0]:.2f} before, {after[0]:.2f} after; "
          "agent's loop: observation and legal actions read in Python at every decision; bare: not")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"format": "majiang-bench/1", "rows": out, "load_before": before, "load_after": after,
                       "cores": os.cpu_count(), "repeats": args.repeats, "num_envs": args.num_envs}, f, indent=1)
        print(f"wrote {args.json}")
    return 0
