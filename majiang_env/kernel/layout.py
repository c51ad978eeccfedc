"""State layout of one game: a flat int32 row, so B games are an int32[B, SIZE] array.

Every field is a block of consecutive int32 at a fixed offset; the kernel
indexes ``st[OFFSET + i]``. Shapes are listed with their meaning.
"""
_fields = []
_off = 0


def _f(name, *shape):
    global _off
    n = 1
    for s in shape:
        n *= s
    _fields.append((name, _off, shape))
    off = _off
    _off += n
    return off


MAX_HANDS = 4
MELD_W = 7  # fields per meld
MAX_LEGAL = 32
SCRATCH_W = 144
MAX_DEC = 180  # decisions per hand (16 exchange + 76 turns x 2 phases = 168)

HAND = _f("hand index", 1)
START = _f("start seat of the hand", 1)
PHASE = _f("phase: 0 exchange, 1 take, 2 discard, 3 game over", 1)
CUR = _f("seat to act, -1 when over", 1)
SLOT = _f("turn slot 0..75 (lap = slot//4 + 1)", 1)
NWINS = _f("wins in this hand", 1)
EXCH = _f("exchange decisions made in this hand (0..16)", 1)
TOOK = _f("take of this turn: 0 none, 1 draw, 2 pick-up", 1)
PICK_KIND = _f("kind picked up this turn, -1", 1)
DRAWN = _f("card drawn this turn, -1", 1)
WIN_PENDING = _f("the win of this turn, scored before the turn ends: seat, from, card, "
                  "extra kind", 4)
NLEGAL = _f("number of legal actions at this decision", 1)
LEGAL = _f("legal action ids at this decision, ascending (at most 14 打 + 3 暗 + 4 明 + 模)", MAX_LEGAL)
SCORES = _f("cumulative scores", 4)
DELTAS = _f("point change per hand and seat", MAX_HANDS, 4)
HNDEC = _f("decisions made in each hand", MAX_HANDS)
SQUARES = _f("card ids of each hand's squares, in taking order", MAX_HANDS, 4, 36)
SQPOS = _f("cards taken from each square", 4)
HMASK = _f("bitmask of copies held per kind (concealed hand)", 4, 36)
HCNT = _f("count per kind (concealed hand)", 4, 36)
KEYS = _f("base-5 key per seat and face colour of the concealed hand", 4, 4)
NCOL = _f("concealed card count per seat and face colour", 4, 4)
NHAND = _f("concealed card count", 4)
SIDE = _f("side cards", 4, 4)
NSIDE = _f("number of side cards", 4)
MELDS = _f("melds: type, kind, shown card 0, shown card 1, stand-in (暗: shown card 2), "
           "claimed discard (刻/順, else -1), kan card in own river (暗/明, else -1)", 4, 4, MELD_W)
NMELD = _f("number of melds", 4)
RIVER = _f("river card ids", 4, 18)
RSLOT = _f("slot at which each river card was placed", 4, 18)
RFLAG = _f("bits 0-3 picked up by seat, 4-7 won on by seat, 8 kan card", 4, 18)
NRIVER = _f("river length", 4)
RKIND = _f("count of each kind in own river (furiten)", 4, 36)
LAST = _f("slot of each seat's previous turn, -1", 4)
RETIRED = _f("1 once the seat has won this hand", 4)
WINS = _f("win log per hand: seat, from, card, base, 3 x (points, meld mask), "
          "4 x (meld type, kind), pair kind", MAX_HANDS, 3, 19)
SCRATCH = _f("work space of the scoring functions (no meaning between calls)", SCRATCH_W)
DECLOG = _f("decision log per hand: seat, action", MAX_HANDS, MAX_DEC, 2)
SIZE = _off

WIN_W = 19
MT_PUNG, MT_CHOW, MT_ANKAN, MT_MINKAN = 1, 2, 3, 4
PH_EXCHANGE, PH_TAKE, PH_DISCARD, PH_OVER = 0, 1, 2, 3
FIELDS = tuple(_fields)
