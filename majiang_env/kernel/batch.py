"""Batched kernel: B games stepped by one call (``prange`` over games), and
whole self-play games with in-kernel agents. Rules live in ``core.py``."""
import numpy as np
from numba import njit, prange

from .core import U64, advance, deal_squares, mix64, new_game, rand_below, settle
from .layout import CUR, DELTAS, HAND, HNDEC, LEGAL, NWINS, PH_OVER, PHASE, SCORES, WINS, WIN_W
from .observe import OBS_SIZE, observe
from .agents import W_SIZE, greedy_action
from ..rules import R_CHOW_OFF, R_KUIKAE

AGENT_RANDOM = 0
AGENT_GREEDY = 1


@njit(cache=True)
def game_seed(seed, index):
    """Seed of game ``index`` of a batch run started from ``seed``."""
    return mix64(U64(seed) ^ mix64(U64(index) + U64(0x632BE59BD9B4E019)))


@njit(cache=True)
def _restart(st, rules, wt, mask, seed, index):
    deal_squares(st, game_seed(seed, index))
    new_game(st, rules)
    return settle(st, rules, wt, mask)


@njit(cache=True, parallel=True)
def batch_reset(st, rules, wt, mask, obs, player, gidx, seed):
    for b in prange(st.shape[0]):
        gidx[b] = b
        _restart(st[b], rules, wt, mask[b], seed, b)
        player[b] = st[b, CUR]
        observe(st[b], rules, st[b, CUR], obs[b])


@njit(cache=True, parallel=True)
def batch_step(st, rules, wt, mask, obs, player, rewards, done, gidx, actions, seed):
    B = st.shape[0]
    for b in prange(B):
        row = st[b]
        h = row[HAND]
        advance(row, rules, wt, mask[b], actions[b])
        for q in range(4):
            rewards[b, q] = 0
        if row[HAND] != h:
            for q in range(4):
                rewards[b, q] = row[DELTAS + h * 4 + q]
        done[b] = row[PHASE] == PH_OVER
        if done[b]:
            gidx[b] += B
            _restart(row, rules, wt, mask[b], seed, gidx[b])
        player[b] = row[CUR]
        observe(row, rules, row[CUR], obs[b])


@njit(cache=True, parallel=True)
def selfplay_kernel(st, rules, wt, mask, seed, num_games, agents, stats, first, dt):
    """Play games first..first+num_games-1 (slot b plays first+b, first+b+B, ...);
    stats[b] accumulates games, hands, decisions, points x4, wins x4. agents[seat]:
    AGENT_RANDOM or AGENT_GREEDY (``agents.greedy_action`` over ``dt``, the deficiency
    table, from the seat's observation); one rng stream per game serves all seats."""
    B = st.shape[0]
    for b in prange(B):
        row = st[b]
        m = mask[b]
        rng = np.zeros(1, np.uint64)
        obs = np.zeros(OBS_SIZE, np.int16)
        work = np.zeros(W_SIZE, np.int64)
        for k in range((num_games - b + B - 1) // B):
            g = first + b + k * B
            n = _restart(row, rules, wt, m, seed, g)
            rng[0] = mix64(game_seed(seed, g) ^ U64(0xA5A5A5A5))
            while n > 0:
                p = row[CUR]
                if agents[p] == AGENT_GREEDY:
                    observe(row, rules, p, obs)
                    a = greedy_action(obs, m, rng, dt, rules[R_CHOW_OFF], rules[R_KUIKAE], work)
                else:
                    a = row[LEGAL + rand_below(rng, 0, n)]  # uniform over the legal list
                n = advance(row, rules, wt, m, a)
                stats[b, 2] += 1
            stats[b, 0] += 1
            hands = rules[0]
            stats[b, 1] += hands
            for q in range(4):
                stats[b, 3 + q] += row[SCORES + q]
            for h in range(hands):
                for i in range(3):
                    w = WINS + (h * 3 + i) * WIN_W
                    if row[w + 3] > 0:
                        stats[b, 7 + row[w]] += 1
