"""Duplicate-deal arena: agents ranked with confidence intervals, the luck of the deal cancelled.

A **deal** is a game seed: deal d of a run from ``seed`` is game d of
``VectorGame(seed=seed)``, i.e. ``Game(seed=game_seed(seed, d))``; its squares
(every hand's cards) follow from it. Every deal is played once per
**seating** of the lineup: the 4 cyclic rotations (lineup entry i in seat
``(i + r) % 4`` in rotation r) or, with ``permutations=True``, all 24
orders. Seatings that put the same agent in the same seats are one game
(a lineup ``[cand, greedy, greedy, greedy]`` has 4 seatings either way), so
each agent sits in every seat equally often on every deal.

Agents: 4 agent specs, one per lineup position, anything the registry takes
(``majiang_env.agents``: a registered name such as ``"greedy"`` or
``"pretrained"``, text with parameters ``"search:samples=32"``, a pair, a
weights file, ``"module:factory"``, an agent object or a class); the same spec
or the same object twice is one agent. In-kernel agents are run by
``VectorGame.policy_actions`` for their rows; a Python agent is built once
(seeded from the run's ``seed``) and called batched, ``act_batch(obs int16 (n,
436), mask int8 (n, 156)) -> integer actions (n,)``; a planner's
``act_world(world, seat)`` once per decision, ``world`` from ``Game.sample_hidden``.

Every step, the rows of all games in flight are grouped by the agent to act,
and each agent is called once (batched, in-kernel: once per seating) for its
rows; per-observation agents are called once per row. The game of (deal d,
seating k) does not depend on ``num_envs``: deals are game indices of the
run, and the in-kernel agents' random streams restart with each game. Python
agents that keep their own random state see their calls in an order that
depends on ``num_envs``.

Wins and deal-ins are read from the actions themselves: a win is never a
forced action (引 is always legal beside 栄 in the take phase, and 打 or pass
beside 模), so every 模 (108) and 栄 (117-119) is chosen by an agent and passes
through the arena; 栄 id ``a`` by seat ``p`` is won on the discard of seat
``(p + a - 116) % 4``. This costs a few array operations per step; reading
``vg.game(i).wins(h)`` would cost ~30 us per hand and cannot see a game's last
hand, since at game end the slot already holds its next game (same-step
autoreset). tests/arena/test_arena.py checks the counts against ``Game.wins``.

**Statistics** (:func:`mean_ci`). The seatings of one deal share its cards, so
their results are correlated; the unit of replication is the deal. For each
agent and deal the arena first averages over the agent's seats in all
seatings (points per hand, share of its hands won, share of its hands with a
deal-in), then takes the mean over deals with a 95% Student-t interval
``mean +- t(0.975, N - 1) * sd / sqrt(N)``. Paired differences are formed per
deal before that step:

- ``vs_reference``: agent minus the reference agent at the same tables.
- ``gain``: the agent's result in its seats minus the reference agent's result
  in the same seats of the same deals when all four seats are the reference
  (the baseline run, ``baseline=True``): the duplicate-bridge comparison,
  "what this agent earns where a reference agent would have sat". This is the
  figure for strength claims ("search gains +10 points per hand over greedy").
  Under ``payment="zero_sum"`` the baseline's points average exactly 0 over the
  four seats of a deal, so the points gain equals the agent's mean points; the
  baseline still matters for win and deal-in rates and under ``"winner_only"``.
"""
from __future__ import annotations

import itertools
import json
import math
import time
from dataclasses import dataclass

import numpy as np

from .engine import vector
from .engine.checks import as_bool, as_int, as_seed, show
from .engine.registry import BATCHED, KERNEL, AgentError, AgentRef, Batched, resolve
from .engine.rules import A_RON, A_TSUMO, make_rules
from .engine.runner import Encoders, python_actions, world_action
from .engine.vector import VectorGame, game_seed

__all__ = ["AgentError", "ArenaResult", "Batched", "ladder", "ladder_table", "mean_ci", "run", "seatings", "t_quantile"]

NUM_SEATS = 4
MAX_DEFAULT_ENVS = 512       # default slots per seating ...
DEFAULT_IN_FLIGHT = 2048     # ... and in all (24 orders + a baseline: 81 per seating)


# ---- statistics ----------------------------------------------------------------
_T975 = (12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
         2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
         2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423)
_Z975 = 1.959963984540054


def t_quantile(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (a table up
    to 30, above it the Cornish-Fisher expansion in 1/df, error < 1e-5)."""
    if df < 1:
        return math.nan
    if df <= len(_T975):
        return _T975[df - 1]
    z, v = _Z975, float(df)
    return (z + (z ** 3 + z) / (4 * v) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * v ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * v ** 3)
            + (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / (92160 * v ** 4))


def mean_ci(x, bounds=None) -> dict:
    """Mean of per-deal values ``x`` with its 95% t interval over the deals:
    ``{"mean", "ci": [lo, hi], "half_width", "sd", "n"}`` (interval None when n < 2);
    ``bounds=(lo, hi)`` clips the interval (rates to [0, 1])."""
    x = np.asarray(x, np.float64)
    n = x.size
    m = float(x.mean()) if n else math.nan
    if n < 2:
        return {"mean": m, "ci": None, "half_width": None, "sd": None, "n": int(n)}
    sd = float(x.std(ddof=1))
    hw = t_quantile(n - 1) * sd / math.sqrt(n)
    lo, hi = m - hw, m + hw
    if bounds is not None:
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    return {"mean": m, "ci": [lo, hi], "half_width": hw, "sd": sd, "n": int(n)}


# ---- agents ----------------------------------------------------------------------
@dataclass
class _Agent:
    name: str
    ref: AgentRef
    built: object           # the Python form (None: in-kernel)
    seats: int = 0          # lineup positions it holds
    decisions: int = 0
    seconds: float = 0.0

    @property
    def kind(self) -> str:
        return self.ref.kind


def _agents(agents, names, seed, rules):
    """(distinct agents, lineup: agent index per lineup position)."""
    if isinstance(agents, (str, bytes)) or not isinstance(agents, (list, tuple)) or len(agents) != NUM_SEATS:
        raise ValueError(f"agents must be a list of {NUM_SEATS} agent specs, one per lineup position "
                         f"(e.g. [cand, 'greedy', 'greedy', 'greedy']), got {show(agents, 200)}")
    refs = [resolve(s, f"agents[{i}]") for i, s in enumerate(agents)]
    if names is not None:
        if isinstance(names, (str, bytes)) or not isinstance(names, (list, tuple)) or len(names) != NUM_SEATS \
                or any(not isinstance(n, str) or not n for n in names):
            raise ValueError(f"names must be a list of {NUM_SEATS} non-empty strings, one per lineup position, "
                             f"got {show(names, 200)}")
    out, lineup = [], []
    for i, ref in enumerate(refs):
        if names is not None:
            j = next((j for j, a in enumerate(out) if a.name == names[i]), None)
            if j is not None and not out[j].ref.same(ref):
                raise ValueError(f"names[{i}] = {show(names[i])} names two different agents "
                                 f"({show(out[j].ref.name, 60)} and {show(ref.name, 60)})")
        else:
            j = next((j for j, a in enumerate(out) if a.ref.same(ref)), None)
        if j is None:
            name = names[i] if names is not None else ref.name
            if names is None and any(a.name == name for a in out):
                name = f"{name}#{sum(a.name.split('#')[0] == name for a in out) + 1}"
            built = None if ref.kind == KERNEL else ref.build((seed + i) % 2 ** 64, rules)
            out.append(_Agent(name, ref, built))
            j = len(out) - 1
        out[j].seats += 1
        lineup.append(j)
    return out, tuple(lineup)


def seatings(lineup, permutations: bool = False) -> list:
    """The distinct seatings of a lineup (a sequence of 4 agent ids): each a tuple
    ``seat -> agent id``. Rotation r seats lineup entry i at ``(i + r) % 4``;
    ``permutations=True`` takes all 24 orders. Repeats are dropped, first kept;
    every agent then holds every seat equally often."""
    lineup = tuple(lineup)
    if len(lineup) != NUM_SEATS:
        raise ValueError(f"lineup must have {NUM_SEATS} entries, got {show(lineup)}")
    if permutations:
        orders = [tuple(lineup[p[s]] for s in range(NUM_SEATS)) for p in itertools.permutations(range(NUM_SEATS))]
    else:
        orders = [tuple(lineup[(s - r) % NUM_SEATS] for s in range(NUM_SEATS)) for r in range(NUM_SEATS)]
    return list(dict.fromkeys(orders))


# ---- the result ------------------------------------------------------------------
class ArenaResult:
    """What :func:`run` measured. Raw arrays (deal d, seating k, seat s): ``points``
    (game score), ``wins`` (hands won), ``deal_ins`` (hands with at least one of
    the seat's discards won on); ``baseline_*`` (deal, seat) for the reference
    agent in all four seats, or None. ``figures()`` / ``to_dict()`` / ``table()``
    summarise them."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def _per_deal(self, a, pts, wins, dins):
        """Per-deal points per hand, win share and deal-in share of agent index a,
        over its seats in every seating; arrays (deal, seating, seat)."""
        m = (np.asarray(self.seatings) == a).astype(np.float64)      # (K, 4)
        hands = m.sum() * self.hands_per_game
        return tuple((x * m).sum(axis=(1, 2)) / hands for x in (pts, wins, dins))

    def figures(self) -> list:
        """One dict per agent (ladder order: best points first) with every figure."""
        seat_of = np.asarray(self.seatings)
        A, H, N = len(self.names), self.hands_per_game, self.deals
        per = [self._per_deal(a, self.points, self.wins, self.deal_ins) for a in range(A)]
        base = None
        if self.baseline_points is not None:
            b = [np.broadcast_to(x[:, None, :], self.points.shape)
                 for x in (self.baseline_points, self.baseline_wins, self.baseline_deal_ins)]
            base = [self._per_deal(a, *b) for a in range(A)]
        ref = self.reference
        out = []
        for a, name in enumerate(self.names):
            pts, win, din = per[a]
            here = seat_of == a
            by_seat = [float(self.points[:, here[:, s], s].sum() / (here[:, s].sum() * N * H))
                       if here[:, s].any() else None for s in range(NUM_SEATS)]
            f = {"agent": name, "kind": self.kinds[a], "seats": self.seats[a], "hands": int(here.sum()) * N * H,
                 "decisions": self.agent_decisions[a],
                 "seconds_per_decision": self.agent_seconds[a] / max(1, self.agent_decisions[a]),
                 "points_per_hand": mean_ci(pts), "win_rate": mean_ci(win, (0, 1)),
                 "deal_in_rate": mean_ci(din, (0, 1)),
                 "points_per_hand_by_seat": by_seat}
            if ref is not None and a != ref:
                rp, rw, rd = per[ref]
                f["vs_reference"] = {"points_per_hand": mean_ci(pts - rp), "win_rate": mean_ci(win - rw),
                                     "deal_in_rate": mean_ci(din - rd)}
            if base is not None:
                bp, bw, bd = base[a]
                f["gain"] = {"points_per_hand": mean_ci(pts - bp), "win_rate": mean_ci(win - bw),
                             "deal_in_rate": mean_ci(din - bd)}
            out.append(f)
        out.sort(key=lambda f: -f["points_per_hand"]["mean"])
        return out

    def to_dict(self) -> dict:
        """Every figure and the run's settings, JSON-serialisable."""
        return {"format": "majiang-arena/1", "agents": list(self.names),
                "lineup": [self.names[i] for i in self.lineup],
                "seatings": [[self.names[i] for i in s] for s in self.seatings],
                "permutations": self.permutations, "deals": self.deals, "seed": self.seed,
                "deal_seeds": [game_seed(self.seed, d) for d in range(self.deals)],
                "rules": self.rules.to_dict(), "hands_per_game": self.hands_per_game,
                "reference": None if self.reference is None else self.names[self.reference],
                "baseline": self.baseline_points is not None,
                "games": self.games, "hands": self.games * self.hands_per_game, "decisions": self.decisions,
                "seconds": self.seconds, "cpu_seconds": self.cpu_seconds,
                "decisions_per_second": self.decisions / max(self.seconds, 1e-9),
                "num_envs": self.num_envs, "num_threads": self.num_threads, "confidence": 0.95,
                "interval": "Student t over deals of per-deal means "
                            "(all seats and seatings of a deal averaged first)",
                "results": self.figures()}

    def to_json(self, path=None, indent=1) -> str:
        s = json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)
        if path is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(s + "\n")
        return s

    def table(self) -> str:
        """The ladder as text: one row per agent, best points per hand first."""
        def ci(d, scale=1.0, sign=False):
            fmt = "{:+.1f}" if sign else "{:.1f}"
            s = fmt.format(d["mean"] * scale)
            if d["ci"] is None:
                return s + " [n/a]"
            lo, hi = (v * scale for v in d["ci"])
            return f"{s} [{fmt.format(lo)}, {fmt.format(hi)}]"

        figs = self.figures()
        ref = None if self.reference is None else self.names[self.reference]
        extra = "gain" if self.baseline_points is not None else "vs_reference" if ref is not None else None
        head = ["#", "agent", "seats", "points/hand [95% CI]", "win % [95% CI]", "deal-in % [95% CI]"]
        if extra == "gain":
            head.append(f"gain over {ref} in its seats [95% CI]")
        elif extra:
            head.append(f"minus {ref} at the same tables [95% CI]")
        head.append("ms/decision")
        rows = []
        for i, f in enumerate(figs, 1):
            r = [str(i), f["agent"], str(f["seats"]), ci(f["points_per_hand"], sign=True),
                 ci(f["win_rate"], 100), ci(f["deal_in_rate"], 100)]
            if extra:
                r.append(ci(f[extra]["points_per_hand"], sign=True) if extra in f else "(reference)")
            r.append(f"{1e3 * f['seconds_per_decision']:.3f}")
            rows.append(r)
        w = [max(len(x[c]) for x in [head] + rows) for c in range(len(head))]

        def line(r):
            return "  ".join(x.ljust(w[c]) if c < 2 else x.rjust(w[c]) for c, x in enumerate(r)).rstrip()
        top = (f"arena: {self.deals} deals x {len(self.seatings)} seatings "
               f"({'permutations' if self.permutations else 'rotations'}) = {self.games} games, "
               f"{self.games * self.hands_per_game} hands, seed {self.seed}; "
               f"{self.decisions} decisions in {self.seconds:.1f} s "
               f"({self.decisions / max(self.seconds, 1e-9):,.0f}/s; CPU {self.cpu_seconds:.1f} s)")
        return "\n".join([top, line(head), line(["-" * x for x in w])] + [line(r) for r in rows])

    def __repr__(self):
        return self.table()


# ---- the run ---------------------------------------------------------------------
def run(agents, deals: int = 1000, *, seed: int = 0, permutations: bool = False, rules=None, names=None,
        reference=None, baseline: bool = True, num_envs=None, num_threads=1,
        progress: bool = False) -> ArenaResult:
    """Play ``agents`` (4 specs, one per lineup position) over deals 0..deals-1 of the
    run from ``seed``, every deal once per seating (module docstring).

    ``names``: 4 display names (equal names mark one agent); default from the
    specs. ``reference``: the name of the agent the paired figures compare with
    (default: the agent holding the most lineup positions, if one does).
    ``baseline``: also play the reference in all four seats of every deal, for
    the ``gain`` figures. ``num_envs``: games in flight per seating (default
    ``2048 // seatings`` within 64..512, at most ``deals``); it changes no game.
    ``num_threads``: numba threads of the batches (default 1: the seatings' batches
    step one after another between Python work, and on a shared machine one
    thread is steadier; None: numba's setting).
    ``progress``: a tqdm bar if tqdm is installed.
    """
    seed = as_seed(seed)
    rules = make_rules(rules)
    agent_list, lineup = _agents(agents, names, seed, rules)
    deals = as_int("deals", deals, 1, 10 ** 9)
    permutations = as_bool("permutations", permutations)
    baseline = as_bool("baseline", baseline)
    progress = as_bool("progress", progress)
    if num_envs is not None:
        num_envs = as_int("num_envs", num_envs, 1, vector.MAX_ENVS)
    names_ = [a.name for a in agent_list]
    if reference is None:
        top = max(a.seats for a in agent_list)
        holders = [i for i, a in enumerate(agent_list) if a.seats == top]
        ref = holders[0] if len(holders) == 1 and len(agent_list) > 1 or len(agent_list) == 1 else None
    else:
        if not isinstance(reference, str) or reference not in names_:
            raise ValueError(f"reference must be the name of one of the agents {names_}, got {show(reference)}")
        ref = names_.index(reference)
    seats_list = seatings(lineup, permutations)
    K = len(seats_list)
    all_ref = (ref,) * NUM_SEATS
    if ref is not None and baseline and all_ref not in seats_list:
        seats_list.append(all_ref)
        base_k = K
    else:
        base_k = seats_list.index(all_ref) if ref is not None and baseline else None
    n_play = len(seats_list)
    if num_envs is None:
        num_envs = min(MAX_DEFAULT_ENVS, max(64, DEFAULT_IN_FLIGHT // n_play))
    num_envs = min(num_envs, deals)

    pts, wins, dins, decisions, seconds, cpu = _play(agent_list, seats_list, deals, seed, rules, num_envs,
                                                     num_threads, progress)
    bp, bw, bd = (None,) * 3 if base_k is None else (pts[:, base_k], wins[:, base_k], dins[:, base_k])
    return ArenaResult(
        names=names_, kinds=[a.kind for a in agent_list], seats=[a.seats for a in agent_list], lineup=lineup,
        seatings=seats_list[:K], permutations=permutations, deals=deals, seed=seed, rules=rules,
        hands_per_game=rules.hands_per_game, reference=ref, points=pts[:, :K], wins=wins[:, :K],
        deal_ins=dins[:, :K], baseline_points=bp, baseline_wins=bw, baseline_deal_ins=bd, games=deals * n_play,
        decisions=decisions, seconds=seconds, cpu_seconds=cpu, num_envs=num_envs, num_threads=num_threads,
        agent_decisions=[a.decisions for a in agent_list], agent_seconds=[a.seconds for a in agent_list])


def _call(agent, groups, vgs, acts, gis, players, encoders):
    """Fill acts[k][rows] for every (k, rows) of ``groups`` with ``agent``'s actions
    (checked: ``runner``'s functions raise AgentError naming the deal and seat)."""
    t = time.perf_counter()
    n = sum(r.size for _, r in groups)
    if agent.kind == KERNEL:
        for k, rows in groups:
            acts[k][rows] = vgs[k].policy_actions(agent.ref, rows)
    elif agent.kind == BATCHED:
        obs = np.concatenate([vgs[k].compact[rows] for k, rows in groups])
        mask = np.concatenate([vgs[k].mask[rows] for k, rows in groups])
        ks = np.concatenate([np.full(r.size, k) for k, r in groups])
        rows = np.concatenate([r for _, r in groups])
        a = python_actions(agent.built, agent.name, obs, mask, encoders,
                           lambda i: f"in deal {int(gis[ks[i]][rows[i]])} (seating {int(ks[i])}, "
                                     f"seat {int(players[ks[i]][rows[i]])})")
        parts = np.split(a, np.cumsum([r.size for _, r in groups])[:-1])
        for (k, r), part in zip(groups, parts, strict=True):
            acts[k][r] = part
    else:
        for k, rows in groups:
            vg = vgs[k]
            for r in rows:
                g, seat = vg.game(r), int(players[k][r])
                try:
                    acts[k][r] = world_action(agent.built, agent.name, g.sample_hidden(seat, agent.decisions + r),
                                              seat, set(g.legal_actions()))
                except AgentError as e:
                    raise AgentError(f"{e}, in deal {int(gis[k][r])} (seating {k})") from None
    agent.decisions += n
    agent.seconds += time.perf_counter() - t


def _play(agent_list, seats_list, N, seed, rules, B, num_threads, progress):
    """Play deals 0..N-1 in every seating; return per (deal, seating, seat) points,
    wins, deal-in hands, the decision count and the wall time."""
    K, A = len(seats_list), len(agent_list)
    seat_agent = np.asarray(seats_list, np.int64)            # (K, 4)
    t0, c0 = time.perf_counter(), time.process_time()
    vgs = [VectorGame(B, rules, seed, num_threads) for _ in range(K)]
    encoders = Encoders(rules)
    for vg in vgs:
        vg.reset()
    pts, wins, dins = np.zeros((N, K, 4), np.int64), np.zeros((N, K, 4), np.int32), np.zeros((N, K, 4), np.int32)
    # the slot's game so far, and its current hand
    acc_p, acc_w, acc_d = np.zeros((K, B, 4), np.int64), np.zeros((K, B, 4), np.int32), np.zeros((K, B, 4), np.int32)
    hand_w, hand_d = np.zeros((K, B, 4), np.bool_), np.zeros((K, B, 4), np.bool_)
    acts = [np.zeros(B, np.int64) for _ in range(K)]
    live, decisions = list(range(K)), 0
    bar = None
    if progress:
        try:
            from tqdm.auto import tqdm
            bar = tqdm(total=N * K, unit="game", desc="arena")
        except ImportError:
            pass
    try:
        while live:
            groups = [[] for _ in range(A)]
            gis, players, active = {}, {}, {}
            for k in live:
                vg = vgs[k]
                gis[k] = gi = vg.game_index.copy()
                players[k] = p = vg.player.copy()
                active[k] = act = gi < N
                who = np.where(act, seat_agent[k][p], -1)
                idle = np.flatnonzero(~act)
                if idle.size:                   # games past the last deal: any legal action, results dropped
                    acts[k][idle] = vg.mask[idle].argmax(axis=1)
                for a in range(A):
                    rows = np.flatnonzero(who == a)
                    if rows.size:
                        groups[a].append((k, rows))
            for a in range(A):
                if groups[a]:
                    _call(agent_list[a], groups[a], vgs, acts, gis, players, encoders)
            finished = 0
            for k in list(live):
                vg = vgs[k]
                act, p, gi, a = active[k], players[k], gis[k], acts[k]
                decisions += int(act.sum())
                _, _, _, rewards, done = vg.step(a)
                tsumo = np.flatnonzero(act & (a == A_TSUMO))
                ron = np.flatnonzero(act & (a >= A_RON) & (a < A_RON + 3))
                hand_w[k, tsumo, p[tsumo]] = True
                hand_w[k, ron, p[ron]] = True
                hand_d[k, ron, (p[ron] + a[ron] - (A_RON - 1)) % 4] = True
                acc_p[k] += rewards
                closed = np.flatnonzero(vg.hand_closed)
                if closed.size:
                    acc_w[k, closed] += hand_w[k, closed]
                    acc_d[k, closed] += hand_d[k, closed]
                    hand_w[k, closed] = False
                    hand_d[k, closed] = False
                dn = np.flatnonzero(done)
                if dn.size:
                    keep = dn[act[dn]]
                    pts[gi[keep], k] = acc_p[k, keep]
                    wins[gi[keep], k] = acc_w[k, keep]
                    dins[gi[keep], k] = acc_d[k, keep]
                    finished += keep.size
                    acc_p[k, dn] = 0
                    acc_w[k, dn] = 0
                    acc_d[k, dn] = 0
                if not (vg.game_index < N).any():
                    live.remove(k)
            if bar is not None and finished:
                bar.update(finished)
    finally:
        if bar is not None:
            bar.close()
    return pts, wins, dins, decisions, time.perf_counter() - t0, time.process_time() - c0


# ---- the ladder --------------------------------------------------------------------
def ladder(agents, deals: int = 500, *, search_deals: int = 100, seed: int = 0, rules=None, num_threads=1,
           log=None) -> list:
    """Each agent spec of ``agents`` in one seat against three greedy seats, on deals
    0..deals-1 of the run from ``seed`` (an agent with the search agent's kernel plays
    ``search_deals``: milliseconds per decision). Points are zero-sum, so an agent's
    points per hand are its gain over greedy in the same seats of the same deals
    (greedy itself scores exactly 0). Returns one dict per row (``agent``, ``spec``,
    ``deals``, ``points_per_hand``, ``win_rate``, ``deal_in_rate``: :func:`mean_ci`
    dicts; ``ms_per_decision``, ``seconds``); ``log(text)`` hears of each row's end.
    Every spec is resolved before any row plays (ValueError naming it)."""
    if isinstance(agents, (str, bytes)) or not isinstance(agents, (list, tuple)) or not agents:
        raise ValueError(f"agents must be a non-empty list of agent specs, got {show(agents, 200)}")
    refs = [resolve(a, f"agents[{i}]") for i, a in enumerate(agents)]
    deals = as_int("deals", deals, 1, 10 ** 9)
    search_deals = as_int("search_deals", search_deals, 1, 10 ** 9)
    rows = []
    for spec, ref in zip(agents, refs, strict=True):
        n = search_deals if ref.entry is not None and ref.entry.kernel == "search" else deals
        t = time.perf_counter()
        name = ref.name if ref.name != "greedy" else None
        res = run([ref, "greedy", "greedy", "greedy"], n, seed=seed, rules=rules, baseline=False,
                  names=[name, "greedy", "greedy", "greedy"] if name else None, num_threads=num_threads)
        f = next(f for f in res.figures() if f["agent"] == ref.name)
        rows.append({"agent": ref.name, "spec": spec if isinstance(spec, str) else ref.name, "deals": n,
                     "points_per_hand": f["points_per_hand"], "win_rate": f["win_rate"],
                     "deal_in_rate": f["deal_in_rate"], "ms_per_decision": 1000 * f["seconds_per_decision"],
                     "seconds": round(res.seconds, 1)})
        if log is not None:
            log(f"{ref.name}: {n} deals in {time.perf_counter() - t:.0f} s")
    return rows


def ladder_table(rows) -> str:
    """The rows of :func:`ladder` as a Markdown table, best points per hand first."""
    def ci(d, scale=1.0, sign=True):
        fmt = "{:+.2f}" if sign else "{:.1f}"
        if d["ci"] is None:
            return f"{fmt.format(d['mean'] * scale)} [one deal: no interval]"
        return f"{fmt.format(d['mean'] * scale)} [{fmt.format(d['ci'][0] * scale)}, {fmt.format(d['ci'][1] * scale)}]"
    lines = ["| agent (vs 3 greedy) | deals x 4 | points/hand [95% CI] | win % [95% CI] | "
             "deal-in % [95% CI] | ms/decision |", "|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: -r["points_per_hand"]["mean"]):
        lines.append(f"| {r['agent']} | {r['deals']:,} | {ci(r['points_per_hand'])} | "
                     f"{ci(r['win_rate'], 100, False)} | {ci(r['deal_in_rate'], 100, False)} | "
                     f"{r['ms_per_decision']:.3f} |")
    return "\n".join(lines)
