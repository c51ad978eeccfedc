"""State layout of one game: a flat int32 row, so B games are an int32[B, SIZE] array.

Every field is a block of consecutive int32 at a fixed offset; the kernel
indexes ``st[OFFSET + i]``. Each field declares its shape, its meaning and its
**lifetime**, and the resets are generated from those declarations, so a new
field cannot be forgotten by a reset:

=========  ==================================================================
DEAL       written before ``core.new_game`` (the dealt squares); never reset
GAME       set to its initial value by ``core.new_game``
HAND       also reset by ``core.start_hand`` at the start of every hand
TURN       also reset by ``core.end_turn`` at the end of every turn
=========  ==================================================================

Every field's initial value is 0 unless it declares another (-1 for "none").
The named sub-records (meld fields ``M_*``, win-record fields ``W_*``, river
flag bits ``RF_*``) are offsets inside one entry of a field.
"""
import numpy as np

DEAL, GAME, HAND_LIFE, TURN = "deal", "game", "hand", "turn"
_fields = []
_off = 0


def _f(name, life, *shape, init=0):
    global _off
    n = 1
    for s in shape:
        n *= s
    _fields.append((name, _off, shape, life, init))
    off = _off
    _off += n
    return off


MAX_HANDS = 4
MAX_LEGAL = 32
NUM_EXCHANGE = 16   # 変 decisions per hand: 4 per seat
NUM_SLOTS = 76      # turn slots of a hand, 19 laps of 4
LAST_LAP_SLOT = 72  # slots from here on are the last lap (docs/rules.md §6)
MAX_DEC = 180       # decisions per hand (16 exchange + 76 turns x 2 phases = 168)
RIVER_LEN = 18      # a river holds at most 18 cards

# ---- melds: one entry of MELDS ------------------------------------------------
M_TYPE = 0      # MT_* below
M_KIND = 1      # the kind of a 刻 / kan, the lowest kind of a 順
M_CARD0 = 2     # the shown cards (暗: three of the four)
M_CARD1 = 3
M_STANDIN = 4   # 刻 / 順 / 明: the unseen stand-in taken from the own square; 暗: the third shown card
M_CLAIMED = 5   # 刻 / 順: the claimed discard's card id; -1 otherwise
M_KAN = 6       # 暗 / 明: the kan card placed in the own river; -1 otherwise
MELD_W = 7
MT_PUNG, MT_CHOW, MT_ANKAN, MT_MINKAN = 1, 2, 3, 4
MT_CONCEALED_TRIPLET, MT_CONCEALED_RUN = 5, 6   # only in win records: melds read from the hand

# ---- wins: one entry of WINS (19 ints) -----------------------------------------
W_SEAT = 0      # the winner
W_FROM = 1      # the seat whose discard was won on (栄), -1 for 模
W_CARD = 2      # the winning card id
W_BASE = 3      # the base points (the best reading's pattern total, at least 1); 0 = no win
W_PATTERNS = 4  # 3 x (points, meld bit mask) of the best reading; points 0 = unused
W_MELDS = 10    # 4 x (meld type MT_*, kind) of that reading
W_PAIR = 18     # the pair's kind
WIN_W = 19
MAX_WINS = 3    # per hand

# ---- river flags: one entry of RFLAG ---------------------------------------------
RF_PICKED = 1   # bit (RF_PICKED << seat): picked up by seat (刻 / 順)
RF_WON = 16     # bit (RF_WON << seat): won on by seat (栄)
RF_KAN = 256    # the card is a kan card (placed by 暗 / 明)

# ---- phases --------------------------------------------------------------------
PH_EXCHANGE, PH_TAKE, PH_DISCARD, PH_OVER = 0, 1, 2, 3
TOOK_NONE, TOOK_DRAW, TOOK_PICKUP = 0, 1, 2

# ---- the fields ----------------------------------------------------------------
HAND = _f("hand index (0-based; hands_per_game once the game is over)", GAME, 1)
START = _f("start seat of the hand", HAND_LIFE, 1)
PHASE = _f("phase PH_*", HAND_LIFE, 1)
CUR = _f("seat to act, -1 when over", HAND_LIFE, 1)
SLOT = _f("turn slot 0..NUM_SLOTS-1 (lap = slot // 4 + 1)", HAND_LIFE, 1)
NWINS = _f("wins in this hand", HAND_LIFE, 1)
EXCH = _f("exchange decisions made in this hand (0..NUM_EXCHANGE)", HAND_LIFE, 1)
CLOSED = _f("the hand that closed during the last kernel step, -1 if none", GAME, 1, init=-1)
TOOK = _f("take of this turn TOOK_*", TURN, 1)
PICK_KIND = _f("kind picked up this turn, -1", TURN, 1, init=-1)
DRAWN = _f("card drawn this turn, -1", TURN, 1, init=-1)
WIN_PENDING = _f("the win of this turn, scored before the turn ends: seat, from, card, "
                  "extra kind", TURN, 4)
NLEGAL = _f("number of legal actions at this decision", HAND_LIFE, 1)
LEGAL = _f("legal action ids at this decision, ascending (at most 14 打 + 3 暗 + 4 明 + 模)",
           HAND_LIFE, MAX_LEGAL)
SCORES = _f("cumulative scores", GAME, 4)
DELTAS = _f("point change per hand and seat", GAME, MAX_HANDS, 4)
HNDEC = _f("decisions made in each hand", GAME, MAX_HANDS)
SQUARES = _f("card ids of each hand's squares, in taking order", DEAL, MAX_HANDS, 4, 36)
SQPOS = _f("cards taken from each square", HAND_LIFE, 4)
HMASK = _f("bitmask of copies held per kind (concealed hand)", HAND_LIFE, 4, 36)
HCNT = _f("count per kind (concealed hand)", HAND_LIFE, 4, 36)
KEYS = _f("base-5 key per seat and face colour of the concealed hand", HAND_LIFE, 4, 4)
NCOL = _f("concealed card count per seat and face colour", HAND_LIFE, 4, 4)
NHAND = _f("concealed card count", HAND_LIFE, 4)
SIDE = _f("side cards", HAND_LIFE, 4, 4)
NSIDE = _f("number of side cards", HAND_LIFE, 4)
MELDS = _f("melds, MELD_W fields M_* each", HAND_LIFE, 4, 4, MELD_W)
NMELD = _f("number of melds", HAND_LIFE, 4)
RIVER = _f("river card ids", HAND_LIFE, 4, RIVER_LEN)
RSLOT = _f("slot at which each river card was placed", HAND_LIFE, 4, RIVER_LEN)
RFLAG = _f("river flags RF_*", HAND_LIFE, 4, RIVER_LEN)
NRIVER = _f("river length", HAND_LIFE, 4)
RKIND = _f("count of each kind in own river (furiten)", HAND_LIFE, 4, 36)
LAST = _f("slot of each seat's previous turn, -1", HAND_LIFE, 4, init=-1)
RETIRED = _f("1 once the seat has won this hand", HAND_LIFE, 4)
WINS = _f("win log per hand, WIN_W fields W_* each", GAME, MAX_HANDS, MAX_WINS, WIN_W)
SCRATCH = _f("work space of the scoring functions (no meaning between calls)", GAME, 144)
DECLOG = _f("decision log per hand: seat, action", GAME, MAX_HANDS, MAX_DEC, 2)
SIZE = _off
FIELDS = tuple(_fields)  # (name, offset, shape, lifetime, initial value)

# ---- scratch: the scoring search's work space, as slices of SCRATCH ----------------
SC_CNT = SCRATCH          # 36 counts of the hand being read
SC_WORK = SC_CNT + 36     # 36 counts left while melds are taken out
SC_MTYPE = SC_WORK + 36   # 4 meld types of the reading (0 run, 1 triplet)
SC_MFACE = SC_MTYPE + 4   # 4 meld face colours
SC_MVAL = SC_MFACE + 4    # 4 meld numbers (a run: its lowest)
SC_MKAN = SC_MVAL + 4     # 4 kan flags
SC_OTYPE = SC_MKAN + 4    # 4 meld types MT_* for the win record
SC_OKIND = SC_OTYPE + 4   # 4 meld kinds for the win record
SC_TMP = SC_OKIND + 4     # 6: the patterns of one reading
SC_VAL = SC_TMP + 6       # 16 points per meld subset
SC_VS = SC_VAL + 16       # 4 sorted values of one subset
SC_OUT = SC_VS + 4        # WIN_W - 4: the best reading, as stored in a win record
SC_END = SC_OUT + WIN_W - W_PATTERNS
assert SC_END <= SCRATCH + 144


def _ranges(lives):
    """(offset, length, initial value) of every field with a lifetime in ``lives``."""
    rows = []
    for _, off, shape, life, init in sorted(_fields, key=lambda f: f[1]):
        if life not in lives:
            continue
        n = int(np.prod(shape))
        if rows and rows[-1][0] + rows[-1][1] == off and rows[-1][2] == init:
            rows[-1][1] += n          # adjacent fields with the same value: one run
        else:
            rows.append([off, n, init])
    return np.array(rows, np.int32).reshape(-1, 3)


GAME_RESET = _ranges((GAME, HAND_LIFE, TURN))  # what core.new_game sets
HAND_RESET = _ranges((HAND_LIFE, TURN))        # what core.start_hand sets
TURN_RESET = _ranges((TURN,))                  # what core.end_turn sets
