"""Rendering of a ``Game``: text (``render_ansi``), image (``render_rgb``), HTML (``render_html``).

All three read the state row ``game.state`` through ``majiang_env.engine.kernel.layout``.
``render_ansi(game, seat)`` shows only what ``seat`` may see (docs/rules.md §11):
the other hands, drawn cards and side cards (unless ``side_cards_public``) are
hidden and stand-ins are ``?``; ``seat=None`` is the spectator view with every
hand open. ``render_rgb`` and ``render_html`` are spectator views.

Names are English by default (cards ``B5`` = blue five: faces B blue 青,
R red 赤, Y yellow 黄, G green 緑; seats East South West North); ``lang="ja"``
gives the Japanese names (青5, 東...). The name tables are in
``majiang_env.engine.rules``. Hands are numbered 1..hands_per_game for people
("hand 1/4"); the record's ``hands[i]["index"]`` is that number minus one.
"""
from __future__ import annotations

import html

import numpy as np

from ..engine.checks import as_seat
from ..engine.kernel import layout as L
from ..engine.rules import (
    CARDS_PER_FACE,
    CIRCLE_NAMES,
    COLOUR_LETTERS,
    COLOUR_NAMES,
    COLOURS,
    MELD_NAMES,
    NUM_KINDS,
    SQUARE_SIZE,
    check_lang,
    circle_colour,
    kind_name,
    pattern_name,
    seat_name,
)

__all__ = ["render_ansi", "render_rgb", "render_html", "hand_result_lines", "win_lines",
           "seat_letter"]

_PHASE_JA = {"exchange": "変", "take": "取札", "discard": "捨札", "over": "終"}


def _state(game):
    """The game's state row, read by field name (``layout.StateView``)."""
    st = getattr(game, "state", None)
    return L.StateView(game.state if st is None else st)


def seat_letter(p: int, lang: str = "en") -> str:
    """One character per seat, for river marks: E S W N (``ja``: 東 南 西 北)."""
    return seat_name(p, lang)[0]


def _seat_view(game, p, seat):
    """Everything shown for seat p to ``seat`` (None: spectator): hand (card ids or
    None when hidden), drawn, side, melds, river."""
    s = _state(game)
    rules = game.rules
    open_hand = seat is None or seat == p
    drawn = int(s.drawn_card) if (s.to_act == p and s.phase == L.PH_DISCARD and s.drawn_card >= 0) else -1
    hand = None
    if open_hand:
        hand = []
        for k, m in enumerate(s.hand_masks[p].tolist()):   # bit c: copy c of kind k is held
            for c in range(4):
                if m >> c & 1:
                    hand.append(k * 4 + c)
        if drawn >= 0 and drawn in hand:  # discard_drawn: the drawn card is already held
            hand.remove(drawn)
    nhand = int(s.num_concealed[p])
    nside = int(s.num_side[p])
    side = None
    if open_hand or rules.side_cards_public:
        side = s.side[p, :nside].tolist()
    melds = []
    for m in s.melds[p, :s.num_melds[p]].tolist():   # MELD_W fields M_* each
        t, k = m[L.M_TYPE], m[L.M_KIND]
        c0, c1 = m[L.M_CARD0], m[L.M_CARD1]
        if t == L.MT_ANKAN:
            shown, stand_in, claimed = [c0, c1, m[L.M_STANDIN]], None, -1
        else:
            shown, stand_in, claimed = [c0, c1], m[L.M_STANDIN], m[L.M_CLAIMED]
        kan = m[L.M_KAN] if t in (L.MT_ANKAN, L.MT_MINKAN) else -1
        melds.append({"type": t, "kind": k, "shown": sorted(shown), "claimed": claimed, "kan": kan,
                      "stand_in": stand_in if seat is None else (None if stand_in is None else -1)})
    n = s.river_len[p]
    cards, flags = s.river[p, :n].tolist(), s.river_flags[p, :n].tolist()   # flags: RF_* bits
    river = [{"card": card,
              "picked": [q for q in range(4) if f >> q & 1],
              "won": [q for q in range(4) if f >> (4 + q) & 1],
              "kan": bool(f & L.RF_KAN)}
             for card, f in zip(cards, flags, strict=True)]
    return {"hand": hand, "nhand": nhand, "drawn": drawn if open_hand else (-1 if drawn < 0 else -2),
            "side": side, "nside": nside, "melds": melds, "river": river,
            "left": SQUARE_SIZE - int(s.square_taken[p]), "retired": bool(s.retired[p])}


def _kinds(cards, lang):
    return " ".join(kind_name(c >> 2, lang) for c in cards)


# ---- results of a hand (shared by render_ansi, python -m majiang_env and play) --
def _pays(game, w, lang):
    """Who pays for win ``w``, in words (docs/rules.md §9)."""
    base, winner = w["base"], seat_name(w["seat"], lang)
    if game.rules.payment == "winner_only":
        return f"{winner} gains 3 x {base} = {3 * base}; nobody pays (payment=winner_only)"
    if w["from"] is None:
        others = ", ".join(seat_name(q, lang) for q in range(4) if q != w["seat"])
        return f"{others} pay {base} each; {winner} gains 3 x {base} = {3 * base}"
    return f"{seat_name(w['from'], lang)} pays 3 x {base} = {3 * base} to {winner}"


_READING_NAMES = {"en": {"pung": "pung", "chow": "chow", "ankan": "ankan", "minkan": "minkan",
                          "concealed_triplet": "triplet", "concealed_run": "run"},
                   "ja": {"pung": "刻", "chow": "順", "ankan": "暗", "minkan": "明",
                          "concealed_triplet": "刻", "concealed_run": "順"}}
_KIND_OF_NAME = {kind_name(k, "ja"): k for k in range(NUM_KINDS)}


def _reading_meld(t, k, lang):
    """A meld of a win's reading (``Game.wins(h)[i]["melds"]`` entry) for people."""
    k = _KIND_OF_NAME.get(k, 0) if isinstance(k, str) else int(k)
    name = _READING_NAMES[lang].get(t, t)
    if t in ("chow", "concealed_run"):
        return f"{name} {kind_name(k, lang)}-{kind_name(k + 2, lang)}"
    return f"{name} {kind_name(k, lang)}"


def win_lines(game, w, lang: str = "en", detail: bool = True) -> list:
    """A win of ``Game.wins(h)`` explained: how, base = patterns (with their melds),
    the reading of the hand, who pays (docs/rules.md §9)."""
    lang = check_lang(lang)
    card = kind_name(w["card"] >> 2, lang)
    if w["from"] is None:
        how = f"tsumo (self-drawn {card})"
    else:
        how = f"ron on {seat_name(w['from'], lang)}'s discard {card}"
    head = f"{seat_name(w['seat'], lang)} wins by {how}: base {w['base']}"
    if not detail:
        return [head]
    melds = w.get("melds", [])
    if w["patterns"]:
        pats = []
        for pt in w["patterns"]:
            used = ", ".join(_reading_meld(*melds[i], lang) for i in pt["melds"] if i < len(melds))
            pats.append(f"{pattern_name(pt['name'], lang)} {pt['points']} ({used})")
        head += " = " + " + ".join(pats)
    else:
        head += " (no scoring pattern: the lowest base is 1)"
    lines = [head]
    if melds:
        pair = _KIND_OF_NAME.get(w["pair"], 0) if isinstance(w["pair"], str) else int(w["pair"])
        lines.append("    hand read as: " + ", ".join(_reading_meld(t, k, lang) for t, k in melds)
                     + f"; pair {kind_name(pair, lang)}")
    lines.append("    " + _pays(game, w, lang))
    return lines


def hand_result_lines(game, h: int, lang: str = "en", detail: bool = True) -> list:
    """The result of finished hand ``h`` (0-based): wins (or an explicit "no winner")
    and each seat's points. People's numbering: "hand h+1/N"."""
    lang = check_lang(lang)
    n = game.rules.hands_per_game
    wins = game.wins(h)
    deltas = game.hand_deltas(h)
    out = [f"hand {h + 1}/{n} over (record hands[{h}]):"]
    if not wins:
        out.append("  no winner: the last lap ended (exhaustive draw), no payments")
    for w in wins:
        out += ["  " + s for s in win_lines(game, w, lang, detail)]
    if wins and len(wins) < game.rules.wins_to_close:
        out.append(f"  the hand ended at the last lap with {len(wins)} win(s)")
    out.append("  points this hand: " + "  ".join(
        f"{seat_name(p, lang)} {int(d):+d}" for p, d in enumerate(deltas)))
    return out


# ---- text ---------------------------------------------------------------------
def _meld_text(m, lang, marks):
    name = MELD_NAMES[lang].get(m["type"], "?")
    parts = [kind_name(c >> 2, lang) for c in m["shown"]]
    if m["stand_in"] is not None:
        if m["stand_in"] < 0:
            parts.append("?")
            marks.add("?")
        else:
            parts.append(f"[{kind_name(m['stand_in'] >> 2, lang)}]")
            marks.add("[]")
    s = f"{name}({' '.join(parts)}"
    if m["claimed"] >= 0:
        s += f" for {kind_name(m['claimed'] >> 2, lang)}"
        marks.add("for")
    if m["kan"] >= 0:
        s += f" +{kind_name(m['kan'] >> 2, lang)}k"
        marks.add("+k")
    return s + ")"


_LEGEND = (  # (mark, explanation), in the order the legend lists them
    (">", "> to act"),
    ("hidden", "[n hidden] cards this seat may not see"),
    ("drawn", "+X (drawn): drawn this turn, joins the hand after the discard"),
    ("side", "side: cards set aside at the exchange, out of play"),
    ("square", "square n left: face-down cards still to take"),
    ("?", "? stand-in, a face-down card filling a pick-up meld"),
    ("[]", "[X] stand-in (spectator view)"),
    ("for", "for X: the discard a pung/chow used (it stays in its river)"),
    ("+k", "+Xk: the kan's 4th card, in the river"),
    ("*", "*S picked up by S"),
    ("!", "!S won on by S"),
    ("k", "k kan card"),
    ("won", "[won] won this hand, sits out"),
)
_LEGEND_JA = {"side": "side: 側札 (変で除けた札)", "drawn": "+X (drawn): 引いた札 (捨札の後に手に入る)"}


def render_ansi(game, seat=None, lang: str = "en") -> str:
    """A text table of the game as ``seat`` sees it (``None``: spectator, all open).

    ``lang="en"`` (default): B5, East, pung...; ``lang="ja"``: 青5, 東, 刻...
    The last line is a legend of the marks used in this view.
    """
    lang = check_lang(lang)
    if seat is not None:
        seat = as_seat(seat)
    n = game.rules.hands_per_game
    marks = {"square"}
    lines = []
    title = "馬将 Majiang" if lang == "ja" else "Majiang"
    if game.done:
        lines.append(f"{title}  game over: all {n} hands played (finished)")
    else:
        phase = game.phase if lang == "en" else f"{game.phase} {_PHASE_JA.get(game.phase, '')}"
        lines.append(f"{title}  hand {game.hand_index + 1}/{n}  lap {game.lap}/19  phase {phase}"
                     f"  to act: {seat_name(game.current_player, lang)}")
        marks.add(">")
    lines.append(("final scores: " if game.done else "scores: ") + "  ".join(
        f"{seat_name(p, lang)} {int(s):+d}" for p, s in enumerate(game.scores)))
    if seat is not None:
        lines.append(f"view of {seat_name(seat, lang)} (seat {seat}): other seats' cards hidden")
    for h in range(min(game.hand_index, n)):
        lines += hand_result_lines(game, h, lang, detail=False)
    if not game.done:
        cur = game.wins(game.hand_index)
        if cur:
            lines.append(f"wins in hand {game.hand_index + 1} so far:")
            for w in cur:
                lines += ["  " + s for s in win_lines(game, w, lang, detail=False)]
    lines.append("-" * 72)
    for p in range(4):
        v = _seat_view(game, p, seat)
        mark = ">" if game.current_player == p and not game.done else " "
        tag = ""
        if v["retired"]:
            tag = " [won]"
            marks.add("won")
        colour = COLOURS[p] if lang == "ja" else COLOUR_NAMES[p]
        you = ", you" if seat == p else ""
        lines.append(f"{mark}{seat_name(p, lang)} (seat {p}, {colour}{you})  square {v['left']} left{tag}")
        if v["hand"] is None:
            hand = f"[{v['nhand']} hidden]"
            marks.add("hidden")
            if v["drawn"] == -2:
                hand += " + [drawn, hidden]"
        else:
            hand = _kinds(v["hand"], lang) or "-"
            if v["drawn"] >= 0:
                hand += f"  + {kind_name(v['drawn'] >> 2, lang)} (drawn)"
                marks.add("drawn")
        lines.append(f"   hand : {hand}")
        if v["side"] is None:
            if v["nside"]:
                lines.append(f"   side : [{v['nside']} hidden]")
                marks.update(("side", "hidden"))
        elif v["side"]:
            lines.append(f"   side : {_kinds(v['side'], lang)}")
            marks.add("side")
        if v["melds"]:
            lines.append(f"   melds: {' '.join(_meld_text(m, lang, marks) for m in v['melds'])}")
        rv = []
        for r in v["river"]:
            s = kind_name(r["card"] >> 2, lang)
            if r["kan"]:
                s += "k"
                marks.add("k")
            if r["picked"]:
                s += "*" + "".join(seat_letter(q, lang) for q in r["picked"])
                marks.add("*")
            if r["won"]:
                s += "!" + "".join(seat_letter(q, lang) for q in r["won"])
                marks.add("!")
            rv.append(s)
        lines.append(f"   river: {' '.join(rv) or '-'}")
    lines.append("-" * 72)
    if lang == "en":
        faces = "cards: B blue, R red, Y yellow, G green + number"
    else:
        faces = "cards: 青 赤 黄 緑 + number"
    legend = [faces] + [(_LEGEND_JA.get(k) if lang == "ja" else None) or t
                        for k, t in _LEGEND if k in marks]
    lines.append("legend: " + "; ".join(legend))
    return "\n".join(lines)


# ---- image ----------------------------------------------------------------------
FACE_RGB = np.array([(40, 90, 220), (215, 45, 45), (235, 200, 30), (40, 160, 70)], np.uint8)
CIRCLE_RGB = np.array([(40, 90, 220), (215, 45, 45), (235, 200, 30), (40, 160, 70),
                       (255, 255, 255)], np.uint8)
BG = np.array((20, 70, 40), np.uint8)
INK = np.array((235, 235, 235), np.uint8)
NAME_RGB = np.array([(120, 160, 255), (255, 120, 120), (250, 225, 90), (120, 230, 140)], np.uint8)
CW, CH, GAP = 22, 30, 2          # card cell, as the HTML view's 22 x 30 SVG cards
LABEL_W = 92                     # the seat label column
SCALE = 2                        # font pixels per glyph pixel

# 3 x 5 bitmap font: 5 rows of 3 bits per glyph
_FONT_ROWS = {
    "0": "111 101 101 101 111", "1": "010 110 010 010 111", "2": "111 001 111 100 111",
    "3": "111 001 011 001 111", "4": "101 101 111 001 001", "5": "111 100 111 001 111",
    "6": "111 100 111 101 111", "7": "111 001 010 010 010", "8": "111 101 111 101 111",
    "9": "111 101 111 001 111",
    "A": "010 101 111 101 101", "B": "110 101 110 101 110", "C": "011 100 100 100 011",
    "D": "110 101 101 101 110", "E": "111 100 110 100 111", "F": "111 100 110 100 100",
    "G": "011 100 101 101 011", "H": "101 101 111 101 101", "I": "111 010 010 010 111",
    "J": "001 001 001 101 010", "K": "101 101 110 101 101", "L": "100 100 100 100 111",
    "M": "101 111 111 101 101", "N": "110 101 101 101 101", "O": "010 101 101 101 010",
    "P": "110 101 110 100 100", "Q": "010 101 101 110 011", "R": "110 101 110 101 101",
    "S": "011 100 010 001 110", "T": "111 010 010 010 010", "U": "101 101 101 101 111",
    "V": "101 101 101 101 010", "W": "101 101 111 111 101", "X": "101 101 010 101 101",
    "Y": "101 101 010 010 010", "Z": "111 001 010 100 111",
    "+": "000 010 111 010 000", "-": "000 000 111 000 000", "/": "001 001 010 100 100",
    ":": "000 010 000 010 000", ".": "000 000 000 000 010", "?": "111 001 010 000 010",
    "!": "010 010 010 000 010", "*": "000 101 010 101 000", "(": "001 010 010 010 001",
    ")": "100 010 010 010 100", "=": "000 111 000 111 000", ",": "000 000 000 010 100",
    ">": "100 010 001 010 100", " ": "000 000 000 000 000",
}
FONT = {c: np.array([[ch == "1" for ch in row] for row in rows.split()], bool)
        for c, rows in _FONT_ROWS.items()}


def text_width(text: str, scale: int = SCALE) -> int:
    return max(0, len(text) * 4 * scale - scale)


def draw_text(img, y, x, text, colour=INK, scale: int = SCALE):
    """Draw ``text`` (upper-cased; digits, A-Z, + - / : . ? ! * ( ) = , >) at (y, x)."""
    for ch in str(text).upper():
        g = FONT.get(ch, FONT["?"])
        big = np.kron(g, np.ones((scale, scale), bool))
        h, w = big.shape
        sub = img[y:y + h, x:x + w]
        if sub.shape[:2] == big.shape:
            sub[big] = colour
        x += 4 * scale
    return x


def _dim(img, y, x, h, w):
    img[y:y + h, x:x + w] = (img[y:y + h, x:x + w].astype(np.uint16) + BG) // 2


def _card(img, y, x, card, dim=False, hidden=False):
    """One card: face colour, a border in the circle colour (天), its number and
    face letter (the HTML view draws the same card)."""
    if x + CW > img.shape[1]:
        return
    if hidden:
        img[y:y + CH, x:x + CW] = (70, 70, 70)
        img[y + 2:y + CH - 2, x + 2:x + CW - 2] = (140, 140, 140)
        draw_text(img, y + 10, x + 8, "?", (70, 70, 70))
        return
    face, num = card // CARDS_PER_FACE, (card >> 2) % 9 + 1
    img[y:y + CH, x:x + CW] = CIRCLE_RGB[circle_colour(card)]
    img[y + 3:y + CH - 3, x + 3:x + CW - 3] = FACE_RGB[face]
    ink = (0, 0, 0) if face == 2 else (255, 255, 255)
    draw_text(img, y + 5, x + (CW - 3 * SCALE) // 2, str(num), ink)
    draw_text(img, y + 17, x + (CW - 3) // 2, COLOUR_LETTERS[face], ink, scale=1)
    if dim:
        _dim(img, y, x, CH, CW)


RGB_LEGEND = (
    "ROWS PER SEAT: HAND + DRAWN, SIDE CARDS / MELDS / DISCARDS",
    "CARD: NUMBER + FACE (B R Y G)  BORDER: CIRCLE COLOUR OF THE COPY",
    "DIM: PICKED UP/SIDE/KAN 4TH  BAR: WON ON  GREY ?: STAND-IN",
)


def render_rgb(game) -> np.ndarray:
    """Spectator image, uint8 (H, W, 3): a header line, then per seat a label
    (seat, score, cards left in the square; the seat to act framed and marked
    ``>``) and three rows: hand (+ drawn card, side cards dimmed), melds
    (stand-ins grey), river (picked-up cards dimmed, won-on cards underlined);
    a legend at the bottom (:data:`RGB_LEGEND`) that names the rows and every colour."""
    ncol = 20
    row_h = CH + GAP + 2
    seat_h = 3 * row_h + 6
    head_h = 8 + 5 * SCALE + 6
    W = LABEL_W + ncol * (CW + GAP) + 8
    line_h = 5 * SCALE + 5
    H = head_h + 4 * seat_h + len(RGB_LEGEND) * line_h + 6
    img = np.empty((H, W, 3), np.uint8)
    img[:] = BG
    n = game.rules.hands_per_game
    if game.done:
        head = f"GAME OVER  {n}/{n} HANDS PLAYED"
    else:
        head = (f"HAND {game.hand_index + 1}/{n}  LAP {game.lap}/19  {game.phase.upper()}"
                f"  TO ACT: {seat_name(game.current_player).upper()}  WINS {int(_state(game).num_wins)}")
    draw_text(img, 6, 8, head)
    for p in range(4):
        v = _seat_view(game, p, None)
        y0 = head_h + p * seat_h
        acting = game.current_player == p and not game.done
        img[y0:y0 + 3 * row_h - 4, 0:5] = FACE_RGB[p]          # own colour bar
        if acting:  # a white frame around the label, and an arrow
            img[y0:y0 + 3 * row_h - 4, 7:LABEL_W - 4] = INK
            img[y0 + 2:y0 + 3 * row_h - 6, 9:LABEL_W - 6] = BG
            draw_text(img, y0 + 6, 12, ">")
        draw_text(img, y0 + 6, 22, seat_name(p).upper(), NAME_RGB[p])
        draw_text(img, y0 + 6 + 7 * SCALE, 12, f"{int(game.scores[p]):+d}")
        draw_text(img, y0 + 6 + 14 * SCALE, 12, f"SQ {v['left']}")
        if v["retired"]:
            draw_text(img, y0 + 6 + 21 * SCALE, 12, "WON", (255, 230, 90))
        x = LABEL_W
        for c in v["hand"]:
            _card(img, y0, x, c)
            x += CW + GAP
        if v["drawn"] >= 0:  # "+" then the drawn card, apart from the hand
            draw_text(img, y0 + 12, x + 1, "+", scale=2)
            x += 8
            _card(img, y0, x, v["drawn"])
            x += CW + GAP
        x += 8
        for c in v["side"] or []:
            _card(img, y0, x, c, dim=True)
            x += CW + GAP
        x, y = LABEL_W, y0 + row_h
        for m in v["melds"]:
            for c in m["shown"]:
                _card(img, y, x, c)
                x += CW + GAP
            if m["stand_in"] is not None:
                _card(img, y, x, 0, hidden=True)
                x += CW + GAP
            if m["kan"] >= 0:
                _card(img, y, x, m["kan"], dim=True)
                x += CW + GAP
            x += 8
        x, y = LABEL_W, y0 + 2 * row_h
        for r in v["river"]:
            _card(img, y, x, r["card"], dim=bool(r["picked"]))
            if r["won"] and x + CW <= W:
                img[y + CH:y + CH + 3, x:x + CW] = (255, 255, 255)
            x += CW + GAP
    for i, line in enumerate(RGB_LEGEND):
        draw_text(img, head_h + 4 * seat_h + i * line_h, 8, line, scale=SCALE)
    return img


# ---- HTML -------------------------------------------------------------------------
def _hex(rgb):
    return "#%02x%02x%02x" % tuple(int(v) for v in rgb)


def _svg_card(card, lang="en", dim=False, won=False):
    """The HTML card: face colour, circle colour as the border, number and face letter."""
    face, num = card // CARDS_PER_FACE, (card >> 2) % 9 + 1
    fill, ring = _hex(FACE_RGB[face]), _hex(CIRCLE_RGB[circle_colour(card)])
    text = "#000" if face == 2 else "#fff"
    op = ' opacity="0.45"' if dim else ""
    circle = CIRCLE_NAMES["en"][circle_colour(card)]
    title = f"{kind_name(card >> 2, 'en')} ({COLOUR_NAMES[face]} {num}, {circle} circle, id {card})"
    if lang == "ja":
        title = f"{kind_name(card >> 2, 'ja')} {CIRCLE_NAMES['ja'][circle_colour(card)]}円 / " + title
    bar = '<rect x="1" y="31" width="20" height="3" fill="#fff"/>' if won else ""
    return (f'<svg width="22" height="34"{op}><title>{html.escape(title)}</title>'
            f'<rect x="1.5" y="1.5" width="19" height="27" rx="3" fill="{fill}" stroke="{ring}" '
            f'stroke-width="3"/><text x="11" y="14" font-size="12" font-weight="bold" '
            f'text-anchor="middle" fill="{text}" font-family="sans-serif">{num}</text>'
            f'<text x="11" y="25" font-size="8" text-anchor="middle" fill="{text}" '
            f'font-family="sans-serif">{COLOUR_LETTERS[face]}</text>{bar}</svg>')


_STAND_IN_SVG = ('<svg width="22" height="34"><title>stand-in (face-down)</title>'
                 '<rect x="1.5" y="1.5" width="19" height="27" rx="3" fill="#8c8c8c" stroke="#464646" '
                 'stroke-width="3"/><text x="11" y="19" font-size="12" text-anchor="middle" '
                 'fill="#464646" font-family="sans-serif">?</text></svg>')


def render_html(game, lang: str = "en") -> str:
    """Spectator view as an HTML table of inline SVG cards. Every label has an
    ASCII form (B5, East, pung), readable without CJK fonts; ``lang="ja"`` adds
    the Japanese names beside them."""
    lang = check_lang(lang)
    n = game.rules.hands_per_game

    def both(en, ja):
        return f"{en} {ja}" if lang == "ja" else en

    rows = []
    for p in range(4):
        v = _seat_view(game, p, None)
        hand = "".join(_svg_card(c, lang) for c in v["hand"])
        if v["drawn"] >= 0:
            hand += "&nbsp;+" + _svg_card(v["drawn"], lang)
        side = "".join(_svg_card(c, lang, dim=True) for c in v["side"] or [])
        melds = []
        for m in v["melds"]:
            cards = "".join(_svg_card(c, lang) for c in m["shown"])
            if m["stand_in"] is not None:
                cards += _STAND_IN_SVG
            if m["kan"] >= 0:
                cards += _svg_card(m["kan"], lang, dim=True)
            name = both(MELD_NAMES["en"][m["type"]], MELD_NAMES["ja"][m["type"]])
            melds.append(f"{html.escape(name)} {cards}")
        river = "".join(_svg_card(r["card"], lang, dim=bool(r["picked"]), won=bool(r["won"]))
                        for r in v["river"])
        act = " style=\"background:#ffd\"" if game.current_player == p and not game.done else ""
        arrow = "&gt; " if act else ""
        won = " (won)" if v["retired"] else ""
        label = both(seat_name(p, "en"), seat_name(p, "ja"))
        rows.append(f"<tr{act}><td>{arrow}{html.escape(label)}{won}<br>{int(game.scores[p]):+d}</td>"
                    f"<td>{hand}</td><td>{side}</td><td>{'&nbsp; '.join(melds)}</td>"
                    f"<td>{river}</td><td>{v['left']}</td></tr>")
    if game.done:
        status = f"game over, all {n} hands played"
    else:
        status = (f"hand {game.hand_index + 1}/{n}, lap {game.lap}/19, phase {game.phase}, "
                  f"to act: {seat_name(game.current_player, 'en')}, wins this hand {int(_state(game).num_wins)}")
    head = f"<p>{both('Majiang', '馬将')} {status}</p>"
    legend = ("<p style=\"font-size:small\">cards: number and face letter (B blue, R red, Y yellow, "
              "G green); border: circle colour; faded: picked up (river), side card or the kan's "
              "4th card (in the river); white bar: won on; grey ?: stand-in (face-down)</p>")
    return (head + "<table><tr><th>seat</th><th>hand</th><th>side</th><th>melds</th>"
            "<th>river</th><th>square</th></tr>" + "".join(rows) + "</table>" + legend)
