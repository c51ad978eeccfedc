"""Batch loops of ``SeatVectorEnv``: one learning seat per game, the other three
seats played inside the kernel (or, for an external opponent, handed back to
Python once per step for all waiting slots).

Per slot b: ``lseat[b]`` is the learner's seat in the slot's current game;
``codes[j]`` the opponent at seat ``lseat + 1 + j`` (a loop agent of
``players.py``, or ``EXTERNAL``: played by Python, a callable or an in-kernel
agent the loop does not play, such as search); ``acc[b]`` the
learner's point change not yet reported; ``status[b]`` what the slot waits
for (``LEARNER``, ``OPPONENT`` = an external opponent, ``OVER``).
``rngs[b] = (agent stream, sampling stream)`` restart with each game.

The learner's views (``view``: the current decision, ``final``: the last
decision of a finished game) are ``(mask, obs, feat, player, state)``:
``batch.publish_seat``'s four arrays and ``state``, the slot's full state
(``fullstate.full_state``) written beside the observation when it has rows
(``SeatVectorEnv(critic_state=True)``; zero rows: nothing is written).
"""
import numba
import numpy as np
from numba import njit, prange

from .batch import game_seed, publish, publish_seat, restart_slot
from .cards import U64, mix64
from .fullstate import full_state
from .jit import kernel_jit, rule_jit
from .layout import CLOSED, CUR, DELTAS, PH_OVER, PHASE
from .players import loop_action
from .step import advance

EXTERNAL = -1                      # an opponent the loop hands back to Python
LEARNER, OPPONENT, OVER = 0, 1, 2  # status of a slot


@kernel_jit
def learner_seat(seed, g, seat):
    """The learner's seat in game g: ``seat`` (0-3), or drawn from the game's seed (-1)."""
    if seat >= 0:
        return seat
    return np.int32(mix64(game_seed(seed, g) ^ U64(0x5EA7)) & U64(3))


@rule_jit
def _publish_learner(st, rules, dt, view, b, seat, work):
    """``batch.publish_seat`` of ``seat`` into a learner's view, and the slot's full
    state beside it when ``view[4]`` has rows."""
    publish_seat(st, rules, dt, (view[0], view[1], view[2], view[3]), b, seat, work)
    if view[4].shape[0] > 0:
        full_state(st[b], rules, view[4][b])


@rule_jit
def _add_closed(row, seat, acc, b):
    h = row[CLOSED]
    if h >= 0:
        acc[b] += row[DELTAS + h * 4 + seat]


@kernel_jit
def _play_opponents(st, rules, wt, dt, b, lseat, codes, rngs, acc, ws):
    """Let the loop agents among slot b's opponents act until the learner is to
    act, an external opponent is, or the game is over; return the slot's status."""
    row = st[b]
    obs, mask, work = ws[0], ws[1], ws[2]
    while row[PHASE] != PH_OVER:
        p = row[CUR]
        if p == lseat[b]:
            return LEARNER
        j = (p - lseat[b]) % 4 - 1
        if codes[j] == EXTERNAL:
            return OPPONENT
        a = loop_action(row, rules, codes[j], rngs[b, 0:1], dt, obs, mask, work)
        advance(row, rules, wt, a)
        _add_closed(row, lseat[b], acc, b)
    return OVER


@kernel_jit
def _start(st, rules, wt, b, g, seat, seed, lseat, gidx, rngs):
    restart_slot(st, rules, wt, gidx, rngs, seed, b, g)
    lseat[b] = learner_seat(seed, g, seat)


@kernel_jit
def _settle_slot(st, rules, wt, dt, view, final, b, seat, seed, lseat, gidx, rngs, codes, acc,
                 status, rewards, term, ws):
    """After the slot's last action: play the in-kernel opponents; a finished game
    reports its reward and final observation and restarts (same-step autoreset),
    and its opponents play on in the new game. ``term[b]`` (cleared by each env
    step) tells whether the slot has reported a game in this step: a game that
    ends after that ended before the learner's first decision in it, and is
    skipped with its points (in practice only with one hand per game that the
    first win closes; docs/guide.md). One call site of the opponents' loop, so their
    code is compiled into the step once."""
    while True:
        status[b] = _play_opponents(st, rules, wt, dt, b, lseat, codes, rngs, acc, ws)
        if status[b] != OVER:
            break
        if not term[b]:
            rewards[b] += acc[b]
            term[b] = True
            _publish_learner(st, rules, dt, final, b, lseat[b], ws[2])   # the learner's last view
        acc[b] = 0
        _start(st, rules, wt, b, gidx[b] + st.shape[0], seat, seed, lseat, gidx, rngs)
    if status[b] == LEARNER:
        _publish_learner(st, rules, dt, view, b, st[b, CUR], ws[2])
        if not term[b]:  # a finished game's reward went out with it; a new game's waits
            rewards[b] += acc[b]
            acc[b] = 0


ALL_ALLOWED, NOT_WAITING = -1, -2   # results of first_not_allowed besides an index


@kernel_jit
def first_not_allowed(status, waiting, mask, rows, actions):
    """Check actions[i] for slot rows[i] (the caller has checked that ``actions``
    has one entry per row): NOT_WAITING when some slot's status is not
    ``waiting`` (the slot does not wait for the actor the actions are from),
    else the first i whose action mask[rows[i]] (the published legal mask) does
    not allow, else ALL_ALLOWED."""
    for i in range(rows.shape[0]):
        if status[rows[i]] != waiting:
            return NOT_WAITING
    for i in range(rows.shape[0]):
        a = actions[i]
        if a < 0 or a >= mask.shape[1] or mask[rows[i], a] == 0:
            return i
    return ALL_ALLOWED


@njit(cache=True)
def step_outputs(term, rewards, scale, lseat, last_obs, last_scores):
    """New arrays of what ``SeatVectorEnv.step`` returns, made in one call (after
    a step, each numpy call in Python costs microseconds of cache misses):
    terminated, rewards x scale, truncated (all False), the learner's seats, an
    all-True mask, and for the finished slots their indices, the learner's last
    observations (rows of ``last_obs``), their final scores (``last_scores``,
    kept for finished slots, 0 elsewhere) and a copy of terminated (the mask of
    both ``final_obs`` and ``final_info``)."""
    B = term.shape[0]
    n = 0
    reward = np.empty(B, np.float64)
    for b in range(B):
        reward[b] = rewards[b] * scale
        n += term[b]
    done = np.empty(n, np.int64)
    obs = np.empty((n, last_obs.shape[1]), last_obs.dtype)
    scores = np.zeros((B, 4), np.int64)
    j = 0
    for b in range(B):
        if term[b]:
            done[j] = b
            obs[j] = last_obs[b]
            scores[b] = last_scores[b]
            j += 1
    return (term.copy(), reward, np.zeros(B, np.bool_), lseat.copy(), np.ones(B, np.bool_), done, obs, scores,
            term.copy())


@kernel_jit
def publish_rows(st, rules, dt, view, rows, wss):
    """``batch.publish`` for each slot of ``rows`` (an external opponent's view)."""
    work = wss[2][0]
    for i in range(rows.shape[0]):
        publish(st, rules, dt, view, rows[i], work)


@kernel_jit
def _reset_slot(st, rules, wt, dt, view, b, seat, seed, lseat, gidx, rngs, codes, acc, status, ws):
    """Start slot b's first game; skip each game that ends before the learner's
    first decision (see ``_settle_slot``)."""
    g = b
    while True:
        _start(st, rules, wt, b, g, seat, seed, lseat, gidx, rngs)
        acc[b] = 0
        status[b] = _play_opponents(st, rules, wt, dt, b, lseat, codes, rngs, acc, ws)
        if status[b] != OVER:
            break
        g += st.shape[0]
    if status[b] == LEARNER:
        _publish_learner(st, rules, dt, view, b, st[b, CUR], ws[2])


@njit(cache=True, parallel=True)
def seat_reset(st, rules, wt, dt, view, seat, seed, lseat, gidx, rngs, codes, acc, status, wss):
    for i in prange(st.shape[0]):
        b = np.int64(i)   # (see batch.py: a bare prange index compiles the callees twice)
        t = numba.get_thread_id()
        ws = (wss[0][t], wss[1][t], wss[2][t])
        _reset_slot(st, rules, wt, dt, view, b, seat, seed, lseat, gidx, rngs, codes, acc, status, ws)


@kernel_jit
def seat_reset_serial(st, rules, wt, dt, view, seat, seed, lseat, gidx, rngs, codes, acc, status, wss):
    ws = (wss[0][0], wss[1][0], wss[2][0])
    for b in range(st.shape[0]):
        _reset_slot(st, rules, wt, dt, view, b, seat, seed, lseat, gidx, rngs, codes, acc, status, ws)


@kernel_jit
def _step_slot(st, rules, wt, dt, view, final, b, a, seat, seed, lseat, gidx, rngs, codes, acc,
               status, rewards, term, ws):
    """Apply action a of whoever slot b waits for, then play on."""
    row = st[b]
    advance(row, rules, wt, a)
    _add_closed(row, lseat[b], acc, b)
    _settle_slot(st, rules, wt, dt, view, final, b, seat, seed, lseat, gidx, rngs, codes, acc,
                 status, rewards, term, ws)


@njit(cache=True, parallel=True)
def seat_step(st, rules, wt, dt, view, final, rows, actions, seat, seed, lseat, gidx, rngs, codes,
              acc, status, rewards, term, wss):
    """Apply actions[i] in slot rows[i] (each legal for the seat to act there)."""
    for j in prange(rows.shape[0]):
        i = np.int64(j)
        t = numba.get_thread_id()
        ws = (wss[0][t], wss[1][t], wss[2][t])
        _step_slot(st, rules, wt, dt, view, final, rows[i], actions[i], seat, seed, lseat, gidx, rngs,
                   codes, acc, status, rewards, term, ws)


@kernel_jit
def seat_step_serial(st, rules, wt, dt, view, final, rows, actions, seat, seed, lseat, gidx, rngs, codes,
                     acc, status, rewards, term, wss):
    ws = (wss[0][0], wss[1][0], wss[2][0])
    for i in range(rows.shape[0]):
        _step_slot(st, rules, wt, dt, view, final, rows[i], actions[i], seat, seed, lseat, gidx, rngs,
                   codes, acc, status, rewards, term, ws)
