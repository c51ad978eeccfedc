"""Applying actions: the phase machine of a game (docs/rules.md §2-§8).

Set-up (``new_game``, ``start_hand``: the deal of 13 / 17 cards, §3), one
function per action (``apply_exchange`` 変, ``apply_draw`` 引, ``apply_pickup``
刻 / 順, ``apply_ron`` 栄, ``apply_tsumo`` 模, ``apply_discard`` 打,
``apply_ankan`` 暗, ``apply_minkan`` 明), the end of a turn and of a hand
(``end_turn``, ``end_hand``, §4.3, §6, §8), and the entry points of one
decision that the Python faces and the batch loops call (``advance``,
``settle``, ``step``).

``st`` is one row of the layout in ``layout.py``, ``rules`` the array of
``RuleConfig.to_array()``, ``wt`` the winning-shape table of ``tables.py``. No
bounds are checked here: callers (``game.py``, ``vector.py``) validate every
action before it gets here. Every function is compiled by ``kernel_jit``
(cached) and allocates nothing.
"""
from ..rules import (
    A_ANKAN,
    A_CHOW,
    A_DISCARD,
    A_DRAW,
    A_EXCHANGE,
    A_MINKAN,
    A_PUNG,
    A_RON,
    A_TSUMO,
    NUM_KINDS,
    R_AUTO_FORCED,
    R_CHOW_OFF,
    R_DISCARD_DRAWN,
    R_EXCHANGE,
    R_HANDS,
    R_WINS_TO_CLOSE,
)
from .cards import add_card, remove_lowest, take_from_square
from .jit import kernel_jit, rule_jit
from .layout import (
    CLOSED,
    CUR,
    DECLOG,
    DRAWN,
    EXCH,
    GAME_RESET,
    HAND,
    HAND_RESET,
    HNDEC,
    LAST,
    LEGAL,
    M_CARD0,
    M_CARD1,
    M_CLAIMED,
    M_KAN,
    M_KIND,
    M_STANDIN,
    M_TYPE,
    MAX_DEC,
    MELD_W,
    MELDS,
    MT_ANKAN,
    MT_CHOW,
    MT_MINKAN,
    MT_PUNG,
    NMELD,
    NRIVER,
    NSIDE,
    NUM_EXCHANGE,
    NUM_SLOTS,
    NWINS,
    PH_DISCARD,
    PH_EXCHANGE,
    PH_OVER,
    PH_TAKE,
    PHASE,
    PICK_KIND,
    RETIRED,
    RF_KAN,
    RF_PICKED,
    RF_WON,
    RFLAG,
    RIVER,
    RIVER_LEN,
    RKIND,
    RSLOT,
    SIDE,
    SLOT,
    START,
    TOOK,
    TOOK_DRAW,
    TOOK_PICKUP,
    TURN_RESET,
    WIN_PENDING,
    WP_CARD,
    WP_EXTRA,
    WP_FROM,
    WP_SEAT,
)
from .legal import legal, write_mask
from .scoring import record_win


# ---- hand set-up (the resets are generated from the lifetimes in layout.py) ------
@rule_jit
def reset_fields(st, table):
    """Set every field of ``table`` (rows of offset, length, value) to its initial value."""
    for f in range(table.shape[0]):
        v = table[f, 2]
        for i in range(table[f, 0], table[f, 0] + table[f, 1]):
            st[i] = v


@kernel_jit
def start_hand(st, rules, h):
    """Reset the hand's fields, deal 13 cards (17 with 変) to each seat from its square
    (docs/rules.md §2, §3)."""
    reset_fields(st, HAND_RESET)
    st[HAND] = h
    st[START] = h % 4
    ncards = 17 if rules[R_EXCHANGE] else 13
    for p in range(4):
        for _ in range(ncards):
            add_card(st, p, take_from_square(st, p))
    st[CUR] = st[START]
    st[PHASE] = PH_EXCHANGE if rules[R_EXCHANGE] else PH_TAKE


@kernel_jit
def new_game(st, rules):
    """Start hand 0 of a game whose squares are already in st[SQUARES]."""
    reset_fields(st, GAME_RESET)
    start_hand(st, rules, 0)


# ---- rivers and melds -----------------------------------------------------------
@rule_jit
def to_river(st, p, card, kan):
    """Card id ``card`` goes to the end of p's river (a kan card when ``kan``)."""
    n = st[NRIVER + p]
    st[RIVER + p * RIVER_LEN + n] = card
    st[RSLOT + p * RIVER_LEN + n] = st[SLOT]
    st[RFLAG + p * RIVER_LEN + n] = RF_KAN if kan else 0
    st[NRIVER + p] = n + 1
    st[RKIND + p * NUM_KINDS + (card >> 2)] += 1


@rule_jit
def add_meld(st, p, t, k, c0, c1, c2, claimed, kan):
    """A new meld of p (fields M_* of layout.py)."""
    m = MELDS + (p * 4 + st[NMELD + p]) * MELD_W
    st[m + M_TYPE] = t
    st[m + M_KIND] = k
    st[m + M_CARD0] = c0
    st[m + M_CARD1] = c1
    st[m + M_STANDIN] = c2
    st[m + M_CLAIMED] = claimed
    st[m + M_KAN] = kan
    st[NMELD + p] += 1


# ---- the end of a turn and of a hand (docs/rules.md §4.3, §6, §8) -------------------
@kernel_jit
def end_hand(st, rules):
    """Close the hand (reported in st[CLOSED]); start the next one or end the game."""
    st[CLOSED] = st[HAND]
    h = st[HAND] + 1
    if h >= rules[R_HANDS]:
        st[PHASE] = PH_OVER
        st[CUR] = -1
        st[HAND] = h
        return
    start_hand(st, rules, h)


@rule_jit
def end_turn(st, rules):
    """The drawn card joins the hand; the next seat that has not won takes its
    turn, or the hand closes (docs/rules.md §6, §8: slots run out, or enough wins)."""
    p = st[CUR]
    if st[DRAWN] >= 0 and not rules[R_DISCARD_DRAWN]:
        add_card(st, p, st[DRAWN])
    reset_fields(st, TURN_RESET)
    st[LAST + p] = st[SLOT]
    s = st[SLOT] + 1
    while s < NUM_SLOTS and st[RETIRED + (st[START] + s) % 4]:
        s += 1
    if s >= NUM_SLOTS or st[NWINS] >= rules[R_WINS_TO_CLOSE]:
        end_hand(st, rules)
        return
    st[SLOT] = s
    st[CUR] = (st[START] + s) % 4
    st[PHASE] = PH_TAKE


@rule_jit
def log_decision(st, p, action):
    h = st[HAND]
    nd = st[HNDEC + h]
    if nd < MAX_DEC:
        o = DECLOG + (h * MAX_DEC + nd) * 2
        st[o] = p
        st[o + 1] = action
    st[HNDEC + h] = nd + 1


# ---- one function per action -----------------------------------------------------
@rule_jit
def apply_exchange(st, p, k):
    """変 (docs/rules.md §3): set aside one card of kind k; after 4 each, the next seat;
    after 16, the take phase."""
    c = remove_lowest(st, p, k)
    st[SIDE + p * 4 + st[NSIDE + p]] = c
    st[NSIDE + p] += 1
    e = st[EXCH] + 1
    st[EXCH] = e
    if e == NUM_EXCHANGE:
        st[PHASE] = PH_TAKE
        st[CUR] = st[START]
    elif e % 4 == 0:
        st[CUR] = (p + 1) % 4


@rule_jit
def apply_draw(st, rules, p):
    """引 (docs/rules.md §4.1): take the next card of the own square as the drawn card."""
    c = take_from_square(st, p)
    st[DRAWN] = c
    st[TOOK] = TOOK_DRAW
    if rules[R_DISCARD_DRAWN]:
        add_card(st, p, c)
    st[PHASE] = PH_DISCARD


@rule_jit
def claimed_seat(rules, p, action):
    """The seat whose claimable discard a 刻 / 順 / 栄 action takes (docs/rules.md §2, §5)."""
    if action < A_CHOW:
        return (p + action - A_PUNG + 1) % 4
    if action < A_RON:
        return (p + rules[R_CHOW_OFF]) % 4
    return (p + action - A_RON + 1) % 4


@rule_jit
def apply_pickup(st, p, action, ri):
    """刻 / 順: show the claimed discard (river entry ri) with two hand cards and a
    stand-in from the own square (docs/rules.md §4.1)."""
    card = st[RIVER + ri]
    k = card >> 2
    st[RFLAG + ri] |= RF_PICKED << p
    if action < A_CHOW:
        c0 = remove_lowest(st, p, k)
        c1 = remove_lowest(st, p, k)
        add_meld(st, p, MT_PUNG, k, c0, c1, take_from_square(st, p), card, -1)
    else:
        low = k - (action - A_CHOW)
        c0 = remove_lowest(st, p, low if low != k else low + 1)  # the two run kinds
        c1 = remove_lowest(st, p, low + 2 if low + 2 != k else low + 1)  # other than k
        add_meld(st, p, MT_CHOW, low, c0, c1, take_from_square(st, p), card, -1)
    st[TOOK] = TOOK_PICKUP
    st[PICK_KIND] = k
    st[PHASE] = PH_DISCARD


@rule_jit
def set_win_pending(st, p, frm, card, extra):
    st[WIN_PENDING + WP_SEAT] = p
    st[WIN_PENDING + WP_FROM] = frm
    st[WIN_PENDING + WP_CARD] = card
    st[WIN_PENDING + WP_EXTRA] = extra


@rule_jit
def apply_ron(st, p, q, ri):
    """栄 (docs/rules.md §4.1) on seat q's discard (river entry ri): marked, left
    pending for scoring."""
    card = st[RIVER + ri]
    st[RFLAG + ri] |= RF_WON << p
    set_win_pending(st, p, q, card, card >> 2)


@rule_jit
def apply_tsumo(st, rules, p):
    """模 (docs/rules.md §4.2) on the drawn card: left pending for scoring."""
    set_win_pending(st, p, -1, st[DRAWN], -1 if rules[R_DISCARD_DRAWN] else st[DRAWN] >> 2)


@rule_jit
def apply_discard(st, p, k):
    """打 (docs/rules.md §4.2): the lowest copy of kind k goes to the own river."""
    to_river(st, p, remove_lowest(st, p, k), False)


@rule_jit
def apply_ankan(st, p, k):
    """暗: the four k become a meld with three shown cards; the fourth is the kan
    card, placed in the own river (docs/rules.md §4.2)."""
    c0 = remove_lowest(st, p, k)
    c1 = remove_lowest(st, p, k)
    c2 = remove_lowest(st, p, k)
    c3 = remove_lowest(st, p, k)
    add_meld(st, p, MT_ANKAN, k, c1, c2, c3, -1, c0)
    to_river(st, p, c0, True)


@rule_jit
def apply_minkan(st, p, k):
    """明: the own 刻 of kind k becomes a kan; the card from hand is the kan card,
    placed in the own river (docs/rules.md §4.2)."""
    c = remove_lowest(st, p, k)
    for i in range(st[NMELD + p]):
        m = MELDS + (p * 4 + i) * MELD_W
        if st[m + M_TYPE] == MT_PUNG and st[m + M_KIND] == k:
            st[m + M_TYPE] = MT_MINKAN
            st[m + M_KAN] = c
    to_river(st, p, c, True)


@kernel_jit
def apply(st, rules, action):
    """Apply a legal action of the player to act (no checks). Returns True for 栄 /
    模: the win is left in st[WIN_PENDING] and ``play`` scores it and ends the
    turn. Keeping the scoring search out makes this function call no separately
    compiled code that needs reference counting."""
    p = st[CUR]
    log_decision(st, p, action)
    if action >= A_EXCHANGE:
        apply_exchange(st, p, action - A_EXCHANGE)
        return False
    if action == A_DRAW:
        apply_draw(st, rules, p)
        return False
    if action > A_DRAW:  # take from a river
        q = claimed_seat(rules, p, action)
        ri = q * RIVER_LEN + st[NRIVER + q] - 1
        if action >= A_RON:
            apply_ron(st, p, q, ri)
            return True
        apply_pickup(st, p, action, ri)
        return False
    if action == A_TSUMO:
        apply_tsumo(st, rules, p)
        return True
    if action < A_ANKAN:
        apply_discard(st, p, action - A_DISCARD)
    elif action < A_MINKAN:
        apply_ankan(st, p, action - A_ANKAN)
    elif action < A_TSUMO:
        apply_minkan(st, p, action - A_MINKAN)
    end_turn(st, rules)  # 打 / 暗 / 明 / pass
    return False


# ---- one decision: the entry points of the Python faces and batch loops --------
# A decision runs ``apply`` and ``legal.legal_shapes`` (with their rule functions
# inlined, ``rule_jit``), which use no reference counting; the rare win scoring
# and require_yaku search are called only when needed.
@kernel_jit
def play(st, rules, action):
    """Apply ``action`` of the player to act, scoring a win (``scoring.record_win``)
    and ending the turn."""
    if apply(st, rules, action):
        record_win(st, rules)
        end_turn(st, rules)


@kernel_jit
def settle(st, rules, wt):
    """Compute the legal actions now, applying forced actions when auto_forced."""
    while True:
        n = legal(st, rules, wt)
        if n != 1 or not rules[R_AUTO_FORCED]:
            return n
        play(st, rules, st[LEGAL])


@kernel_jit
def advance(st, rules, wt, action):
    """Apply ``action``, then (when auto_forced) every forced action; return the legal
    count. st[CLOSED] tells which hand closed during the call (-1: none)."""
    st[CLOSED] = -1
    play(st, rules, action)
    return settle(st, rules, wt)


@kernel_jit
def step(st, rules, wt, action, mask):
    """``Game.step``'s kernel call: ``advance`` with ``action``, then write the new
    action mask; returns the legal count."""
    n = advance(st, rules, wt, action)
    write_mask(st, mask)
    return n
