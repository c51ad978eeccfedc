"""Rules of 馬将: ``RuleConfig``, card and action ids (docs/rules.md, docs/api.md).

Everything the kernel needs to know about a rule set is packed by
``RuleConfig.to_array()`` into a small int32 array (indices ``R_*``).
Fields tagged [prov] in docs/rules.md are provisional choices of this project.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

import numpy as np

# ---- cards (docs/rules.md §1) --------------------------------------------
# kind = face * 9 + (number - 1), card_id = kind * 4 + copy; named once, used by the kernel too
NUM_KINDS = 36                      # kinds: 4 face colours x numbers 1-9
NUM_CARDS = 144                     # card ids: 4 copies of each kind
CARDS_PER_FACE = NUM_CARDS // 4     # 36: card_id // CARDS_PER_FACE is the face colour
NUM_SEATS = 4
SQUARE_SIZE = NUM_CARDS // NUM_SEATS  # 36 cards in each seat's square (docs/rules.md §3)
COLOURS = ("青", "赤", "黄", "緑")  # blue, red, yellow, green
COLOUR_NAMES = ("blue", "red", "yellow", "green")
COLOUR_LETTERS = ("B", "R", "Y", "G")  # the face letter of a card's English name: B5 = blue five
SEAT_WINDS = ("東", "南", "西", "北")

# ---- names for people (views, messages) -----------------------------------
# One table per language; "en" is the default of the view functions. The record
# format (Game.wins, majiang-record/1) keeps its Japanese names: ``kind_name``
# defaults to "ja" because ``Game.wins`` calls it for the record's "melds" and
# "pair" fields.
LANGS = ("en", "ja")
SEAT_NAMES = {"en": ("East", "South", "West", "North"), "ja": SEAT_WINDS}
CIRCLE_NAMES = {"en": ("blue", "red", "yellow", "green", "white"),
                "ja": ("青", "赤", "黄", "緑", "白")}
MELD_NAMES = {"en": {1: "pung", 2: "chow", 3: "ankan", 4: "minkan"},
              "ja": {1: "刻", 2: "順", 3: "暗", 4: "明"}}
# pattern names as Game.wins writes them (Japanese, record content) -> English
PATTERN_NAMES_EN = {"連順": "consecutive runs", "跳順": "runs step 2", "筋順": "runs step 3",
                    "端順": "end runs (123+789)", "同順": "identical runs",
                    "連刻": "consecutive triplets", "跳刻": "triplets step 2",
                    "筋刻": "triplets step 3", "端刻": "end triplets (1+9)",
                    "同刻": "identical triplets", "自色刻": "own-colour triplet"}
_OFFSET_NAMES = {"en": ("", "next seat", "opposite seat", "previous seat"), "ja": ("", "+1", "+2", "+3")}
_CHOW_NAMES = ("low", "middle", "high")


def check_lang(lang) -> str:
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, not {lang!r}")
    return lang


def seat_name(seat: int, lang: str = "en") -> str:
    """East / South / West / North (``lang="ja"``: 東 南 西 北) for seats 0-3."""
    return SEAT_NAMES[check_lang(lang)][seat]


def pattern_name(name: str, lang: str = "en") -> str:
    """A scoring pattern's name for people; ``name`` as ``Game.wins`` gives it (Japanese)."""
    return PATTERN_NAMES_EN.get(name, name) if check_lang(lang) == "en" else name


def card_kind(card_id: int) -> int:
    return card_id // 4


def kind_name(kind: int, lang: str = "ja") -> str:
    """青5 (``lang="en"``: B5, blue five). The default is the record's name (see above)."""
    if check_lang(lang) == "en":
        return f"{COLOUR_LETTERS[kind // 9]}{kind % 9 + 1}"
    return f"{COLOURS[kind // 9]}{kind % 9 + 1}"


def circle_colour(card_id: int) -> int:
    """Circle colour of a card: the three other colours in order, then white (4)."""
    face, copy = card_id // CARDS_PER_FACE, card_id % 4
    others = [c for c in range(4) if c != face]
    return others[copy] if copy < 3 else 4


# ---- actions (docs/api.md) -----------------------------------------------
# The action ids of docs/api.md, named once: every module (kernel included) uses these.
# A range constant is its first id; ``A_X + k`` is the action on kind k, and for
# the seat-offset actions ``A_PUNG + d - 1`` is the one on seat offset d (1-3).
NUM_ACTIONS = 156
A_DISCARD = 0      # 0-35    打 discard one card of kind id - A_DISCARD
A_ANKAN = 36       # 36-71   暗 concealed kan of kind id - A_ANKAN
A_MINKAN = 72      # 72-107  明 added kan on the 刻 of kind id - A_MINKAN
A_TSUMO = 108      # 模 win on the drawn card
A_PASS = 109       # pass (last lap only)
A_DRAW = 110       # 引 draw from the own square
A_PUNG = 111       # 111-113 刻 pung the claimable discard of seat offset id - A_PUNG + 1
A_CHOW = 114       # 114-116 順 chow: the discard is the low / middle / high card of the run
A_RON = 117        # 117-119 栄 ron on the claimable discard of seat offset id - A_RON + 1
A_EXCHANGE = 120   # 120-155 変 set aside one card of kind id - A_EXCHANGE


def action_name(a: int, lang: str = "en") -> str:
    """An action id for people, without game context: ``discard B5``, ``ankan B5``,
    ``minkan B5``, ``tsumo``, ``pass``, ``draw``, ``pung (next seat)``, ``chow (low)``,
    ``ron (next seat)``, ``exchange B5``; ``lang="ja"``: 打青5 暗青5 明青5 模 pass 引
    刻(+1) 順(low) 栄(+1) 変青5."""
    en = check_lang(lang) == "en"
    if not isinstance(a, (int, np.integer)) or not 0 <= a < NUM_ACTIONS:
        return f"<invalid {a}>"
    if a == A_TSUMO:
        return "tsumo" if en else "模"
    if a == A_PASS:
        return "pass"
    if a == A_DRAW:
        return "draw" if en else "引"
    if A_PUNG <= a < A_CHOW:
        return f"pung ({_OFFSET_NAMES['en'][a - A_PUNG + 1]})" if en else f"刻(+{a - A_PUNG + 1})"
    if A_CHOW <= a < A_RON:
        return f"chow ({_CHOW_NAMES[a - A_CHOW]})" if en else f"順({_CHOW_NAMES[a - A_CHOW]})"
    if A_RON <= a < A_EXCHANGE:
        return f"ron ({_OFFSET_NAMES['en'][a - A_RON + 1]})" if en else f"栄(+{a - A_RON + 1})"
    for base, word, ja in ((A_DISCARD, "discard", "打"), (A_ANKAN, "ankan", "暗"),
                           (A_MINKAN, "minkan", "明"), (A_EXCHANGE, "exchange", "変")):
        if base <= a < base + NUM_KINDS:
            return f"{word} {kind_name(a - base, 'en')}" if en else f"{ja}{kind_name(a - base, 'ja')}"
    return f"<invalid {a}>"


# ---- rule configuration (docs/rules.md §10) -----------------------------
_CHOICES = {
    "hands_per_game": (1, 2, 3, 4),
    "chow_from": ("next", "previous"),
    "exchange": (True, False),
    "side_cards_public": (True, False),
    "discard_drawn": (True, False),
    "kuikae": (True, False),
    "furiten": (True, False),
    "require_yaku": (True, False),
    "wins_to_close": (1, 2, 3),
    "payment": ("zero_sum", "winner_only"),
}

# indices into the kernel's rules array
R_HANDS, R_CHOW_OFF, R_EXCHANGE, R_SIDE_PUBLIC, R_DISCARD_DRAWN = 0, 1, 2, 3, 4
R_KUIKAE, R_FURITEN, R_REQ_YAKU, R_WINS_TO_CLOSE, R_PAYMENT = 5, 6, 7, 8, 9
R_AUTO_FORCED = 10
R_SIZE = 11


@dataclass(frozen=True)
class RuleConfig:
    """One rule set. Defaults are docs/rules.md §10; [prov] fields are provisional."""

    hands_per_game: int = 4          # [pub] 1 game = 4 hands (春夏秋冬)
    chow_from: str = "next"          # [pub] 順 from the next seat (左側の他者)
    exchange: bool = True            # [pub/prov] 変: 4 side cards each
    side_cards_public: bool = False  # [prov]
    discard_drawn: bool = False      # [seed] the drawn card joins after the discard
    kuikae: bool = True              # [prov] 食い替え allowed
    furiten: bool = False            # [pub] no furiten
    require_yaku: bool = False       # [seed] any winning shape wins
    wins_to_close: int = 3           # [prov] the hand closes after this many wins
    payment: str = "zero_sum"        # [prov] who pays

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            allowed = _CHOICES[f.name]
            ok = any(value == a and type(value) is type(a) for a in allowed)
            if not ok:
                from .checks import show  # (checks imports this module)
                raise ValueError(
                    f"RuleConfig.{f.name} = {show(value)} is not allowed; allowed values: "
                    + ", ".join(repr(a) for a in allowed))

    @classmethod
    def from_dict(cls, d: dict) -> "RuleConfig":
        """A ``RuleConfig`` from a dict of fields (missing ones take their defaults);
        ValueError for anything else, naming the first unknown key (keys of any
        type: ``{1: 2}`` too)."""
        from .checks import show  # (checks imports this module)
        names = [f.name for f in fields(cls)]
        if not isinstance(d, dict):
            raise ValueError(f"rules must be a RuleConfig, a dict of its fields or None, got {show(d)} "
                             f"({type(d).__name__})")
        unknown = [k for k in d if not (isinstance(k, str) and k in names)]
        if unknown:
            listed = ", ".join(show(k, 40) for k in unknown[:8]) + (", ..." if len(unknown) > 8 else "")
            raise ValueError(f"unknown RuleConfig field(s): [{listed}]; fields are {names}")
        return cls(**d)

    def to_dict(self) -> dict:
        return asdict(self)

    def to_array(self, auto_forced: bool = True) -> np.ndarray:
        r = np.zeros(R_SIZE, np.int32)
        r[R_HANDS] = self.hands_per_game
        r[R_CHOW_OFF] = 1 if self.chow_from == "next" else 3
        r[R_EXCHANGE] = self.exchange
        r[R_SIDE_PUBLIC] = self.side_cards_public
        r[R_DISCARD_DRAWN] = self.discard_drawn
        r[R_KUIKAE] = self.kuikae
        r[R_FURITEN] = self.furiten
        r[R_REQ_YAKU] = self.require_yaku
        r[R_WINS_TO_CLOSE] = self.wins_to_close
        r[R_PAYMENT] = 0 if self.payment == "zero_sum" else 1
        r[R_AUTO_FORCED] = auto_forced
        return r


def make_rules(rules=None, **overrides) -> RuleConfig:
    """``rules`` (RuleConfig, dict or None) with keyword overrides applied."""
    if rules is None:
        base = {}
    elif isinstance(rules, RuleConfig):
        base = rules.to_dict()
    elif isinstance(rules, dict):
        base = dict(rules)
    else:
        raise ValueError(f"rules must be a RuleConfig, a dict or None, not {type(rules).__name__}")
    base.update(overrides)
    return RuleConfig.from_dict(base)


# ---- scoring patterns (docs/rules.md §9) --------------------------------
SHAPE_NAMES = {1: "連順", 2: "跳順", 3: "筋順", 4: "端順", 5: "同順",
               6: "連刻", 7: "跳刻", 8: "筋刻", 9: "端刻", 10: "同刻"}
# group g for (number of melds, number of distinct face colours); -1 = none
GROUP = np.full((5, 5), -1, np.int32)
for (_m, _k), _g in {(2, 2): 1, (2, 1): 2, (3, 2): 3, (3, 3): 4, (3, 1): 5,
                     (4, 3): 6, (4, 2): 7, (4, 4): 8, (4, 1): 9}.items():
    GROUP[_m, _k] = _g
