"""How training measures a policy: the duplicate-deal arena (``majiang_env.arena``),
the policy in one seat against three baseline seats."""
from __future__ import annotations

import math

from majiang_env import arena
from majiang_env.engine.rules import make_rules

from .network import PolicyNet, PPOAgent

__all__ = ["evaluate", "SEATINGS"]

SEATINGS = 4     # the rotations of [policy, opponent, opponent, opponent]: each deal is 4 games


def _agent(spec, seed, rules):
    """An arena agent spec from what :func:`evaluate` takes."""
    if isinstance(spec, PolicyNet):
        return PPOAgent(spec, rules=rules)
    return spec            # any agent spec: the arena resolves it (majiang_env.agents)


def _name(spec) -> str:
    if isinstance(spec, str):
        return spec
    return getattr(spec, "name", None) or getattr(spec, "__name__", None) or type(spec).__name__


def evaluate(policy, opponent="random", hands=500, seed=0, rules=None, *, deals=None, baseline=True,
             num_envs=None) -> dict:
    """``policy`` in one seat against three ``opponent`` seats in the duplicate-deal
    arena (``majiang_env.arena.run``): every deal is played in the 4 rotations of
    ``[policy, opponent, opponent, opponent]``, so the policy holds each seat once
    per deal and the luck of the cards cancels; figures are means over deals with
    a 95% Student-t interval over deals (``arena.mean_ci``).

    ``policy``: a :class:`PolicyNet` (played by argmax), an agent (an object with
    ``act_batch(obs, mask)``, such as :class:`PPOAgent`, or a callable over the
    observation dict), or a name. ``opponent`` likewise: an in-kernel name
    (``"random"``, ``"greedy"``, ``"search:samples=8"``), ``"pretrained"``, an
    agent or an agent class. Names are made with ``seed``. ``deals``: deals
    0..deals-1 of the run from ``seed`` (default: enough for at least ``hands``
    of the policy's hands, and at least 2, so that there is an interval).
    ``baseline``: also play the opponent in all four seats of every deal, for
    the ``baseline_*`` and ``gain`` figures.

    Returns ``{"opponent", "deals", "games", "hands", "wins", "points_per_hand",
    "points_ci", "win_rate", "win_rate_ci", "deal_in_rate",
    "opponent_points_per_hand", "opponent_win_rate", "seconds"}``: ``games`` and
    ``hands`` are the policy's, ``points_ci`` and ``win_rate_ci`` are ``[low,
    high]``, the ``opponent_*`` figures are per opponent seat at the same
    tables, ``seconds`` the arena's wall time. With ``baseline``, also
    ``baseline_points_per_hand`` and ``baseline_win_rate`` (the opponent in the
    policy's seats when it holds all four) and ``gain_points_per_hand``,
    ``gain_ci`` (policy minus that baseline, per deal).
    """
    rules = make_rules(rules)
    if deals is None:
        deals = max(2, math.ceil(hands / (SEATINGS * rules.hands_per_game)))
    opp = _name(opponent)
    res = arena.run([_agent(policy, seed, rules)] + [_agent(opponent, seed, rules)] * 3, deals=deals, seed=seed,
                    rules=rules, names=["policy", opp, opp, opp], reference=opp, baseline=baseline,
                    num_envs=num_envs)
    figs = {f["agent"]: f for f in res.figures()}
    me, other = figs["policy"], figs[opp]
    out = {"opponent": opp, "deals": deals, "games": deals * SEATINGS, "hands": me["hands"],
           "wins": round(me["win_rate"]["mean"] * me["hands"]),
           "points_per_hand": me["points_per_hand"]["mean"], "points_ci": me["points_per_hand"]["ci"],
           "win_rate": me["win_rate"]["mean"], "win_rate_ci": me["win_rate"]["ci"],
           "deal_in_rate": me["deal_in_rate"]["mean"],
           "opponent_points_per_hand": other["points_per_hand"]["mean"],
           "opponent_win_rate": other["win_rate"]["mean"], "seconds": round(res.seconds, 2)}
    if baseline:
        gain = me["gain"]
        out.update(baseline_points_per_hand=out["points_per_hand"] - gain["points_per_hand"]["mean"],
                   baseline_win_rate=out["win_rate"] - gain["win_rate"]["mean"],
                   gain_points_per_hand=gain["points_per_hand"]["mean"], gain_ci=gain["points_per_hand"]["ci"])
    return out
