"""Batched kernel: B games stepped by one call (``prange`` over games), and
whole self-play games with in-kernel agents. Rules live in ``step.py``, ``legal.py``,
``scoring.py`` and ``cards.py``."""
import numba
import numpy as np
from numba import njit, prange

from ..rules import R_CHOW_OFF, R_HANDS, R_KUIKAE
from .cards import U64, deal_squares, mix64
from .features import features
from .floatobs import FLOAT_SIZE, float_obs
from .jit import kernel_jit, rule_jit
from .layout import CLOSED, CUR, DELTAS, LEGAL, MAX_WINS, NLEGAL, PH_OVER, PHASE, SCORES, W_BASE, W_SEAT, WIN_W, WINS
from .legal import write_mask
from .observe import observe
from .players import AGENT_GREEDY, AGENT_RANDOM, agent_action, loop_action, new_workspace  # noqa: F401
from .step import advance, new_game, settle

# columns of selfplay's per-slot stats
ST_GAMES, ST_HANDS, ST_DECISIONS = 0, 1, 2
ST_POINTS = 3   # x4: final scores summed per seat
ST_WINS = 7     # x4: wins per seat
ST_SIZE = 11


@kernel_jit
def game_seed(seed, index):
    """Seed of game ``index`` of a batch run started from ``seed``."""
    return mix64(U64(seed) ^ mix64(U64(index) + U64(0x632BE59BD9B4E019)))


@kernel_jit
def agent_stream(seed, index):
    """Start of the in-kernel agents' random stream in game ``index`` of a run
    from ``seed`` (one stream per game serves all its seats)."""
    return mix64(game_seed(seed, index) ^ U64(0xA5A5A5A5))


@kernel_jit
def _restart(st, rules, wt, seed, index):
    deal_squares(st, game_seed(seed, index))
    new_game(st, rules)
    return settle(st, rules, wt)


def thread_workspaces():
    """One in-kernel agent workspace (``players.new_workspace``) per numba thread,
    stacked: thread t's is ``(wss[0][t], ..., wss[3][t])``, indexed in the loops
    themselves (a kernel function, compiled without reference counting, must not
    return views to a caller that counts them)."""
    n = numba.config.NUMBA_NUM_THREADS
    return tuple(np.zeros((n,) + a.shape, a.dtype) for a in new_workspace())


@rule_jit
def publish_seat(st, rules, dt, view, b, seat, work):
    """Write ``seat``'s view of slot b into ``view = (mask, obs, feat, player)``:
    its legal mask (zeros unless it is to act), the player to act, its
    observation, and (``feat`` has rows) the observation's float encoding, told
    by ``feat``'s width: ``float`` (FLOAT_SIZE columns, ``floatobs.py``) or
    ``features`` (FEAT_SIZE; ``dt``: the deficiency table it reads). ``work``:
    int64 scratch."""
    mask, obs, feat, player = view
    row = st[b]
    if row[CUR] == seat:
        write_mask(row, mask[b])
    else:
        for a in range(mask.shape[1]):
            mask[b, a] = 0
    player[b] = row[CUR]
    observe(row, rules, seat, obs[b])
    if feat.shape[0] > 0:
        if feat.shape[1] == FLOAT_SIZE:
            float_obs(obs[b], mask[b], work, feat[b])
        else:
            features(obs[b], mask[b], rules[R_CHOW_OFF], rules[R_KUIKAE], dt, work, feat[b])


@rule_jit
def publish(st, rules, dt, view, b, work):
    """Slot b's view for the player to act (see ``publish_seat``)."""
    publish_seat(st, rules, dt, view, b, st[b, CUR], work)


@kernel_jit
def publish_rows(st, rules, dt, view, rows, work):
    """``publish`` each slot of ``rows`` (after its row was written from outside a step)."""
    for i in range(rows.shape[0]):
        publish(st, rules, dt, view, rows[i], work)


@kernel_jit
def restart_slot(st, rules, wt, gidx, rngs, seed, b, g):
    """Slot b starts game g of the run: its deal, its agents' stream rngs[b, 0] and
    its sampling stream rngs[b, 1] (``sample_legal``)."""
    gidx[b] = g
    rngs[b, 0] = agent_stream(seed, g)
    rngs[b, 1] = mix64(agent_stream(seed, g) ^ U64(0x5A3B1E))
    return _restart(st[b], rules, wt, seed, g)


# Each batch call has a parallel form (``prange`` over the slots, on numba's
# threads) and a serial one: a parallel region must wake every thread and wait
# for the slowest, which for a few games, one thread or busy cores costs more
# than the games themselves. ``vector.VectorGame`` picks one.
#
# Inside a parallel loop the index is passed on as ``np.int64(i)``: numba types
# a ``prange`` index as int64 when it first reads the function but as uint64
# in the parallel region it builds, so every function called with the bare
# index would be compiled twice (minutes for the loops that play agents).
@njit(cache=True, parallel=True)
def batch_reset(st, rules, wt, dt, view, gidx, rngs, seed, wss):
    for i in prange(st.shape[0]):
        b = np.int64(i)
        restart_slot(st, rules, wt, gidx, rngs, seed, b, b)
        publish(st, rules, dt, view, b, wss[2][numba.get_thread_id()])


@kernel_jit
def batch_reset_serial(st, rules, wt, dt, view, gidx, rngs, seed, wss):
    for b in range(st.shape[0]):
        restart_slot(st, rules, wt, gidx, rngs, seed, b, b)
        publish(st, rules, dt, view, b, wss[2][0])


@kernel_jit
def first_illegal(st, actions):
    """The first slot whose action is not in its legal list (read from the state,
    which callers cannot write), or -1 when every action is legal."""
    for b in range(st.shape[0]):
        ok = False
        for i in range(st[b, NLEGAL]):
            if st[b, LEGAL + i] == actions[b]:
                ok = True
                break
        if not ok:
            return b
    return -1


@rule_jit
def _step_slot(st, rules, wt, dt, view, result, gidx, rngs, actions, seed, b, work):
    """Slot b: apply its action, write ``result = (rewards, done, closed)``; a
    finished game restarts as game gidx[b] + B (same-step autoreset)."""
    rewards, done, closed = result
    row = st[b]
    advance(row, rules, wt, actions[b])
    h = row[CLOSED]
    closed[b] = h >= 0
    for q in range(4):
        rewards[b, q] = row[DELTAS + h * 4 + q] if h >= 0 else 0
    done[b] = row[PHASE] == PH_OVER
    if done[b]:
        restart_slot(st, rules, wt, gidx, rngs, seed, b, gidx[b] + st.shape[0])
    publish(st, rules, dt, view, b, work)


@njit(cache=True, parallel=True)
def batch_step(st, rules, wt, dt, view, result, gidx, rngs, actions, seed, wss):
    for i in prange(st.shape[0]):
        b = np.int64(i)
        _step_slot(st, rules, wt, dt, view, result, gidx, rngs, actions, seed, b, wss[2][numba.get_thread_id()])


@kernel_jit
def batch_step_serial(st, rules, wt, dt, view, result, gidx, rngs, actions, seed, wss):
    for b in range(st.shape[0]):
        _step_slot(st, rules, wt, dt, view, result, gidx, rngs, actions, seed, b, wss[2][0])


@kernel_jit
def batch_loop_actions_serial(st, rules, rows, codes, rngs, dt, out, wss):
    """out[i] = the action loop agent codes[i] (``players.LOOP_AGENTS``) chooses for
    the seat to act in slot rows[i], drawing from that slot's agent stream."""
    obs, mask, work = wss[0][0], wss[1][0], wss[2][0]
    for i in range(rows.shape[0]):
        b = rows[i]
        out[i] = loop_action(st[b], rules, codes[i], rngs[b, 0:1], dt, obs, mask, work)


@njit(cache=True, parallel=True)
def batch_loop_actions(st, rules, rows, codes, rngs, dt, out, wss):
    for j in prange(rows.shape[0]):
        i = np.int64(j)
        t = numba.get_thread_id()
        b = rows[i]
        out[i] = loop_action(st[b], rules, codes[i], rngs[b, 0:1], dt, wss[0][t], wss[1][t], wss[2][t])


@kernel_jit
def batch_agent_actions_serial(st, rules, wt, rows, codes, params, rngs, dt, out, wss):
    """``batch_loop_actions`` for any in-kernel agent (parameters params[i]), the
    search agent included: the kernel that compiles it."""
    obs, mask, work, scratch = wss[0][0], wss[1][0], wss[2][0], wss[3][0]
    for i in range(rows.shape[0]):
        b = rows[i]
        out[i] = agent_action(st[b], rules, wt, codes[i], rngs[b, 0:1], dt, params[i], obs, mask, work, scratch)


@njit(cache=True, parallel=True)
def batch_agent_actions(st, rules, wt, rows, codes, params, rngs, dt, out, wss):
    for j in prange(rows.shape[0]):
        i = np.int64(j)
        t = numba.get_thread_id()
        obs, mask, work, scratch = wss[0][t], wss[1][t], wss[2][t], wss[3][t]
        b = rows[i]
        out[i] = agent_action(st[b], rules, wt, codes[i], rngs[b, 0:1], dt, params[i], obs, mask, work, scratch)


@rule_jit
def _unit(rng, i):
    """A uniform float in (0, 1) from the splitmix64 stream rng[i] (as ``cards.rand_below``)."""
    rng[i] = rng[i] + U64(0x9E3779B97F4A7C15)
    z = rng[i]
    z = (z ^ (z >> U64(30))) * U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> U64(27))) * U64(0x94D049BB133111EB)
    z = z ^ (z >> U64(31))
    return ((z >> U64(11)) + 0.5) * (1.0 / 9007199254740992.0)


@rule_jit
def _sample_row(st, rows, logits, rngs, out, i):
    """Sample row i (see ``sample_legal``); False if a legal action's logit is nan or +inf."""
    return _sample_slot(st, rows[i], logits, i, rngs, out)


@rule_jit
def _sample_slot(st, b, logits, i, rngs, out):
    """out[i] = an action of slot b drawn from logits[i] (see ``sample_legal``); False
    (nothing drawn) if a legal action's logit is nan or +inf."""
    row = st[b]
    n = row[NLEGAL]
    top = -np.inf
    for j in range(n):
        x = np.float64(logits[i, row[LEGAL + j]])
        if np.isnan(x) or x == np.inf:
            return False
        top = max(top, x)
    pick = row[LEGAL]
    if top > -np.inf:
        total = 0.0
        for j in range(n):
            w = np.exp(np.float64(logits[i, row[LEGAL + j]]) - top)
            if w > 0.0:
                total += w
                if _unit(rngs[b], 1) * total < w:
                    pick = row[LEGAL + j]
    out[i] = pick
    return True


@kernel_jit
def sample_legal(st, rows, logits, rngs, out):
    """out[i] = a legal action of slot rows[i] drawn from the softmax of logits[i]
    over its legal actions, by weighted reservoir sampling on the slot's sampling
    stream rngs[b, 1]: in id order, each legal action of weight
    w = exp(logit - the largest legal logit) > 0 replaces the pick with probability
    w / (the weights so far), one draw each, so action a is kept with probability
    w_a / (sum of w). (One exp per action; Gumbel-max needs two logs.) Logits of
    illegal actions are never read; -inf excludes a legal action unless every
    legal logit is -inf (then the first legal id). Returns the first i whose legal
    logits hold nan or +inf (its draws are not made), or -1."""
    for i in range(rows.shape[0]):
        if not _sample_row(st, rows, logits, rngs, out, i):
            return i
    return -1


@njit(cache=True, parallel=True)
def sample_legal_parallel(st, rows, logits, rngs, out):
    """``sample_legal`` over numba's threads (each row has its own stream)."""
    bad = np.full(rows.shape[0], False)
    for j in prange(rows.shape[0]):
        i = np.int64(j)
        bad[i] = not _sample_row(st, rows, logits, rngs, out, i)
    for i in range(rows.shape[0]):
        if bad[i]:
            return i
    return -1


@njit(cache=True, parallel=True)
def batch_sample_step(st, rules, wt, dt, view, result, gidx, rngs, logits, actions, seed, wss):
    """``sample_legal_parallel`` over every slot (rows 0..B-1) into ``actions``, then,
    only if every row sampled (none returned False), ``batch_step`` with those
    actions: one call instead of three (sample, legality check, step). Returns the
    first bad row (nothing stepped, its draws not made) or -1."""
    B = st.shape[0]
    bad = np.full(B, False)
    for i in prange(B):
        b = np.int64(i)
        bad[b] = not _sample_slot(st, b, logits, b, rngs, actions)
    for b in range(B):
        if bad[b]:
            return b
    for i in prange(B):
        b = np.int64(i)
        _step_slot(st, rules, wt, dt, view, result, gidx, rngs, actions, seed, b, wss[2][numba.get_thread_id()])
    return -1


@kernel_jit
def batch_sample_step_serial(st, rules, wt, dt, view, result, gidx, rngs, logits, actions, seed, wss):
    for b in range(st.shape[0]):
        if not _sample_slot(st, b, logits, b, rngs, actions):
            return b
    for b in range(st.shape[0]):
        _step_slot(st, rules, wt, dt, view, result, gidx, rngs, actions, seed, b, wss[2][0])
    return -1


@kernel_jit
def count_game(row, rules, stats):
    """Add a finished game to a slot's ``stats``: games, hands, final points x4, wins x4."""
    stats[ST_GAMES] += 1
    hands = rules[R_HANDS]
    stats[ST_HANDS] += hands
    for q in range(4):
        stats[ST_POINTS + q] += row[SCORES + q]
    for h in range(hands):
        for i in range(MAX_WINS):
            w = WINS + (h * MAX_WINS + i) * WIN_W
            if row[w + W_BASE] > 0:
                stats[ST_WINS + row[w + W_SEAT]] += 1


@kernel_jit
def _decide(row, rules, wt, action, stats):
    stats[ST_DECISIONS] += 1
    if advance(row, rules, wt, action) == 0:
        count_game(row, rules, stats)


@kernel_jit
def play_slot(row, rules, wt, seed, g0, step, end, agents, dt, rng, obs, mask, work, stats, started, b,
              action):
    """Slot b of a selfplay run plays games g0, g0 + step, ... below ``end`` (one
    agent stream per game, ``agent_stream``, serves all its seats; agents[seat]
    is an in-kernel agent code); ``started[b]`` counts the games it began and
    ``stats`` gets what ``count_game`` counts, plus the decisions. First applies
    ``action`` (>= 0: the decision Python made for the seat the slot waits for).
    Returns True when a seat whose agent is not a loop agent is to act (the slot
    waits), False when the slot's games are all played."""
    if action >= 0:
        _decide(row, rules, wt, action, stats)
    while True:
        if started[b] == 0 or row[PHASE] == PH_OVER:   # no game in progress: the next one
            g = g0 + started[b] * step
            if g >= end:
                return False
            started[b] += 1
            rng[0] = agent_stream(seed, g)
            if _restart(row, rules, wt, seed, g) == 0:
                count_game(row, rules, stats)
            continue
        code = agents[row[CUR]]
        if code != AGENT_RANDOM and code != AGENT_GREEDY:
            return True
        _decide(row, rules, wt, loop_action(row, rules, code, rng, dt, obs, mask, work), stats)


@njit(cache=True, parallel=True)
def selfplay_kernel(st, rules, wt, mask, seed, num_games, agents, stats, first, dt, rngs, started, actions,
                    waiting):
    """Play games first..first+num_games-1 (slot b plays first+b, first+b+B, ...)
    with the loop agents; stats[b] accumulates what ``play_slot`` counts. A slot
    whose seat to act has another agent stops with waiting[b] = True; call again
    with that seat's action in actions[b] (-1 elsewhere) to go on, with the same
    ``rngs`` (B, 1) and ``started`` (B,), zero at the first call of a run."""
    B = st.shape[0]
    for i in prange(B):
        b = np.int64(i)
        obs, _, work, _ = new_workspace()
        waiting[b] = play_slot(st[b], rules, wt, seed, first + b, B, first + num_games, agents, dt, rngs[b],
                               obs, mask[b], work, stats[b], started, b, actions[b])
