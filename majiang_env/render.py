"""Rendering of a ``Game``: text (``render_ansi``), image (``render_rgb``), HTML (``render_html``).

All three read the raw state ``game._st`` through ``majiang_env.kernel.layout``.
``render_ansi(game, seat)`` shows only what ``seat`` may see (RULES.md §11);
``seat=None`` is the spectator view with every hand open. ``render_rgb`` and
``render_html`` are spectator views.
"""
from __future__ import annotations

import html

import numpy as np

from .kernel import layout as L
from .rules import COLOURS, SEAT_WINDS, circle_colour, kind_name

MELD_NAMES = {1: "刻", 2: "順", 3: "暗", 4: "明"}
_CIRCLE = ("青", "赤", "黄", "緑", "白")


def _seat_view(game, p, seat):
    """Everything shown for seat p: dict of hand (card ids or None), drawn, side, melds, river."""
    st = game._st
    rules = game.rules
    open_hand = seat is None or seat == p
    drawn = int(st[L.DRAWN]) if (st[L.CUR] == p and st[L.PHASE] == L.PH_DISCARD
                                 and st[L.DRAWN] >= 0) else -1
    hand = None
    if open_hand:
        hand = []
        for k in range(36):
            m = int(st[L.HMASK + p * 36 + k])
            for c in range(4):
                if m >> c & 1:
                    hand.append(k * 4 + c)
        if drawn >= 0 and drawn in hand:  # discard_drawn: the drawn card is already held
            hand.remove(drawn)
    nhand = int(st[L.NHAND + p])
    side = None
    if open_hand or rules.side_cards_public:
        side = [int(st[L.SIDE + p * 4 + i]) for i in range(st[L.NSIDE + p])]
    melds = []
    for i in range(st[L.NMELD + p]):
        m = L.MELDS + (p * 4 + i) * L.MELD_W
        t, k = int(st[m]), int(st[m + 1])
        if t == L.MT_ANKAN:
            shown, stand_in = [int(st[m + 2]), int(st[m + 3]), int(st[m + 4])], None
        else:
            shown, stand_in = [int(st[m + 2]), int(st[m + 3]), int(st[m + 5])], int(st[m + 4])
            if t == L.MT_MINKAN:
                shown.append(int(st[m + 6]))
        melds.append({"type": t, "kind": k, "shown": sorted(shown),
                      "stand_in": stand_in if seat is None else (None if stand_in is None else -1)})
    river = []
    for i in range(st[L.NRIVER + p]):
        f = int(st[L.RFLAG + p * 18 + i])
        river.append({"card": int(st[L.RIVER + p * 18 + i]),
                      "picked": [q for q in range(4) if f >> q & 1],
                      "won": [q for q in range(4) if f >> (4 + q) & 1],
                      "kan": bool(f & 256)})
    return {"hand": hand, "nhand": nhand, "drawn": drawn if open_hand else (-1 if drawn < 0 else -2),
            "side": side, "nside": int(st[L.NSIDE + p]), "melds": melds, "river": river,
            "left": 36 - int(st[L.SQPOS + p]), "retired": bool(st[L.RETIRED + p])}


def _kinds(cards):
    return " ".join(kind_name(c >> 2) for c in cards)


def render_ansi(game, seat=None) -> str:
    """A text table of the game as ``seat`` sees it (``None``: spectator, all open)."""
    st = game._st
    hands = game.rules.hands_per_game
    lines = []
    head = (f"馬将  hand {min(game.hand_index, hands - 1) + 1}/{hands}"
            f"{' (game over)' if game.done else ''}  lap {game.lap}  phase {game.phase}"
            f"  to act: {'-' if game.current_player < 0 else SEAT_WINDS[game.current_player]}"
            f"  wins this hand: {int(st[L.NWINS])}")
    lines.append(head)
    lines.append("scores: " + "  ".join(f"{SEAT_WINDS[p]} {int(s):+d}" for p, s in enumerate(game.scores)))
    if seat is not None:
        lines.append(f"view of seat {seat} ({SEAT_WINDS[seat]})")
    lines.append("-" * 72)
    for p in range(4):
        v = _seat_view(game, p, seat)
        mark = ">" if game.current_player == p else " "
        tag = " [won]" if v["retired"] else ""
        lines.append(f"{mark}{SEAT_WINDS[p]} (seat {p}, {COLOURS[p]})  square left {v['left']}{tag}")
        if v["hand"] is None:
            hand = f"[{v['nhand']} hidden]"
            if v["drawn"] == -2:
                hand += " + [drawn]"
        else:
            hand = _kinds(v["hand"]) or "-"
            if v["drawn"] >= 0:
                hand += f"  + {kind_name(v['drawn'] >> 2)} (drawn)"
        lines.append(f"   hand : {hand}")
        if v["side"] is None:
            lines.append(f"   side : [{v['nside']} hidden]")
        elif v["side"]:
            lines.append(f"   side : {_kinds(v['side'])}")
        if v["melds"]:
            ms = []
            for m in v["melds"]:
                s = MELD_NAMES.get(m["type"], "?") + "(" + _kinds(m["shown"])
                if m["stand_in"] is not None:
                    s += " +" + ("?" if m["stand_in"] < 0 else f"[{kind_name(m['stand_in'] >> 2)}]")
                ms.append(s + ")")
            lines.append(f"   melds: {' '.join(ms)}")
        rv = []
        for r in v["river"]:
            s = kind_name(r["card"] >> 2)
            if r["kan"]:
                s += "k"
            if r["picked"]:
                s += "*" + "".join(SEAT_WINDS[q] for q in r["picked"])
            if r["won"]:
                s += "!" + "".join(SEAT_WINDS[q] for q in r["won"])
            rv.append(s)
        lines.append(f"   river: {' '.join(rv) or '-'}")
    lines.append("river marks: *X picked up by X, !X won on by X, k kan card; [..] stand-in")
    return "\n".join(lines)


# ---- image -----------------------------------------------------------------
FACE_RGB = np.array([(40, 90, 220), (215, 45, 45), (235, 200, 30), (40, 160, 70)], np.uint8)
CIRCLE_RGB = np.array([(40, 90, 220), (215, 45, 45), (235, 200, 30), (40, 160, 70),
                       (255, 255, 255)], np.uint8)
BG = np.array((20, 70, 40), np.uint8)
CW, CH, GAP = 18, 24, 2          # card cell
PIPS = [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)]


def _card(img, y, x, card, dim=False, hidden=False):
    if hidden:
        img[y:y + CH, x:x + CW] = (90, 90, 90)
        img[y + 2:y + CH - 2, x + 2:x + CW - 2] = (140, 140, 140)
        return
    face, num = card // 36, (card >> 2) % 9 + 1
    img[y:y + CH, x:x + CW] = CIRCLE_RGB[circle_colour(card)]
    img[y + 2:y + CH - 2, x + 2:x + CW - 2] = FACE_RGB[face]
    for r, c in PIPS[:num]:
        py, px = y + 4 + r * 6, x + 3 + c * 5
        img[py:py + 3, px:px + 3] = (0, 0, 0) if face == 2 else (255, 255, 255)
    if dim:
        img[y:y + CH, x:x + CW] //= 2


def render_rgb(game) -> np.ndarray:
    """Spectator image, uint8 (H, W, 3): per seat a row of hand (+ drawn, side), melds, river."""
    ncol = 20
    row_h = CH + GAP
    seat_h = 3 * row_h + 8
    W = 8 + ncol * (CW + GAP) + 8
    H = 4 + 4 * seat_h
    img = np.empty((H, W, 3), np.uint8)
    img[:] = BG
    for p in range(4):
        v = _seat_view(game, p, None)
        y0 = 4 + p * seat_h
        img[y0:y0 + 3 * row_h, 0:4] = FACE_RGB[p]          # seat colour bar
        if game.current_player == p:
            img[y0:y0 + 3 * row_h, 4:6] = (255, 255, 255)
        x = 8
        for c in v["hand"]:
            _card(img, y0, x, c)
            x += CW + GAP
        if v["drawn"] >= 0:
            x += 4
            _card(img, y0, x, v["drawn"])
            x += CW + GAP
        x += 6
        for c in v["side"] or []:
            if x + CW <= W:
                _card(img, y0, x, c, dim=True)
            x += CW + GAP
        x, y = 8, y0 + row_h
        for m in v["melds"]:
            for c in m["shown"]:
                if x + CW <= W:
                    _card(img, y, x, c)
                x += CW + GAP
            if m["stand_in"] is not None and x + CW <= W:
                _card(img, y, x, 0, hidden=True)
                x += CW + GAP
            x += 4
        x, y = 8, y0 + 2 * row_h
        for r in v["river"]:
            if x + CW <= W:
                _card(img, y, x, r["card"], dim=bool(r["picked"]))
                if r["won"]:
                    img[y + CH - 3:y + CH, x:x + CW] = (255, 255, 255)
            x += CW + GAP
    return img


# ---- HTML --------------------------------------------------------------------
def _svg_card(card, dim=False):
    face, num = card // 36, (card >> 2) % 9 + 1
    fill = "#%02x%02x%02x" % tuple(int(v) for v in FACE_RGB[face])
    ring = "#%02x%02x%02x" % tuple(int(v) for v in CIRCLE_RGB[circle_colour(card)])
    text = "#000" if face == 2 else "#fff"
    op = ' opacity="0.45"' if dim else ""
    title = f"{kind_name(card >> 2)} ({_CIRCLE[circle_colour(card)]}円, id {card})"
    return (f'<svg width="22" height="30"{op}><title>{html.escape(title)}</title>'
            f'<rect x="1" y="1" width="20" height="28" rx="3" fill="{fill}" stroke="{ring}" '
            f'stroke-width="2.5"/><text x="11" y="20" font-size="13" text-anchor="middle" '
            f'fill="{text}" font-family="sans-serif">{num}</text></svg>')


def render_html(game) -> str:
    """Spectator view as an HTML table of inline SVG cards."""
    st = game._st
    hands = game.rules.hands_per_game
    rows = []
    for p in range(4):
        v = _seat_view(game, p, None)
        hand = "".join(_svg_card(c) for c in v["hand"])
        if v["drawn"] >= 0:
            hand += "&nbsp;" + _svg_card(v["drawn"])
        side = "".join(_svg_card(c, dim=True) for c in v["side"] or [])
        melds = "&nbsp;".join(
            MELD_NAMES.get(m["type"], "?") + "".join(_svg_card(c) for c in m["shown"])
            for m in v["melds"])
        river = "".join(_svg_card(r["card"], dim=bool(r["picked"])) for r in v["river"])
        act = " style=\"background:#ffd\"" if game.current_player == p else ""
        rows.append(f"<tr{act}><td>{SEAT_WINDS[p]}<br>{int(game.scores[p]):+d}</td><td>{hand}</td>"
                    f"<td>{side}</td><td>{melds}</td><td>{river}</td><td>{v['left']}</td></tr>")
    head = (f"<p>馬将 hand {min(game.hand_index, hands - 1) + 1}/{hands}, lap {game.lap}, "
            f"phase {game.phase}, wins this hand {int(st[L.NWINS])}</p>")
    return (head + "<table><tr><th>seat</th><th>hand</th><th>side</th><th>melds</th>"
            "<th>river</th><th>square</th></tr>" + "".join(rows) + "</table>")
