"""Terminal front-ends: watch a game between agents, or play one seat yourself.

``python -m majiang_env`` runs :func:`watch`; ``python -m majiang_env play``
runs :func:`play`. Agents are named as in ``majiang_env.agents``
(the registry: :func:`agent_names` lists them, ``register_agent`` adds one), so
an agent registered there is playable here at once. Names are English by default (``lang="ja"``: Japanese),
and every hand's result is written by the render module's
``hand_result_lines`` / ``win_lines``: hands are numbered and wins explained
the same way as in ``render_ansi``.

:func:`play` reads moves from ``stdin`` and writes to ``stdout`` (both
injectable, for tests and scripts). The human sees only what their seat may
see: the table is ``render_ansi(game, seat)``, and another seat's exchange
shows as "sets a card aside" unless the side cards are public. Bad input (any
line: a number out of range however long, a word that is no move, text that is
not valid in the terminal's encoding) gets a message and the prompt again; ``q``, end of input (Ctrl-D) and Ctrl-C leave
the game cleanly.
"""
from __future__ import annotations

import re
import sys

from ..engine.checks import as_bool, as_seat, as_seed, show
from ..engine.game import Game
from ..engine.kernel.observe import OBS_CLAIM
from ..engine.registry import agent_names, resolve
from ..engine.rules import (
    A_CHOW,
    A_EXCHANGE,
    A_PUNG,
    A_RON,
    A_TSUMO,
    NUM_ACTIONS,
    NUM_KINDS,
    action_name,
    check_lang,
    kind_name,
    make_rules,
    seat_name,
)
from ..engine.runner import GamePlayer
from .render import hand_result_lines, render_ansi, win_lines

__all__ = ["play", "watch", "agent_names", "move_text", "INTERRUPTED"]

INTERRUPTED = 130              # exit status after Ctrl-C (128 + SIGINT), as shells report it
QUIT_WORDS = ("q", "quit", "exit")
HELP_WORDS = ("?", "h", "help")
_CHOW_PLACES = ("low", "middle", "high")
_CLAIM_TEXT = {"en": {"pung": "pung {seat}'s discard", "chow": "chow {seat}'s discard",
                      "ron": "ron on {seat}'s discard"},
               "ja": {"pung": "刻 {seat}", "chow": "順 {seat}", "ron": "栄 {seat}"}}
_HIDDEN_EXCHANGE = {"en": "sets a card aside (exchange)", "ja": "変 (伏せ札)"}


# ---- one decision in words ---------------------------------------------------------
def _claim(a: int, actor: int, rules):
    """(kind of claim, seat whose discard it takes, chow place) of a take-phase claim, or None."""
    if A_PUNG <= a < A_CHOW:
        return "pung", (actor + a - A_PUNG + 1) % 4, None
    if A_CHOW <= a < A_RON:
        return "chow", (actor + (1 if rules.chow_from == "next" else 3)) % 4, a - A_CHOW
    if A_RON <= a < A_EXCHANGE:
        return "ron", (actor + a - A_RON + 1) % 4, None
    return None


def move_text(a, actor, rules=None, lang: str = "en", card=None, hidden: bool = False) -> str:
    """Action ``a`` of seat ``actor`` for people, naming the seat a claim takes from:
    ``discard B5``, ``draw``, ``pung West's discard G4``, ``chow North's discard G4
    (G3-G5)``, ``ron on East's discard``. ``card``: the claimed discard's kind when
    known; ``hidden``: the viewer may not see which card an exchange sets aside."""
    if not isinstance(a, int) or isinstance(a, bool) or not 0 <= a < NUM_ACTIONS:
        raise ValueError(f"action must be an int in 0..{NUM_ACTIONS - 1}, got {show(a)}")
    actor, lang, rules = as_seat(actor, "actor"), check_lang(lang), make_rules(rules)
    if card is not None and (not isinstance(card, int) or not 0 <= card < NUM_KINDS):
        raise ValueError(f"card must be a kind 0..35 or None, got {show(card)}")
    if a >= A_EXCHANGE and as_bool("hidden", hidden):
        return _HIDDEN_EXCHANGE[lang]
    claim = _claim(a, actor, rules)
    if claim is None:
        return action_name(a, lang)
    what, src, place = claim
    text = _CLAIM_TEXT[lang][what].format(seat=seat_name(src, lang))
    if card is not None:
        text += f" {kind_name(card, lang)}"
    if place is not None:
        if card is not None and 0 <= card - place and (card - place) % 9 <= 6:
            low = card - place
            text += f" ({kind_name(low, lang)}-{kind_name(low + 2, lang)})"
        else:
            text += f" ({_CHOW_PLACES[place]} card of the run)"
    return text


# ---- following a game --------------------------------------------------------------
class _Log:
    """Writes what happened in a game since the last call, as ``viewer`` may see it
    (None: spectator): the decisions (``moves``), each win explained when it
    happens, and each finished hand's result."""

    def __init__(self, game, say, lang, viewer=None, moves=True):
        self.game, self.say, self.lang, self.viewer, self.moves = game, say, lang, viewer, moves
        self.hand, self.seen, self.wins_told = 0, 0, 0
        self.forced = set()      # (hand, decision index) of the viewer's moves made for them
        if moves:
            self._hand_starts(0)

    def _hand_starts(self, h):
        n = self.game.rules.hands_per_game
        self.say(f"hand {h + 1}/{n} starts; {seat_name(h % 4, self.lang)} takes the first turn")

    def made_for_viewer(self):
        """The next decision is the viewer's only legal move, made for them."""
        g = self.game
        self.forced.add((g.hand_index, len(g.record()["hands"][g.hand_index]["decisions"])))

    def _who(self, s):
        return "you" if s == self.viewer else seat_name(s, self.lang)

    def catch_up(self):
        g, lang = self.game, self.lang
        hands = g.record()["hands"]
        while self.hand < len(hands):
            h = self.hand
            decisions, wins = hands[h]["decisions"], g.wins(h)
            for i, (s, a) in enumerate(decisions[self.seen:] if self.moves else (), self.seen):
                hidden = self.viewer is not None and s != self.viewer and not g.rules.side_cards_public
                note = " (your only legal move, made for you)" if (h, i) in self.forced else ""
                self.say(f"  {self._who(s)}: {move_text(a, s, g.rules, lang, hidden=hidden)}{note}")
                if (a == A_TSUMO or A_RON <= a < A_EXCHANGE) and self.wins_told < len(wins):
                    self.say(*("  " + line for line in win_lines(g, wins[self.wins_told], lang)))
                    self.wins_told += 1
            self.seen = len(decisions)
            if not (g.done or h < g.hand_index):
                return
            self.say(*hand_result_lines(g, h, lang, detail=not self.moves), "")
            self.hand, self.seen, self.wins_told = h + 1, 0, 0
            if self.moves and not g.done:
                self._hand_starts(h + 1)


def _writer(stream):
    def say(*lines):
        stream.write("".join(f"{line}\n" for line in lines))
        stream.flush()
    return say


def _stream(name, value, default, method):
    stream = default if value is None else value
    if not callable(getattr(stream, method, None)):
        raise ValueError(f"{name} must be a text stream with .{method}(), got {type(value).__name__}")
    return stream


def _agent_specs(name, specs, n):
    """``specs`` as a list of ``n`` resolved agent specs: one spec for all, or ``n`` of them."""
    if not isinstance(specs, list) and not (isinstance(specs, tuple) and len(specs) == n):
        specs = [specs] * n
    if len(specs) != n:
        raise ValueError(f"{name} must be an agent spec (a name: {', '.join(agent_names())}; text with "
                         f"parameters, a weights file, an agent object or class), or a list of {n} of them; "
                         f"got {show(specs)}")
    return [resolve(s, f"{name}[{i}]") for i, s in enumerate(specs)]


def _line_up(seats, specs, lang):
    """``East greedy, South random, ...``: who plays which seat."""
    return ", ".join(f"{seat_name(s, lang)} {ref.name}" for s, ref in zip(seats, specs, strict=True))


def _scores_line(game, lang):
    return "  ".join(f"{seat_name(p, lang)} {int(v):+d}" for p, v in enumerate(game.scores))


# ---- watch ---------------------------------------------------------------------------
def watch(agents=("greedy", "random", "random", "random"), seed=0, lang: str = "en", rules=None,
          verbose: bool = False, stdout=None) -> Game:
    """Play one game between ``agents`` (four names of :func:`agent_names`, classes or
    factories; seat i's is seeded ``seed * 4 + i``) and write it to ``stdout``: each
    hand's last table (spectator view, every hand open) and its result with every win
    explained; ``verbose`` also writes every decision. Returns the finished ``Game``."""
    specs = _agent_specs("agents", agents, 4)
    seed, lang, rules = as_seed(seed), check_lang(lang), make_rules(rules)
    say = _writer(_stream("stdout", stdout, sys.stdout, "write"))
    g = Game(rules, seed=seed)
    players = [GamePlayer(ref, (seed * 4 + s) % 2 ** 64, rules) for s, ref in enumerate(specs)]
    log = _Log(g, say, lang, viewer=None, moves=as_bool("verbose", verbose))
    decisions = 0
    while not g.done:
        before = render_ansi(g, None, lang)
        g.step(players[g.current_player](g))
        decisions += 1
        if g.closed_hand is not None:
            say(before)  # the table at the hand's last decision
        if verbose or g.closed_hand is not None:
            log.catch_up()
    say(f"game over after {decisions} decisions ({_line_up(range(4), specs, lang)}; seed {seed}); "
        f"final scores: {_scores_line(g, lang)}")
    return g


# ---- play ----------------------------------------------------------------------------
class _Leave(Exception):
    """The player left (q, or end of input); the message says how."""


def _menu(game, seat, lang):
    """The human's legal moves as [(action, label)], labels naming the claimed discard."""
    obs = game.observe(seat)
    out = []
    for a in game.legal_actions():
        claim = _claim(a, seat, game.rules)
        card = None
        if claim is not None:
            k = int(obs[OBS_CLAIM + (claim[1] - seat) % 4]) - 1
            card = k if k >= 0 else None
        out.append((a, move_text(a, seat, game.rules, lang, card=card)))
    return out


def _menu_lines(menu, width=78):
    cells = [f"{i:>3}) {label}" for i, (_, label) in enumerate(menu, 1)]
    col = max(len(c) for c in cells) + 2
    per_line = max(1, width // col)
    return ["".join(c.ljust(col) for c in cells[i:i + per_line]).rstrip()
            for i in range(0, len(cells), per_line)]


_ACTION_NAMES = {action_name(a, lang).lower(): a for a in range(NUM_ACTIONS) for lang in ("en", "ja")}


def _choice(text, menu):
    """The action the player typed (a menu number or a move's name), or (None, why not)."""
    n = len(menu)
    if not text:
        return None, f"type the number of a move, 1-{n} (? for help, q to quit)"
    if re.fullmatch(r"[+-]?\d+", text):
        digits = text.lstrip("+-").lstrip("0")      # (int() refuses more than 4300 digits)
        i = (-1 if text.startswith("-") else 1) * int(digits or "0") if len(digits) <= 6 else None
        if i is not None and 1 <= i <= n:
            return menu[i - 1][0], None
        return None, f"there is no move {show(text, 40) if i is None else i}; choose a number from 1 to {n}"
    key = " ".join(text.lower().split())
    for a, label in menu:
        if key in (label.lower(), action_name(a, "en").lower(), action_name(a, "ja").lower()):
            return a, None
    if key in _ACTION_NAMES:
        return None, f"{show(text, 40)} is not a legal move now; the legal moves are numbered 1-{n} above"
    return None, f"{show(text, 40)} is not a move; type a number from 1 to {n} (? for help, q to quit)"


_HELP = ("Type the number of a move and press Enter (the move's name, e.g. 'draw', works too).\n"
         "? shows this help and the moves again; q quits. The table shows only what your seat\n"
         "may see; its last line explains every mark.\n"
         "At the start of each hand you hold 17 cards and set 4 of them aside, one per move:\n"
         "'exchange B5' puts a B5 among your side cards (the exchange), back to 13 in the end.\n"
         "A move that is your only legal one (often a draw) is made for you and marked so.")


def _ask(game, seat, lang, inp, out, say):
    """Show the table and the legal moves to the human at ``seat``; the action they choose."""
    say("", render_ansi(game, seat, lang), "your moves:")
    menu = _menu(game, seat, lang)
    say(*_menu_lines(menu))
    echo = not (hasattr(inp, "isatty") and inp.isatty())
    while True:
        out.write(f"your move (1-{len(menu)}, ? help, q quit): ")
        out.flush()
        try:
            line = inp.readline()
        except UnicodeDecodeError:
            say("", "that line is not text in the terminal's encoding; type the number of a move")
            continue
        if not line:
            raise _Leave("end of input: you left the game")
        # (what cannot be written as UTF-8, such as lone surrogates, is shown escaped)
        line = line.encode("utf-8", "backslashreplace").decode("utf-8")
        if echo:  # piped input: show what was read, so the transcript reads like a session
            out.write(line if line.endswith("\n") else line + "\n")
        text = line.strip()
        if text.lower() in QUIT_WORDS:
            raise _Leave("you left the game")
        if text.lower() in HELP_WORDS:
            say(_HELP, "your moves:", *_menu_lines(menu))
            continue
        action, problem = _choice(text, menu)
        if action is not None:
            return action
        say(problem)


def play(seat=0, opponents="greedy", seed=None, lang: str = "en", rules=None,
         stdin=None, stdout=None) -> int:
    """Play one game at ``seat`` (0-3: East South West North) against ``opponents``
    (a name of :func:`agent_names`, a policy class or factory, or a list of three,
    for the other seats in seat order), reading moves from ``stdin`` and writing to
    ``stdout`` (default: the process's). ``seed=None`` draws one and prints it.

    Returns the exit status: 0 when the game is over or the player left (``q``,
    end of input), :data:`INTERRUPTED` after Ctrl-C.
    """
    seat, lang, rules = as_seat(seat), check_lang(lang), make_rules(rules)
    seed = as_seed(seed)
    specs = _agent_specs("opponents", opponents, 3)
    inp = _stream("stdin", stdin, sys.stdin, "readline")
    out = _stream("stdout", stdout, sys.stdout, "write")
    say = _writer(out)
    others = [s for s in range(4) if s != seat]
    players = {s: GamePlayer(ref, (seed * 4 + s) % 2 ** 64, rules) for s, ref in zip(others, specs, strict=True)}
    try:
        game = Game(rules, seed=seed, auto_forced=False)   # forced moves made here, so the human's are told
        say(f"Majiang: you play {seat_name(seat, lang)} (seat {seat}) against {_line_up(others, specs, lang)}; "
            f"{rules.hands_per_game} hand(s), seed {seed}.", _HELP, "")
        log = _Log(game, say, lang, viewer=seat, moves=True)
        while not game.done:
            p, legal = game.current_player, game.legal_actions()
            if len(legal) == 1:             # a forced move: made for whoever is to act
                if p == seat:
                    log.made_for_viewer()
                action = legal[0]
            elif p == seat:
                log.catch_up()
                action = _ask(game, seat, lang, inp, out, say)
            else:
                action = players[p](game)
            game.step(action)
        log.catch_up()
        place = 1 + sum(int(v) > int(game.scores[seat]) for v in game.scores)
        say(f"game over. final scores: {_scores_line(game, lang)}; you ({seat_name(seat, lang)}) "
            f"placed {place} of 4")
        return 0
    except _Leave as why:
        say("", f"{why}; game abandoned (seed {seed}).")
        return 0
    except KeyboardInterrupt:
        say("", f"interrupted (Ctrl-C); game abandoned (seed {seed}).")
        return INTERRUPTED
