"""majiang_env's throughput next to whichever peer environments are installed.

Every figure is measured in this run, with the same random-legal loop: the
policy lives outside the environment and picks uniformly among the legal
actions, and one decision is one environment step taken by a live agent
(chance nodes, terminal ``step(None)`` calls and engine-applied moves are not
counted). Like is compared with like:

* single-env Python loops -- RiichiEnv ``step({seat: action})``, OpenSpiel
  ``state.apply_action`` (hearts, gin_rummy), PettingZoo ``connect_four_v3``
  AEC -- against (c) the AEC loop through ``majiang_env.env()``;
* batched environments with the policy outside the step call -- pgx
  ``sparrow_mahjong`` under ``jax.jit(jax.vmap(...))`` with pgx's
  ``auto_reset`` and a jitted ``act_randomly``, B x steps decisions, compile
  time excluded -- against (b) ``VectorGame(1024).step`` with a numpy
  masked-random policy (as ``bench_vector.py``), and (b') with the actions
  sampled in the kernel from the policy's logits and stepped in one call
  (``sample_step``);
* (a) ``majiang_env.selfplay`` (whole games in compiled code, best of the
  ``--selfplay-sizes``) against the best peer figure of any kind.

Peers that are not installed are listed as such and skipped. Each row runs for
``--seconds`` in total, split into ``--rounds`` interleaved rounds; the best
round is reported (the machine may be shared: compare ratios, not absolutes).
``pip install -e ".[peers]"`` installs the peers.

    python benchmarks/compare_peers.py [--seconds 8] [--rounds 2] [--markdown] [--repeat 3 --write-results]

``--repeat N`` measures the whole table N times in a row (N runs);
``--write-results [PATH]`` writes them to ``benchmarks/results/peers.json``, from
which ``benchmarks/render_docs.py`` renders docs/performance.md and the README's
headline figures (ratios are taken within a run, never across runs).
"""
import argparse
import importlib.metadata as md
import os
import platform
import random
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import results_io  # noqa: E402

perf = time.perf_counter


def version(*dists):
    for d in dists:
        try:
            return md.version(d)
        except md.PackageNotFoundError:
            pass
    return None


def masked_random(rng, mask):
    # uniform among legal ids: argmax of random keys on the legal entries (bench_vector.py)
    return np.argmax(rng.random(mask.shape, dtype=np.float32) * mask, axis=1)


class Row:
    """One measured loop. ``fn(seconds, seed) -> (decisions, games, elapsed, one_choice)``;
    ``one_choice`` counts decisions with a single legal action (None: not counted).
    ``key``: the row's name in the results file; ``version``: the peer's version."""

    def __init__(self, group, name, fn, majiang=False, key=None, version=None):
        self.group, self.name, self.fn, self.majiang = group, name, fn, majiang
        self.key, self.version = key or name, version
        self.best = None  # (rate, decisions, games, elapsed, one_choice)
        self.error = None

    def measure(self, seconds, seed):
        if self.error:
            return
        try:
            d, g, dt, one = self.fn(seconds, seed)
        except Exception as e:  # a peer that breaks is reported, not faked
            self.error = f"failed: {type(e).__name__}: {e}"[:200]
            return
        rate = d / dt
        if self.best is None or rate > self.best[0]:
            self.best = (rate, d, g, dt, one)

    @property
    def rate(self):
        return self.best[0] if self.best else None


# ---------------------------------------------------------------- single-env Python loops

def aec_loop(make_env):
    """The usual agent_iter()/last() loop with a masked-random action, whole games until the time is up."""
    def run(seconds, seed):
        e = make_env()
        pick = random.Random(seed).randrange
        d = one = games = 0
        t0 = perf()
        while True:
            e.reset(seed=seed + games)
            for _agent in e.agent_iter():
                obs, rew, term, trunc, info = e.last()
                if term or trunc:
                    e.step(None)
                    continue
                legal = np.flatnonzero(obs["action_mask"])
                one += legal.size == 1
                e.step(int(legal[pick(legal.size)]))
                d += 1
            games += 1
            if perf() - t0 >= seconds:
                break
        dt = perf() - t0
        e.close()
        return d, games, dt, one
    return run


def riichi_loop(seconds, seed):
    """RiichiEnv's documented loop (README "Gym-style API"): every seat in the returned
    observation dict with legal actions picks one; each such pick is a decision.
    ``RiichiEnv()`` defaults: 4 players, one kyoku per game; ``reset(seed=...)``."""
    from riichienv import RiichiEnv
    env = RiichiEnv()
    pick = random.Random(seed).randrange
    d = one = games = 0
    t0 = perf()
    while True:
        obs = env.reset(seed=seed + games)
        while not env.done():
            acts = {}
            for pid, o in obs.items():
                legal = o.legal_actions()
                if legal:
                    one += len(legal) == 1
                    acts[pid] = legal[pick(len(legal))]
            d += len(acts)
            obs = env.step(acts)
        games += 1
        if perf() - t0 >= seconds:
            break
    return d, games, perf() - t0, one


def spiel_loop(game_name):
    """OpenSpiel's state API (open_spiel/python/examples/example.py): chance nodes are
    sampled from ``chance_outcomes()`` (seeded here: OpenSpiel states take no seed) and
    are not decisions; at a player node a uniform pick from ``legal_actions()``."""
    import pyspiel
    game = pyspiel.load_game(game_name)

    def run(seconds, seed):
        r = random.Random(seed)
        pick, choices = r.randrange, r.choices
        d = one = games = 0
        t0 = perf()
        while True:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    actions, probs = zip(*state.chance_outcomes(), strict=True)
                    state.apply_action(choices(actions, probs)[0])
                else:
                    legal = state.legal_actions()
                    one += len(legal) == 1
                    state.apply_action(legal[pick(len(legal))])
                    d += 1
            games += 1
            if perf() - t0 >= seconds:
                break
        return d, games, perf() - t0, one
    return run


def connect_four():
    try:
        import pygame  # noqa: F401  (connect_four imports it for rendering only)
    except ImportError:
        import types
        sys.modules["pygame"] = types.ModuleType("pygame")  # not rendered here
    from pettingzoo.classic import connect_four_v3
    return connect_four_v3.env


# ---------------------------------------------------------------- batched, policy outside

def vector_loop(B, threads=None, kernel_sampling=False):
    """bench_vector.py's loop; ``threads``: numba threads for the step's ``prange`` (None:
    numba's default). Each step is one parallel region, so on a loaded machine a thread
    that is descheduled stalls the whole step: one thread can then be faster.
    ``kernel_sampling``: the policy hands logits (here all zeros: uniform) to
    ``VectorGame.sample_step``, which samples a legal action in the kernel and steps
    in the same compiled call."""
    import numba

    from majiang_env.engine.vector import VectorGame

    def run(seconds, seed):
        vg = VectorGame(B, seed=seed)
        obs, mask, player = vg.reset()
        rng = np.random.default_rng(seed)
        logits = np.zeros((B, 156))
        if kernel_sampling:
            def step():
                return vg.sample_step(logits)[1:]
        else:
            def step():
                return vg.step(masked_random(rng, vg.mask))
        saved = numba.get_num_threads()
        numba.set_num_threads(threads or saved)
        try:
            step()
            d = games = 0
            t0 = perf()
            while perf() - t0 < seconds:
                obs, mask, player, rewards, done = step()
                d += B
                games += int(done.sum())
            dt = perf() - t0
        finally:
            numba.set_num_threads(saved)
        return d, games, dt, None
    return run


class PgxLoop:
    """pgx's batched API (README): ``jax.jit(jax.vmap(env.init))`` and a jitted, vmapped
    ``pgx.experimental.auto_reset(env.step, env.init)`` (every slot holds a live
    decision at every step), the policy ``pgx.experimental.act_randomly`` jitted apart
    from the step. Seeded through ``jax.random.PRNGKey``. Compiled once, untimed."""

    def __init__(self, env_id, B):
        import jax
        import pgx
        from pgx.experimental import act_randomly, auto_reset
        self.jax, self.B = jax, B
        env = pgx.make(env_id)
        self.init = jax.jit(jax.vmap(env.init))
        self.step = jax.jit(jax.vmap(auto_reset(env.step, env.init)))
        self.policy = jax.jit(act_randomly)
        self.compile_s = None

    def _start(self, seed):
        jax = self.jax
        key, sub = jax.random.split(jax.random.PRNGKey(seed))
        state = self.init(jax.random.split(sub, self.B))
        return key, state

    def _one(self, key, state):
        jax = self.jax
        key, k1, k2 = jax.random.split(key, 3)
        action = self.policy(k1, state.legal_action_mask)
        return key, self.step(state, action, jax.random.split(k2, self.B))

    def __call__(self, seconds, seed):
        jax = self.jax
        if self.compile_s is None:
            t = perf()
            key, state = self._start(seed)
            jax.block_until_ready(self._one(key, state))
            self.compile_s = perf() - t
        key, state = self._start(seed)
        key, state = self._one(key, state)
        jax.block_until_ready(state)
        d = games = 0
        t0 = perf()
        while perf() - t0 < seconds:
            key, state = self._one(key, state)
            d += self.B
            games += int(state.terminated.sum())
        return d, games, perf() - t0, None


# ---------------------------------------------------------------- whole games in compiled code

class SelfplayLoop:
    """``selfplay(n, num_envs=B)``, n a multiple of B sized from the last measured rate."""
    games_per_s = None

    def __init__(self, B):
        self.B = B

    def __call__(self, seconds, seed):
        from majiang_env import selfplay
        B = self.B
        if SelfplayLoop.games_per_s is None:  # calibrate
            s = selfplay(1024, seed=seed + 999, num_envs=1024)
            SelfplayLoop.games_per_s = s["games"] / s["seconds"]
        n = max(B, int(SelfplayLoop.games_per_s * seconds) // B * B)
        s = selfplay(n, seed=seed, num_envs=B)
        SelfplayLoop.games_per_s = s["games"] / s["seconds"]
        return s["decisions"], s["games"], s["seconds"], 0


# ---------------------------------------------------------------- main

cpu_model = results_io.cpu_model


def print_table(rows, aec, vecs, kvecs, sp, pgx_loop, args, t_start):
    """The table of one run (and its markdown with ``--markdown``)."""
    S, B, A = "single-env loop", "batched", "compiled games"
    per_round = args.seconds / args.rounds
    vec = max(vecs, key=lambda x: x.rate or 0)

    def ref_of(row):
        return {S: aec, B: vec}.get(row.group)

    best_sp = max((x for x in sp if x.rate), key=lambda x: x.rate, default=None)
    peers_ok = [x for x in rows if not x.majiang and x.rate]
    best_peer = max(peers_ok, key=lambda x: x.rate, default=None)
    table = []
    for row in rows:
        if row.rate is None:
            table.append((row.group, row.name, row.error or "no result", "", "", "", ""))
            continue
        rate, d, g, dt, one = row.best
        if row.majiang and row.group != A:
            ratio = "reference" if row is ref_of(row) else "-"
        elif row.group == A:
            ratio = (f"{rate / best_peer.rate:,.1f}x best peer" if best_peer else "no peer") + (
                " (best B)" if row is best_sp else "")
        else:
            ref = ref_of(row)
            ratio = f"{ref.rate / rate:.2f}x" if ref and ref.rate else "-"
        whole = row.group != B  # batched rows: games straddle the window, no per-game figures
        table.append((row.group, row.name, f"{rate:,.0f}", f"{g / dt:,.1f}" if whole else "-",
                      f"{d / g:,.0f}" if whole else "-",
                      "-" if one is None else f"{100 * one / max(d, 1):.1f}", ratio))
    head = ("kind", "environment and loop", "decisions/s", "games/s", "dec/game", "1-legal %", "majiang / peer")
    w = [max(len(str(t[i])) for t in table + [head]) for i in range(len(head))]
    def fmt(t):
        return "  ".join(str(c).ljust(w[i]) if i < 2 else str(c).rjust(w[i]) for i, c in enumerate(t))
    print()
    print(fmt(head))
    print("  ".join("-" * x for x in w))
    last = None
    for t in table:
        print(fmt(t if t[0] != last else ("",) + t[1:]))
        last = t[0]
    print()
    print("majiang / peer: (c) / the single-env peer, (b) (its best thread count) / the batched peer, "
          "(a) / the best peer figure"
          + (f" ({best_peer.name})" if best_peer else "") + ".")
    print("dec/game: decisions per game as each env defines a game (majiang: 4 hands). 1-legal %: "
          "decisions with one legal action (majiang applies those itself and does not count them).")
    riichi = next((x for x in rows if x.name.startswith("RiichiEnv") and x.rate), None)
    kvec = max(kvecs, key=lambda x: x.rate or 0)
    if riichi and best_sp and vec.rate:  # the docs state the ratios against RiichiEnv
        print(f"against RiichiEnv: selfplay (best B) {best_sp.rate / riichi.rate:,.1f}x, "
              f"VectorGame.step (b) {vec.rate / riichi.rate:,.1f}x, "
              f"with in-kernel sampling (b') {(kvec.rate or 0) / riichi.rate:,.1f}x")
    if pgx_loop and pgx_loop[0].compile_s is not None:
        print(f"pgx compile time (excluded): {pgx_loop[0].compile_s:.1f} s")
    print(f"load average {os.getloadavg()[0]:.1f} at end; total {perf() - t_start:.0f} s; "
          f"{args.rounds} rounds x {per_round:g} s per row, best round shown")
    if args.markdown:
        print()
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for t in table:
            print("| " + " | ".join(str(c) for c in t) + " |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=8.0, help="measuring time per row (all rounds)")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds per row; the best is reported")
    ap.add_argument("--batch", type=int, default=1024, help="B for VectorGame.step and pgx")
    ap.add_argument("--selfplay-sizes", type=int, nargs="+", default=[1024, 4096])
    ap.add_argument("--step-threads", type=int, nargs="+", default=[0, 1],
                    help="numba threads for VectorGame.step rows (0: numba's default)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--markdown", action="store_true", help="also print the table as markdown")
    ap.add_argument("--repeat", type=int, default=1, help="measure the whole table this many times (runs)")
    results_io.add_argument(ap, "peers")
    args = ap.parse_args(argv)
    t_start = perf()
    per_round = args.seconds / args.rounds

    import numba

    import majiang_env

    vers = {"riichienv": version("riichienv"), "open_spiel": version("open-spiel", "open_spiel"),
            "pgx": version("pgx"), "jax": version("jax"), "jaxlib": version("jaxlib")}
    try:
        aff = len(os.sched_getaffinity(0))
    except AttributeError:
        aff = os.cpu_count()
    print(f"machine: {cpu_model()}, {os.cpu_count()} logical cores ({aff} usable), "
          f"load average {os.getloadavg()[0]:.1f} at start; {platform.system()} {platform.machine()}")
    print(f"python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__} "
          f"({numba.get_num_threads()} threads), majiang_env {majiang_env.__version__}, "
          f"pettingzoo {version('pettingzoo')}")
    print("peers: " + ", ".join(f"{k} {v or 'not installed'}" for k, v in vers.items()))

    S, B, A = "single-env loop", "batched", "compiled games"
    rows = []
    aec = Row(S, "majiang_v2 env() AEC loop (c)", aec_loop(majiang_env.env), majiang=True, key="majiang/aec")
    rows.append(aec)

    def peer(group, name, make, missing, key, version):
        row = Row(group, name, None, key=key, version=version)
        rows.append(row)
        if missing:
            row.error = missing
            return
        try:
            row.fn = make()
        except Exception as e:
            row.error = f"failed: {type(e).__name__}: {e}"[:200]

    peer(S, "RiichiEnv (4p, 1 kyoku) step(dict)", lambda: riichi_loop,
         None if vers["riichienv"] else "not installed", "riichienv", vers["riichienv"])
    for g in ("hearts", "gin_rummy"):
        peer(S, f"OpenSpiel {g} apply_action", lambda g=g: spiel_loop(g),
             None if vers["open_spiel"] else "not installed", f"openspiel/{g}", vers["open_spiel"])
    peer(S, "PettingZoo connect_four_v3 AEC loop", lambda: aec_loop(connect_four()), None, "connect_four",
         version("pettingzoo"))

    nthreads = numba.get_num_threads()
    counts = list(dict.fromkeys(min(n or nthreads, nthreads) for n in args.step_threads))
    vecs = [Row(B, f"majiang VectorGame({args.batch}).step + numpy policy, {n} thr (b)",
                vector_loop(args.batch, n), majiang=True, key=f"majiang/vector/numpy B={args.batch} threads={n}")
            for n in counts]
    kvecs = [Row(B, f"majiang VectorGame({args.batch}).sample_step(logits): sampled in the kernel, {n} thr (b')",
                 vector_loop(args.batch, n, kernel_sampling=True), majiang=True,
                 key=f"majiang/vector/kernel B={args.batch} threads={n}")
             for n in counts]
    rows += vecs + kvecs
    pgx_missing = None if vers["pgx"] and vers["jax"] else (
        "not installed" if not vers["pgx"] else "not installed (pgx needs jax)")
    pgx_loop = []

    def make_pgx():
        pgx_loop.append(PgxLoop("sparrow_mahjong", args.batch))
        return pgx_loop[0]
    peer(B, f"pgx sparrow_mahjong jit(vmap(step)) B={args.batch} + jitted policy", make_pgx, pgx_missing,
         f"pgx/sparrow_mahjong B={args.batch}", vers["pgx"])

    sp = [Row(A, f"majiang selfplay num_envs={b} (a)", SelfplayLoop(b), majiang=True, key=f"majiang/selfplay B={b}")
          for b in args.selfplay_sizes]
    rows += sp

    # warm-ups: numba compile / cache load, outside every timing
    from majiang_env import selfplay
    selfplay(8, num_envs=8)
    aec_loop(majiang_env.env)(0.0, 10 ** 6)
    vector_loop(8)(0.0, 0)

    runs = []
    for rep in range(args.repeat):
        t_run = perf()
        for row in rows:
            row.best = None
        for r in range(args.rounds):
            for row in rows:
                row.measure(per_round, args.seed + 1000 * r)

        print_table(rows, aec, vecs, kvecs, sp, pgx_loop, args, t_start)
        out = []
        for row in rows:
            r = {"row": row.key, "kind": row.group, "name": row.name, "majiang": row.majiang}
            if row.version:
                r["version"] = row.version
            if row.rate is None:
                r["error"] = row.error or "no result"
            else:
                rate, d, g, dt, one = row.best
                r["decisions_per_s"] = rate
                if row.group != B:
                    r.update(games_per_s=g / dt, decisions_per_game=d / g)
                if one is not None:
                    r["one_legal_share"] = one / max(d, 1)
            out.append(r)
        runs.append(results_io.run_record(results_io.command_line(argv, __file__), out,
                                          seconds=args.seconds, rounds=args.rounds, run=rep + 1,
                                          seconds_total=round(perf() - t_run)))
    if args.write_results:
        results_io.report(results_io.write(args.write_results, runs))


if __name__ == "__main__":
    main()
