"""Views for people: English / Japanese names, the ansi legend, hand results
(the no-winner line), the rgb picture's digits, and an HTML view readable without CJK fonts."""
import random
import re

import numpy as np
import pytest

from majiang_env import Game
from majiang_env.agents import game_obs, make_agent
from majiang_env.engine.rules import action_name, check_lang, kind_name, pattern_name, seat_name
from majiang_env.views.render import (
    BG,
    CH,
    CW,
    FONT,
    _card,
    hand_result_lines,
    render_ansi,
    render_html,
    render_rgb,
    win_lines,
)

# action ids (docs/api.md)
A_DISCARD, A_ANKAN, A_MINKAN, A_TSUMO, A_PASS, A_DRAW = 0, 36, 72, 108, 109, 110
A_PUNG, A_CHOW, A_RON, A_EXCHANGE, NUM_ACTIONS = 111, 114, 117, 120, 156


def _played(seed, agent, hands=1, every=1):
    """Yield one game played by four ``agent``s at every ``every``-th decision, then at the end
    (the same ``Game`` object each time: look at it before the next one)."""
    g = Game(seed=seed, rules={"hands_per_game": hands})
    players = [make_agent(agent, seed=seed * 4 + s) for s in range(4)]
    n = 0
    while not g.done:
        if n % every == 0:
            yield g
        g.step(players[g.current_player](game_obs(g)))
        n += 1
    yield g


# ---- names ---------------------------------------------------------------------------
def test_english_and_japanese_names():
    assert [kind_name(k, "en") for k in (0, 4, 15, 26, 35)] == ["B1", "B5", "R7", "Y9", "G9"]
    assert [kind_name(k, "ja") for k in (0, 4, 15, 26, 35)] == ["青1", "青5", "赤7", "黄9", "緑9"]
    assert [seat_name(p) for p in range(4)] == ["East", "South", "West", "North"]
    assert [seat_name(p, "ja") for p in range(4)] == ["東", "南", "西", "北"]
    en = {A_DISCARD + 4: "discard B5", A_ANKAN + 4: "ankan B5", A_MINKAN + 4: "minkan B5", A_TSUMO: "tsumo",
          A_PASS: "pass", A_DRAW: "draw", A_PUNG: "pung (next seat)", A_PUNG + 2: "pung (previous seat)",
          A_CHOW: "chow (low)", A_CHOW + 2: "chow (high)", A_RON: "ron (next seat)", A_EXCHANGE + 4: "exchange B5"}
    ja = {A_DISCARD + 4: "打青5", A_ANKAN + 4: "暗青5", A_MINKAN + 4: "明青5", A_TSUMO: "模", A_DRAW: "引",
          A_PUNG: "刻(+1)", A_CHOW: "順(low)", A_RON: "栄(+1)", A_EXCHANGE + 4: "変青5"}
    assert {a: action_name(a) for a in en} == en
    assert {a: action_name(a, "ja") for a in ja} == ja
    for lang in ("en", "ja"):   # one name per action, so a typed name means one move
        assert len({action_name(a, lang) for a in range(NUM_ACTIONS)}) == NUM_ACTIONS
    assert pattern_name("連順") == "consecutive runs" and pattern_name("連順", "ja") == "連順"
    with pytest.raises(ValueError, match="lang"):
        check_lang("fr")
    with pytest.raises(ValueError, match="lang"):
        render_ansi(Game(seed=0), lang="de")


def test_ansi_is_english_ascii_by_default_and_japanese_on_request():
    for g in _played(3, "greedy", every=7):
        for seat in (None, 0, 2):
            en = render_ansi(g, seat)
            assert en.isascii(), en
            assert "East" in en
        ja = render_ansi(g, None, "ja")
        assert "東" in ja and "East" not in ja


# ---- legend ----------------------------------------------------------------------------
MARKS = {  # mark in the table body -> what the legend must then explain
    r"^>": "> to act",
    r"\[\d+ hidden\]": "[n hidden]",
    r"\(drawn\)": "+X (drawn)",
    r"side :": "side:",
    r"square \d+ left": "square n left",
    r"\(\S.*\?": "? stand-in",
    r"\[[BRYG][1-9]\]": "[X] stand-in",
    r" for [BRYG][1-9]": "for X:",
    r"\+[BRYG][1-9]k\)": "+Xk: the kan's 4th card",
    r"river:.*[BRYG][1-9]k": "k kan card",
    r"\*[ESWN]": "*S picked up by S",
    r"![ESWN]": "!S won on by S",
    r"\[won\]": "[won] won this hand",
}


def test_legend_explains_every_mark_used():
    seen = set()
    for g in (g for seed, agent in ((0, "random"), (0, "greedy"), (3, "greedy"))
              for g in _played(seed, agent, every=3)):
        for seat in (None, 0, 1):
            lines = render_ansi(g, seat).splitlines()
            assert lines[-1].startswith("legend: ") and not any(ln.startswith("legend") for ln in lines[:-1])
            body, legend = "\n".join(lines[:-1]), lines[-1]
            for mark, explanation in MARKS.items():
                if re.search(mark, body, re.M):
                    seen.add(mark)
                    assert explanation in legend, (mark, legend)
    assert seen == set(MARKS), f"marks never shown: {set(MARKS) - seen}"


# ---- hand results --------------------------------------------------------------------
def test_a_hand_without_winner_says_so():
    g = Game(seed=1, rules={"hands_per_game": 1})
    rng = random.Random(1)
    while not g.done:
        g.step(rng.choice(g.legal_actions()))
    assert g.wins(0) == []   # random seats rarely win (seed 1: nobody does)
    lines = hand_result_lines(g, 0)
    assert lines[0] == "hand 1/1 over (record hands[0]):"
    assert lines[1] == "  no winner: the last lap ended (exhaustive draw), no payments"
    assert "no winner" in render_ansi(g)


def test_finished_game_is_shown_as_finished():
    *_, g = _played(0, "greedy")
    text = render_ansi(g, 0)
    assert "game over" in text.splitlines()[0] and "to act" not in text
    assert not any(ln.startswith(">") for ln in text.splitlines())
    assert "to act" not in render_html(g) and "game over" in render_html(g)


def test_win_lines_explain_the_scoring():
    *_, g = _played(3, "greedy")
    wins = g.wins(0)
    assert wins
    hands = hand_result_lines(g, 0)
    for w in wins:
        head, reading, pays = win_lines(g, w)
        assert head.startswith(f"{seat_name(w['seat'])} wins by ") and f"base {w['base']}" in head
        assert reading.startswith("    hand read as: ") and "; pair " in reading
        assert str(3 * w["base"]) in pays
        assert "  " + head in hands
    assert "no winner" not in "\n".join(hands)
    assert hands[-1] == "  points this hand: " + "  ".join(
        f"{seat_name(p)} {int(d):+d}" for p, d in enumerate(g.hand_deltas(0)))


# ---- rgb picture ---------------------------------------------------------------------
def test_rgb_picture_has_one_shape_and_draws_every_digit():
    shapes = {render_rgb(g).shape for g in _played(3, "greedy", every=10)}
    assert len(shapes) == 1   # a fixed frame size, as video recorders need
    (h, w, c), = shapes
    assert c == 3 and 300 <= h <= 1000 and 300 <= w <= 1000
    assert render_rgb(Game(seed=0)).dtype == np.uint8

    def card(number, face=0, copy=0):
        img = np.empty((CH, CW, 3), np.uint8)
        img[:] = BG
        _card(img, 0, 0, (face * 9 + number - 1) * 4 + copy)
        return img
    for face in range(4):
        cards = [card(n, face) for n in range(1, 10)]
        for i in range(9):
            for j in range(i):   # same face and circle colour: only the digit differs
                assert not np.array_equal(cards[i], cards[j]), (face, i + 1, j + 1)
    assert (card(7) != card(1)).any(axis=2).sum() >= 6
    digits = [FONT[str(n)] for n in range(10)]
    assert all(d.any() for d in digits)
    assert len({d.tobytes() for d in digits}) == 10


# ---- HTML without CJK fonts ------------------------------------------------------------
def _ascii_words(html):
    text = re.sub(r"[^\x00-\x7f]", " ", re.sub(r"<(?!/?title)[^>]*>", " ", html))
    return set(re.findall(r"[A-Za-z][A-Za-z0-9/]*", text))


def test_html_view_needs_no_cjk_font():
    for g in _played(0, "random", every=15):
        en = render_html(g)
        assert en.isascii()
        assert g._repr_html_() == en
        ja = render_html(g, "ja")
        assert re.search(r"[^\x00-\x7f]", ja)
        # every word of the English view is still there when the CJK glyphs cannot be drawn
        assert _ascii_words(en) <= _ascii_words(ja), _ascii_words(en) - _ascii_words(ja)
    for label in ("East", "South", "West", "North", "hand", "river", "square", "cards:", "Majiang"):
        assert label in en or label.lower() in en.lower()
