"""Paired gains over greedy: what avoiding deal-ins with the other hands in view is worth, and what search gains.

Players are measured on duplicate deals against the yardstick of the ladder
(``majiang_env.arena``; its ``mean_ci`` gives the intervals): deal d is
``Game(seed=game_seed(seed, d))``; the player under test sits in each seat in
turn, the other three seats are greedy; its points are compared with a
greedy player's in the same seat of the same deal, and the 95% t interval is
taken over deals. Every seat keeps its own greedy tie-break stream, the same
in the test game and in the all-greedy game, so the two games are identical
up to the first decision where the player under test leaves greedy's action:
a player that rarely deviates gets a tight interval. The players read the real
game state (some of them the hidden hands), which no arena agent can, so this
script plays its games itself.

Players under test (each plays greedy, ``kernel/greedy.py``, except where said):

``oracle``      **reads the other seats' concealed hands** (the real game
                state; no agent may do this), at its discards (打): among the
                discards that leave greedy's deficiency, it avoids one that a
                seat still in the hand could win on (栄) at its next turn,
                keeping greedy's choice when that is safe, else the safe one
                with the most acceptance. A lower bound on what the hidden
                hands are worth: it uses them for this one purpose.
``oracle+1``    the same, also allowing a discard one deficiency step worse.
``hidden1``     **reads the other seats' concealed hands too, all but the last
``hidden2``     card each took from its square and still holds (the last two
                cards)**: how fast the oracle's gain falls as its reading gets
                less than perfect. After a draw, the last such card is the
                drawn card; after a pick-up, an older draw. The hidden cards
                are weighed as draws, without replacement, from the cards the
                player cannot see less the other hands' known cards
                (:func:`win_chance`); no account is taken of how the seat
                played them. At its discards it takes, among those that leave
                greedy's deficiency, the one with the fewest expected deal-ins
                (the chances summed over the seats still playing), ties going
                to the most acceptance; it leaves greedy's discard only when
                that one's expected deal-ins are strictly fewer. A drawn card
                joins the hand only after the turn's discard, so a seat has
                never discarded with its last drawn card in its hand; only
                the choice of its last discard, made with the card beside the
                hand (greedy weighs it), may hint at it, and these players do
                not use that.
``hidden1+1``   the same, also allowing a discard one deficiency step worse when
``hidden2+1``   its expected deal-ins are fewer than those of the discard the
                player would take otherwise by more than ``--step-risk`` (default
                ``STEP_RISK``): what ``oracle+1`` is to ``oracle``, with an
                imperfect reading. The oracle's chances are 0 or 1, these are
                not, so the threshold matters; research/README.md gives a sweep.
``latest``      an honest rule, reading only its observation, at its discards.
                A seat never waits on its own latest discard: its hand with
                that card is the hand it held before discarding, a win
                (a 模, or a 栄 after a pick-up) that it would have declared, as
                greedy players always do. So that card is safe against that
                seat. Among the discards that leave greedy's deficiency *and*
                acceptance (greedy's own tie, which it breaks at random) it
                takes the one safe against the most seats still playing.
``tenpai-value`` an honest rule, reading only its observation, at its discards:
                where greedy's discard leaves a waiting hand (deficiency 1),
                it takes, among the discards that do, the one whose wait has
                the most expected points, the sum over winning kinds of
                unseen copies x the win's base (greedy maximizes the unseen
                copies alone), when that beats greedy's own choice.
``search``      the in-kernel search agent (``kernel/search.py``; parameters
                from ``--search``, e.g. ``samples=32,confidence=0.5``, as in
                ``benchmarks/arena.py``) at every decision of its seat. It gets
                a copy of its seat's greedy stream, so that stream advances as
                a greedy player's would and the other seats stay paired.

    python research/paired_gain.py --deals 400 --write-results
    python research/paired_gain.py --deals 300 --players search --write-results
    python research/paired_gain.py --deals 400 --players hidden1+1 hidden2+1 --step-risk 0.02 --write-results

It also prints figures of the all-greedy games: discards per seat and hand,
how many of them a seat still playing could win on, how many of those had a
safe alternative of the same deficiency (read from the real hands, like the
oracle), wins and their points, and the points a seat pays for deal-ins.
``--write-results`` writes the run to research/results/paired_gain.json, from
which ``benchmarks/render_docs.py`` renders the tables of research/README.md.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from numba import njit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "benchmarks")]

import results_io  # noqa: E402

from majiang_env import Game, RuleConfig  # noqa: E402
from majiang_env.agents import parse_agent  # noqa: E402
from majiang_env.arena import mean_ci  # noqa: E402
from majiang_env.engine import tables  # noqa: E402
from majiang_env.engine.kernel import cards, scoring  # noqa: E402
from majiang_env.engine.kernel import layout as L  # noqa: E402
from majiang_env.engine.kernel.greedy import W_ACC, W_UNSEEN, W_VAL, greedy_action, new_work, option_values  # noqa: E402
from majiang_env.engine.kernel.observe import OBS_DRAWN, OBS_HAND, OBS_MELD, OBS_RIVER, OBS_SCALAR, S_RETIRED, S_SEAT  # noqa: E402
from majiang_env.engine.kernel.players import agent_params, new_workspace  # noqa: E402
from majiang_env.engine.kernel.search import remove_card, search_action  # noqa: E402
from majiang_env.engine.rules import A_DISCARD, R_CHOW_OFF, R_KUIKAE  # noqa: E402
from majiang_env.engine.vector import game_seed  # noqa: E402

PLAYERS = ("oracle", "oracle+1", "hidden1", "hidden2", "hidden1+1", "hidden2+1", "latest", "tenpai-value",
           "search")
HIDDEN = {"hidden1": (1, 0), "hidden2": (2, 0), "hidden1+1": (1, 1), "hidden2+1": (2, 1)}   # (cards hidden, slack)
STEP_RISK = 0.05    # hidden*+1, default of --step-risk: how many fewer expected deal-ins a step must offer
DISCARDS = range(A_DISCARD, A_DISCARD + 36)


class Tables:
    def __init__(self, rules, search=None, step_risk=STEP_RISK):
        self.rules = rules
        self.step_risk = step_risk
        self.dt = tables.deficiency_table()
        self.wt = tables.win_table()
        self.w = new_work()
        array = rules.to_array()
        self.chow_off, self.kuikae = int(array[R_CHOW_OFF]), int(array[R_KUIKAE])
        self.params = agent_params("search", search or {})
        self.space = new_workspace()
        self.row = np.zeros(L.SIZE, np.int32)    # tenpai-value: the observer's own hand, for scoring
        self.win = np.zeros(L.WIN_W, np.int32)


def deals_in(game, t, p, kind) -> bool:
    """Could a seat other than p, still in the hand, win on a discard of ``kind`` (true hands)?"""
    st = game.state  # the real state: this is the oracle's cheat
    return any(q != p and not st[L.RETIRED + q] and scoring.is_win(st, t.wt, q, kind) for q in range(4))


def hide_recent(row, q, k) -> int:
    """Take out of seat q's concealed hand in ``row`` the last ``k`` cards it took from its square
    that it still holds (draws; before any, the 変 and dealt cards); return how many were taken out."""
    square = L.SQUARES + row[L.HAND] * 144 + q * 36
    hidden = 0
    for i in range(row[L.SQPOS + q] - 1, -1, -1):
        if hidden == k:
            break
        card = row[square + i]
        if row[L.HMASK + q * 36 + (card >> 2)] >> (card & 3) & 1:
            remove_card(row, q, card)       # this very copy: the lowest may be an older card
            hidden += 1
    return hidden


# The compiled helpers are not cached: tests load this script under another module name, and
# numba's cache then fails to load what the other name stored.
@njit
def _add_kind(row, q, x):
    """Add a copy of kind x that q does not hold to q's hand; return its card id."""
    held = row[L.HMASK + q * 36 + x]
    copy = 0
    while held >> copy & 1:
        copy += 1
    cards.add_card(row, q, x * 4 + copy)
    return x * 4 + copy


@njit
def _chance_one(row, wt, q, kind, pool):
    """(weight of the pool's kinds that let q win on ``kind`` once added, the pool's size)."""
    wins = total = 0
    for x in range(36):
        if pool[x] > 0:
            total += pool[x]
            card = _add_kind(row, q, x)
            if scoring.is_win(row, wt, q, kind):
                wins += pool[x]
            remove_card(row, q, card)
    return wins, total


@njit
def win_chance(row, wt, q, kind, pool, hidden):
    """Chance that seat q wins on ``kind`` at its next turn when its concealed hand in ``row`` lacks
    ``hidden`` (0-2) cards, each drawn without replacement from ``pool`` (copies per kind)."""
    if hidden == 0:
        return 1.0 if scoring.is_win(row, wt, q, kind) else 0.0
    if hidden == 1:
        wins, total = _chance_one(row, wt, q, kind, pool)
        return wins / total if total else 0.0
    chance = 0.0
    total = 0
    for x in range(36):
        if pool[x] > 0:
            total += pool[x]
            card = _add_kind(row, q, x)
            pool[x] -= 1
            wins, rest = _chance_one(row, wt, q, kind, pool)
            pool[x] += 1
            remove_card(row, q, card)
            chance += pool[x] * (wins / rest if rest else 0.0)
    return chance / total if total else 0.0


def expected_deal_ins(game, t, p, k, kinds):
    """{kind: the expected number of seats still playing that could win on a discard of it}, for a
    player that reads the other hands but the last ``k`` cards of each (t.w holds p's unseen counts)."""
    row = game.state.copy()   # the real state: a partial cheat
    hidden = {q: hide_recent(row, q, k) for q in range(4) if q != p}
    pool = t.w[W_UNSEEN:W_UNSEEN + 36].astype(np.int64)    # a copy
    for q in hidden:
        pool -= row[L.HCNT + q * 36:L.HCNT + q * 36 + 36]
    pool = np.maximum(pool, 0)
    playing = [q for q in hidden if not row[L.RETIRED + q]]
    return {y: sum(win_chance(row, t.wt, q, y, pool, hidden[q]) for q in playing) for y in kinds}


def latest_safe(obs, kind) -> int:
    """Seats still playing against which ``kind`` is safe by the latest-discard rule (observation only)."""
    n = 0
    for r in range(1, 4):
        if obs[OBS_SCALAR + S_RETIRED + r]:
            n += 1
            continue
        river = obs[OBS_RIVER + r * 18:OBS_RIVER + (r + 1) * 18]
        filled = np.flatnonzero(river)
        n += bool(filled.size) and river[filled[-1]] - 1 == kind
    return n


def own_hand_row(t, obs) -> int:
    """Fill t.row with what the observer holds (concealed hand and drawn card, shown melds), read
    from its observation; return its seat."""
    row, p = t.row, int(obs[OBS_SCALAR + S_SEAT])
    row[:] = 0
    counts = obs[OBS_HAND:OBS_HAND + 36] + obs[OBS_DRAWN:OBS_DRAWN + 36]
    for kind in np.flatnonzero(counts):
        for copy in range(counts[kind]):      # which copies does not matter for scoring
            cards.add_card(row, p, kind * 4 + copy)
    for i in range(4):
        meld_type, kind_plus_1 = obs[OBS_MELD + i * 3:OBS_MELD + i * 3 + 2]   # own melds: r = 0
        if meld_type > 0:
            place = L.MELDS + (p * 4 + row[L.NMELD + p]) * L.MELD_W
            row[place + L.M_TYPE], row[place + L.M_KIND] = meld_type, kind_plus_1 - 1
            row[L.NMELD + p] += 1
    return p


def wait_value(t, p, kind) -> int:
    """Expected points of the wait left by discarding ``kind`` from t.row: the sum over winning
    kinds of unseen copies x base (t.w holds the unseen counts of option_values)."""
    row = t.row
    card = cards.remove_lowest(row, p, kind)
    value = sum(int(t.w[W_UNSEEN + x]) * max(scoring.score_win(row, p, x, t.win), 1)
                for x in range(36) if t.w[W_UNSEEN + x] > 0 and scoring.is_win(row, t.wt, p, x))
    cards.add_card(row, p, card)
    return value


def choose(player, game, t, p, obs, mask, a):
    """The player's discard-phase action, given greedy's choice ``a``."""
    option_values(obs, mask, t.dt, t.chow_off, t.kuikae, t.w)
    w = t.w
    va, acc = w[W_VAL + a], w[W_ACC + a]
    if player == "tenpai-value":
        if va != 1:
            return a
        seat = own_hand_row(t, obs)
        value = {b: wait_value(t, seat, b - A_DISCARD) for b in DISCARDS if mask[b] and w[W_VAL + b] == 1}
        best = max(value, key=lambda b: (value[b], -b))
        return best if value[best] > value[a] else a
    if player in HIDDEN:
        k, slack = HIDDEN[player]
        near = [b for b in DISCARDS if mask[b] and w[W_VAL + b] <= va + slack]
        risk = expected_deal_ins(game, t, p, k, [b - A_DISCARD for b in near])

        def safest(step):
            return min((b for b in near if w[W_VAL + b] == va + step),
                       key=lambda b: (risk[b - A_DISCARD], -w[W_ACC + b], b), default=None)
        best = safest(0)
        if not risk[best - A_DISCARD] < risk[a - A_DISCARD] - 1e-9:     # not by rounding
            best = a
        worse = safest(1) if slack else None
        if worse is not None and risk[worse - A_DISCARD] < risk[best - A_DISCARD] - t.step_risk - 1e-9:
            best = worse
        return best
    if player == "latest":
        tied = [b for b in DISCARDS if mask[b] and w[W_VAL + b] == va and w[W_ACC + b] == acc]
        best = max(latest_safe(obs, b - A_DISCARD) for b in tied)
        if latest_safe(obs, a - A_DISCARD) == best:
            return a
        return min(b for b in tied if latest_safe(obs, b - A_DISCARD) == best)
    if not deals_in(game, t, p, a - A_DISCARD):
        return a
    slack = 1 if player == "oracle+1" else 0
    safe = [b for b in DISCARDS if mask[b] and w[W_VAL + b] <= va + slack and not deals_in(game, t, p, b - A_DISCARD)]
    if not safe:
        return a
    return max(safe, key=lambda b: (-w[W_VAL + b], w[W_ACC + b], -b))


def is_discard(game, a) -> bool:
    return game.phase == "discard" and A_DISCARD <= a < A_DISCARD + 36


def discard_stats(game, t, p, obs, mask, a, stats):
    """Count greedy's discard ``a``: [discards, ones that deal in, ones of those with a safe
    alternative of the same deficiency] (reads the real hands, like the oracle)."""
    stats[0] += 1
    if deals_in(game, t, p, a - A_DISCARD):
        stats[1] += 1
        option_values(obs, mask, t.dt, t.chow_off, t.kuikae, t.w)
        va = t.w[W_VAL + a]
        stats[2] += any(mask[b] and t.w[W_VAL + b] == va and not deals_in(game, t, p, b - A_DISCARD)
                        for b in DISCARDS)


def play(seed, t, special=-1, player=None, stats=None):
    """Final scores of one game; seat ``special`` plays ``player``, every other seat greedy.
    ``stats`` (only for the all-greedy game, ``special=-1``): discard counts
    (:func:`discard_stats`), then wins, their points (3 x base) and the points paid
    for 栄 (deal-ins), summed over the game."""
    if stats is not None and special >= 0:
        raise ValueError("stats are counted in the all-greedy game only")
    game = Game(t.rules, seed=seed)
    rngs = [np.array([(seed * 4 + s + 1) % 2 ** 64], np.uint64) for s in range(4)]
    while not game.done:
        p = game.current_player
        obs, mask = game.observe(p), game.legal_mask()
        own = rngs[p].copy()
        a = greedy_action(obs, mask, rngs[p], t.dt, t.chow_off, t.kuikae, t.w)
        if p == special and player == "search":
            a = search_action(game.state.copy(), game.rules.to_array(game.auto_forced), t.wt, own, t.dt, t.params,
                                  *t.space)
        elif p == special and is_discard(game, a):
            a = choose(player, game, t, p, obs, mask, a)
        elif stats is not None and is_discard(game, a):
            discard_stats(game, t, p, obs, mask, a, stats)
        game.step(a)
    if stats is not None:
        for h in range(t.rules.hands_per_game):
            for win in game.wins(h):
                stats[3] += 1
                stats[4] += 3 * win["base"]
                stats[5] += 3 * win["base"] if win["from"] is not None else 0
    return game.scores


def gains(t, players, deals, seed):
    """({player: gain per deal in points per hand}, all-greedy stats as in :func:`play`)."""
    gain = {x: np.zeros(deals) for x in players}
    stats = np.zeros(6, np.int64)
    for d in range(deals):
        game = game_seed(seed, d)
        base = play(game, t, stats=stats)
        for x in players:
            for s in range(4):
                gain[x][d] += (play(game, t, s, x)[s] - base[s]) / (4 * t.rules.hands_per_game)
    return gain, stats


def at_least(lo):
    def parse(text):
        value = int(text)
        if value < lo:
            raise argparse.ArgumentTypeError(f"must be at least {lo}, got {value}")
        return value
    return parse


def non_negative(text):
    value = float(text)
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text}")
    return value


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--deals", type=at_least(2), default=200, help="at least 2, for an interval")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--players", nargs="+", default=list(PLAYERS[:-1]), choices=PLAYERS,
                    help="default: all but 'search', which takes about 2 s per deal")
    ap.add_argument("--search", default="", metavar="OPTIONS",
                    help="the search agent's parameters, e.g. samples=32,confidence=0.5 (default: its defaults)")
    ap.add_argument("--step-risk", type=non_negative, default=STEP_RISK, metavar="R",
                    help=f"hidden1+1 / hidden2+1 give up a deficiency step only for more than R fewer "
                         f"expected deal-ins (default {STEP_RISK})")
    results_io.add_argument(ap, "paired_gain", results_io.RESEARCH_RESULTS)
    args = ap.parse_args(argv)
    rules = RuleConfig()
    try:
        spec = parse_agent(f"search:{args.search}" if args.search else "search")
    except ValueError as e:
        ap.error(f"--search: {e}")
    t = Tables(rules, spec[1] or None, args.step_risk)
    t0 = time.perf_counter()
    gain, stats = gains(t, args.players, args.deals, args.seed)
    secs = time.perf_counter() - t0
    settings = f"; search: {args.search or 'defaults'}" if "search" in args.players else ""
    settings += f"; step risk {args.step_risk:g}" if {"hidden1+1", "hidden2+1"} & set(args.players) else ""
    print(f"{args.deals} deals x 4 seats, seed {args.seed}, default rules{settings}; {secs:.0f} s; load average "
          f"{os.getloadavg()[0]:.1f}")
    seat_hands = 4 * rules.hands_per_game * args.deals
    n, dealins, avoidable, wins, points, ron_points = stats
    print(f"all-greedy games: a seat discards {n / seat_hands:.1f} times per hand, {dealins / seat_hands:.3f} of "
          f"them a seat still playing could win on, {avoidable / max(dealins, 1):.0%} of those "
          f"with a safe discard of the same deficiency; wins {wins / seat_hands:.3f} per seat and hand at "
          f"{points / max(wins, 1):.1f} points each; deal-ins cost a seat {ron_points / seat_hands:.1f} points "
          "per hand")
    print(f"{'player':12} gain over greedy in its seats, points/hand [95% CI over deals]")
    rows = []
    for x in args.players:
        c = mean_ci(gain[x])
        print(f"{x:12} {c['mean']:+.1f} [{c['ci'][0]:+.1f}, {c['ci'][1]:+.1f}]")
        row = {"row": x, "deals": args.deals, "gain": {"mean": c["mean"], "ci": list(c["ci"])}}
        if x == "search":       # the settings the figure depends on
            row["variant"] = f"search: {args.search or 'defaults'}"
        elif x in ("hidden1+1", "hidden2+1"):
            row["variant"] = f"step risk {args.step_risk:g}"
        rows.append(row)
    if args.write_results:
        all_greedy = {"discards_per_hand": n / seat_hands, "could_be_won_on_per_hand": dealins / seat_hands,
                      "with_safe_alternative": avoidable / max(dealins, 1), "win_rate": wins / seat_hands,
                      "points_per_win": points / max(wins, 1), "deal_in_points_per_hand": ron_points / seat_hands}
        run = results_io.run_record(results_io.command_line(argv, __file__), rows, seed=args.seed,
                                    seconds=round(secs), all_greedy=all_greedy)
        results_io.report(results_io.write(args.write_results, run))


if __name__ == "__main__":
    main()
