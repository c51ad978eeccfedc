"""OpenSpiel's IS-MCTS as an agent of ``majiang_env.arena`` (needs ``pip install "majiang_env[openspiel]"``).

    from majiang_env import arena
    from majiang_env.agents.ismcts import ISMCTSAgent
    res = arena.run([ISMCTSAgent(seed=0, simulations=100), "greedy", "greedy", "greedy"], deals=50,
                    rules={"hands_per_game": 1})

:class:`ISMCTSAgent` runs ``open_spiel.python.algorithms.ismcts.ISMCTSBot``
(Cowling, Powley and Whitehouse's information set MCTS) on the OpenSpiel game
``python_majiang`` (``majiang_env.envs.openspiel``). An arena agent with an
``act_world`` method is given, at each of its decisions, a *world*:
``Game.sample_hidden(seat, s)`` of the real game: every card the seat cannot
see redealt from the unseen cards, no deal seed, the history that would tell
the true cards withheld. The agent
wraps a copy of it in an OpenSpiel state (``state_from_game``) and lets the bot
search; the bot draws its own worlds from that state with
``resample_from_infostate`` (``Game.sample_hidden`` again), which depends only
on what the seat sees. So nothing the bot reads can hold a true hidden card.
Outside the arena, call ``agent.act_world(game.sample_hidden(seat, s), seat)``.

Leaves are evaluated by :class:`GreedyRolloutEvaluator` (default): every
seat plays the greedy policy from the leaf to the end of the current hand, in
the kernel (the rollout of the project's search agent,
``majiang_env/engine/kernel/search.py``), about 1 ms a rollout; returns are
points (the game's scale), so ``uct_c`` is in points. ``evaluator="random"``
is OpenSpiel's ``RandomRolloutEvaluator`` (uniformly random play to the end
of the game, in Python through pyspiel: slow and uninformative here).
"""
from __future__ import annotations

import numpy as np

try:
    from open_spiel.python.algorithms import ismcts, mcts
except ImportError as e:
    raise ImportError("majiang_env.agents.ismcts needs OpenSpiel: pip install \"majiang_env[openspiel]\"") from e

from majiang_env.engine import tables
from majiang_env.engine.checks import as_int, as_seat, is_int, show
from majiang_env.engine.kernel.layout import StateView
from majiang_env.engine.kernel.players import new_workspace
from majiang_env.engine.kernel.search import greedy_move, rollout
from majiang_env.engine.rules import R_AUTO_FORCED, R_HANDS, make_rules
from majiang_env.envs import openspiel as mos

__all__ = ["ISMCTSAgent", "GreedyRolloutEvaluator"]

FINAL_POLICIES = {"max_visits": ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
                  "max_value": ismcts.ISMCTSFinalPolicyType.MAX_VALUE,
                  "visits": ismcts.ISMCTSFinalPolicyType.NORMALIZED_VISITED_COUNT}


class GreedyRolloutEvaluator(mcts.Evaluator):
    """An OpenSpiel evaluator for ``python_majiang`` states: ``evaluate(state)`` is the
    mean of the four seats' scores after ``n_rollouts`` greedy playouts from ``state``
    to the end of its current hand (the scores so far at a terminal state);
    ``prior(state)`` is uniform over the legal actions."""

    def __init__(self, n_rollouts: int = 1, seed=None):
        self.n_rollouts = as_int("n_rollouts", n_rollouts, 1, 10_000)
        self._rng = np.array([np.random.default_rng(seed).integers(2 ** 63)], np.uint64)
        self._wt, self._dt = tables.win_table(), tables.deficiency_table()
        self._obs, self._mask, self._work, _ = new_workspace()
        self._rules = {}          # RuleConfig -> its rules array, the game cut at the current hand below

    def evaluate(self, state):
        g = state.engine
        if g is None or g.done:
            return np.asarray(state.returns(), np.float64)
        rr = self._rules.get(g.rules)
        if rr is None:
            rr = self._rules[g.rules] = g.rules.to_array(True)
        rr = rr.copy()
        rr[R_HANDS] = g.hand_index + 1        # the rollout ends with the current hand
        rr[R_AUTO_FORCED] = 1
        row = np.array(g.state)
        total = np.zeros(4, np.float64)
        for _ in range(self.n_rollouts):
            sim = row.copy()
            a = greedy_move(sim, rr, self._rng, self._dt, self._obs, self._mask, self._work)
            rollout(sim, rr, self._wt, self._rng, self._dt, self._obs, self._mask, self._work, a)
            total += StateView(sim).scores
        return total / self.n_rollouts

    def prior(self, state):
        legal = state.legal_actions(state.current_player())
        return [(a, 1.0 / len(legal)) for a in legal]


class ISMCTSAgent:
    """OpenSpiel's IS-MCTS as an arena agent (module docstring).

    ``simulations``: ISMCTS simulations per decision (one leaf evaluation each);
    ``uct_c``: the UCT exploration constant, in points; ``evaluator``: ``"greedy"``
    (:class:`GreedyRolloutEvaluator`), ``"random"`` (OpenSpiel's
    ``RandomRolloutEvaluator``) or an ``mcts.Evaluator``; ``rollouts``: playouts per
    evaluation; ``final_policy``: ``"max_visits"`` (default), ``"max_value"`` or
    ``"visits"`` (sampled in proportion); ``seed``: the bot's, the evaluator's and the
    worlds' random streams. ``rules`` is accepted as every registry factory's is (the
    rules are read from each world). Decisions with one legal action return it at once.
    """

    def __init__(self, seed=None, rules=None, simulations: int = 100, uct_c: float = 40.0, evaluator="greedy",
                 rollouts: int = 1, final_policy: str = "max_visits", name: str | None = None):
        if seed is not None and not is_int(seed):
            raise ValueError(f"seed must be an int or None, got {show(seed)}")
        make_rules(rules)
        self.simulations = as_int("simulations", simulations, 1, 10 ** 7)
        if isinstance(uct_c, bool) or not isinstance(uct_c, (int, float)) or not 0 <= uct_c < float("inf"):
            raise ValueError(f"uct_c must be a number >= 0 (points), got {show(uct_c)}")
        if final_policy not in FINAL_POLICIES:
            raise ValueError(f"final_policy must be one of {sorted(FINAL_POLICIES)}, got {show(final_policy)}")
        rollouts = as_int("rollouts", rollouts, 1, 10_000)
        seq = np.random.SeedSequence(None if seed is None else int(seed) % 2 ** 64)
        s_bot, s_eval, s_world = (int(x.generate_state(1)[0]) for x in seq.spawn(3))
        if isinstance(evaluator, str) and evaluator == "greedy":
            evaluator = GreedyRolloutEvaluator(rollouts, s_eval)
        elif isinstance(evaluator, str) and evaluator == "random":
            evaluator = mcts.RandomRolloutEvaluator(rollouts, np.random.RandomState(s_eval))
        elif not isinstance(evaluator, mcts.Evaluator):
            raise ValueError(f"evaluator must be 'greedy', 'random' or an mcts.Evaluator, got {show(evaluator, 80)}")
        self.evaluator, self.uct_c, self.final_policy = evaluator, float(uct_c), final_policy
        self.name = name or f"ismcts:{self.simulations}"
        self._bot_rng = np.random.RandomState(s_bot)
        self._world_rng = np.random.default_rng(s_world)
        self._bots = {}           # RuleConfig -> (OpenSpiel game, ISMCTSBot)

    def bot(self, rules=None):
        """(the ``python_majiang`` game, its ``ISMCTSBot``) for ``rules``, made once."""
        rules = make_rules(rules)
        if rules not in self._bots:
            game = mos.load_game(rules)
            bot = ismcts.ISMCTSBot(game, self.evaluator, self.uct_c, self.simulations,
                                   random_state=self._bot_rng, final_policy_type=FINAL_POLICIES[self.final_policy])
            draw = self._world_rng.random
            bot.set_resampler(lambda state, player: state.resample_from_infostate(player, draw))
            self._bots[rules] = (game, bot)
        return self._bots[rules]

    def act_world(self, world, seat) -> int:
        """The action for ``seat`` (to act) in ``world``, a ``Game`` that ``seat``
        cannot tell from the real one (``Game.sample_hidden(seat, s)``)."""
        seat = as_seat(seat)
        if not world.sampled:
            raise ValueError("ISMCTSAgent.act_world needs a world from Game.sample_hidden(seat, seed), "
                             "not the real game (it holds the hidden cards)")
        if world.done or world.current_player != seat:
            raise ValueError(f"seat {seat} is not to act in this world ({world!r})")
        legal = world.legal_actions()
        if len(legal) == 1:
            return legal[0]
        game, bot = self.bot(world.rules)
        return int(bot.step(mos.state_from_game(world, game)))

    def __repr__(self):
        return (f"ISMCTSAgent(simulations={self.simulations}, uct_c={self.uct_c:g}, "
                f"evaluator={type(self.evaluator).__name__}, final_policy={self.final_policy!r})")
