"""Seat-rotation evaluation of Python agents, shared by :func:`agents.ppo.evaluate`
and ``benchmarks/eval_agents.py`` (its AEC-env table). Needs no torch.

:func:`play_rotation` plays whole games, the agent under test in seat ``g % 4``
of game g and three opponents in the other seats, either on a bare ``Game`` or
through the wrapped AEC env (``majiang_env.env()``), and reads wins and points
from the finished games. :func:`evaluate` is its summary (the dict
``agents.ppo.evaluate`` has always returned).
"""
from __future__ import annotations

import time

import majiang_env
from majiang_env import Game
from majiang_env.rules import make_rules
from majiang_env.wrappers import make_agent

__all__ = ["play_rotation", "rotation_seeds", "evaluate", "SUMMARY_KEYS"]

SUMMARY_KEYS = ("hands", "games", "wins", "win_rate", "opponent_win_rate", "points_per_hand", "seconds")


def rotation_seeds(seed):
    """The default seeding of :func:`play_rotation`: game g is ``Game(seed=b)`` with
    ``b = seed * 1_000_003 + g`` and the agent of seat p is seeded ``b * 4 + p``.
    Returns ``seeds(g) -> (game seed, [agent seed of seat 0..3])``."""
    def seeds(g):
        base = seed * 1_000_003 + g
        return base, [base * 4 + p for p in range(4)]
    return seeds


def _play_game(game_seed, players, rules, driver, clock):
    """One whole game with ``players[seat]`` deciding; returns the finished ``Game``
    and the number of decisions. ``clock(seat, agent, obs)`` makes each call."""
    if driver == "game":
        game = Game(rules, seed=game_seed)
        n = 0
        while not game.done:
            p = game.current_player
            game.step(int(clock(p, players[p], {"observation": game.observe(p),
                                                "action_mask": game.legal_mask()})))
            n += 1
        return game, n
    env = majiang_env.env(rules=rules)
    env.reset(seed=game_seed)
    seat = {a: i for i, a in enumerate(env.possible_agents)}
    n = 0
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        env.step(int(clock(seat[agent], players[seat[agent]], obs)))
        n += 1
    return env.unwrapped.game, n


def play_rotation(policy, opponent="random", *, hands=None, games=None, seed=0, seeds=None, rules=None,
                  driver="game") -> dict:
    """Play whole games: ``policy`` in seat ``g % 4`` of game g, three ``opponent``
    agents in the other seats, until ``hands`` hands or ``games`` games have been
    played, whichever comes first (give at least one).

    ``policy`` is an agent (callable over the observation dict) or, like
    ``opponent``, a name (``"random"``, ``"greedy"``) or agent class, made afresh
    per game with the seed ``seeds(g)`` gives its seat (default
    :func:`rotation_seeds` ``(seed)``; ``seeds(g) -> (game seed, [agent seed of
    seat 0..3])``). ``driver``: ``"game"`` steps a bare ``Game``; ``"aec"`` plays
    through ``majiang_env.env()`` (same games and decisions for the same seeds).
    Wins (栄/模) and points are read from the finished games.

    Returns ``{"hands", "games", "wins", "win_rate", "opponent_win_rate",
    "points_per_hand", "seconds", "decisions", "opponent_wins",
    "opponent_points_per_hand", "policy_calls", "policy_seconds",
    "opponent_calls", "opponent_seconds"}``; the opponents' rates and points are
    per seat, ``seconds`` is the whole loop's wall time (unrounded) and the
    ``*_seconds`` the time spent inside each side's agent calls.
    """
    if hands is None and games is None:
        raise ValueError("give hands or games")
    if driver not in ("game", "aec"):
        raise ValueError(f"driver must be 'game' or 'aec', not {driver!r}")
    rules = make_rules(rules)
    seeds = seeds or rotation_seeds(seed)
    calls, spent = [0, 0], [0.0, 0.0]     # [opponents, policy]
    me = 0

    def clock(p, agent, obs):
        t = time.perf_counter()
        a = agent(obs)
        spent[p == me] += time.perf_counter() - t
        calls[p == me] += 1
        return a

    t0 = time.perf_counter()
    ng = nh = decisions = my_wins = opp_wins = points = opp_points = 0
    while (hands is None or nh < hands) and (games is None or ng < games):
        game_seed, agent_seeds = seeds(ng)
        me = ng % 4
        players = [make_agent(opponent, agent_seeds[p], rules) for p in range(4)]
        players[me] = make_agent(policy, agent_seeds[me], rules) if isinstance(policy, (str, type)) else policy
        game, n = _play_game(game_seed, players, rules, driver, clock)
        for h in range(rules.hands_per_game):
            for w in game.wins(h):
                my_wins += w["seat"] == me
                opp_wins += w["seat"] != me
        nh += rules.hands_per_game
        scores = [int(s) for s in game.scores]
        points += scores[me]
        opp_points += sum(scores) - scores[me]
        decisions += n
        ng += 1
    return {"hands": nh, "games": ng, "wins": int(my_wins), "win_rate": my_wins / nh,
            "opponent_win_rate": opp_wins / (3 * nh), "points_per_hand": points / nh,
            "seconds": time.perf_counter() - t0, "decisions": decisions, "opponent_wins": int(opp_wins),
            "opponent_points_per_hand": opp_points / (3 * nh), "policy_calls": calls[1],
            "policy_seconds": spent[1], "opponent_calls": calls[0], "opponent_seconds": spent[0]}


def evaluate(policy, opponent="random", hands=500, seed=0, rules=None):
    """Play whole games until at least ``hands`` hands: ``policy`` in seat ``g % 4`` of
    game g, three ``opponent`` agents in the other seats. ``policy`` is an agent
    (callable over the observation dict) or, like ``opponent``, a name
    (``"random"``, ``"greedy"``) or agent class, made afresh and seeded per game.
    Wins (栄/模) and points are read from the games (:func:`play_rotation`).

    Returns ``{"hands", "games", "wins", "win_rate", "opponent_win_rate",
    "points_per_hand", "seconds"}``; ``opponent_win_rate`` is the opponents'
    mean win rate per seat at the same tables.
    """
    r = play_rotation(policy, opponent, hands=hands, seed=seed, rules=rules)
    r["seconds"] = round(r["seconds"], 2)
    return {k: r[k] for k in SUMMARY_KEYS}
