"""Golden playthroughs (OpenSpiel style): seeded games written out as readable
text, one block per decision: hand, lap, seat and phase, the legal actions with
their ids and names, the acting seat's observation summarised per segment, the
action taken and the rewards of that step; each file ends with the game's
record summary (wins, deltas, scores) and a digest of all four seats'
observations before every decision.

Any change of behaviour shows up as a line diff and has to be deliberate:
regenerate with ``MAJIANG_REGEN_GOLDEN=1 python -m pytest tests/engine/test_golden.py``
(or ``python tests/engine/test_golden.py``), review the diff, and bump the environment
version if the public behaviour changed.

Action and card names are made here, from the action table of docs/api.md, so the
files do not change when ``majiang_env.engine.rules.action_name`` is reworded. The
policies are also local (a copy of ``helpers.biased_choice``), for the same
reason.
"""
import difflib
import hashlib
import json
import os
import random
import sys
from pathlib import Path

import pytest

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parents[2]))

from majiang_env import Game, RuleConfig, replay  # noqa: E402
from majiang_env.engine.kernel.observe import (  # noqa: E402
    OBS_CLAIM,
    OBS_DRAWN,
    OBS_HAND,
    OBS_MELD,
    OBS_RFLAG,
    OBS_RIVER,
    OBS_SCALAR,
    OBS_SIDE,
    OBS_SIZE,
)

GOLDEN_DIR = Path(__file__).parent / "golden"

# action ids (docs/api.md)
A_DISCARD, A_ANKAN, A_MINKAN, A_TSUMO, A_PASS, A_DRAW = 0, 36, 72, 108, 109, 110
A_PUNG, A_CHOW, A_RON, A_EXCHANGE = 111, 114, 117, 120
NUM_ACTIONS, NUM_KINDS = 156, 36
REGEN = os.environ.get("MAJIANG_REGEN_GOLDEN") == "1"

# name: (rule overrides, seed, policy, auto_forced, what the file is for)
CASES = {
    "seed7_one_hand_uniform": (
        dict(hands_per_game=1), 7, "uniform", False,
        "the game of the former playthrough_seed7.json: one hand, otherwise default rules, "
        "random.Random(7).choice over the legal actions, every forced action asked for"),
    "default_two_hands_seed20": (
        dict(hands_per_game=2), 20, "biased", True,
        "default rules but two hands; a ron and a tsumo"),
    "previous_no_exchange_seed6": (
        dict(hands_per_game=1, chow_from="previous", exchange=False), 6, "biased", True,
        "chow from the previous seat, no exchange; a tsumo"),
    "drawn_public_nokuikae_furiten_seed5": (
        dict(hands_per_game=1, discard_drawn=True, side_cards_public=True, kuikae=False,
             furiten=True), 5, "biased", True,
        "drawn card discardable, side cards public, no kuikae, furiten; a ron"),
    "yaku_close1_winner_only_seed27": (
        dict(hands_per_game=1, require_yaku=True, wins_to_close=1, payment="winner_only"),
        27, "biased", False,
        "a pattern required, the hand closes at the first win, only the winner scores; "
        "every forced action asked for; a tsumo"),
}
# (the seeds of the biased games were picked so that wins happen; a biased game of
# four hands is about 200 KB, so the files hold one or two hands each)


# ---- policies (local copies, so the golden games do not move with tests/helpers.py)
def uniform_choice(rng, legal):
    return rng.choice(legal)


def biased_choice(rng, legal):
    """Prefer wins, then (70 %) calls and kans; as tests/helpers.py::biased_choice."""
    wins = [a for a in legal if a == A_TSUMO or A_RON <= a < A_EXCHANGE]
    if wins:
        return rng.choice(wins)
    calls = [a for a in legal if A_ANKAN <= a <= A_TSUMO or A_PUNG <= a < A_EXCHANGE]
    if calls and rng.random() < 0.7:
        return rng.choice(calls)
    return rng.choice(legal)


POLICIES = {"uniform": uniform_choice, "biased": biased_choice}


# ---- names, from docs/api.md and docs/rules.md §1 (kind = face * 9 + number - 1)
COLOUR_LETTERS = "bryg"  # 青 blue, 赤 red, 黄 yellow, 緑 green


def kind(k):
    k = int(k)
    return f"{COLOUR_LETTERS[k // 9]}{k % 9 + 1}" if 0 <= k < NUM_KINDS else f"?{k}"


def name(a):
    a = int(a)
    if a < A_ANKAN:
        return f"discard {kind(a - A_DISCARD)}"
    if a < A_MINKAN:
        return f"ankan {kind(a - A_ANKAN)}"
    if a < A_TSUMO:
        return f"addkan {kind(a - A_MINKAN)}"
    if a == A_TSUMO:
        return "tsumo"
    if a == A_PASS:
        return "pass"
    if a == A_DRAW:
        return "draw"
    if a < A_CHOW:
        return f"pung +{a - A_PUNG + 1}"
    if a < A_RON:
        return f"chow {('low', 'mid', 'high')[a - A_CHOW]}"
    if a < A_EXCHANGE:
        return f"ron +{a - A_RON + 1}"
    if a < NUM_ACTIONS:
        return f"exchange {kind(a - A_EXCHANGE)}"
    return f"?{a}"


def act(a):
    return f"{a} {name(a)}"


def legal_str(legal):
    """The legal actions, ids and names; moves on a kind grouped by move:
    "discard 0 b1, 4 b5; ankan 40 b5; 108 tsumo"."""
    groups = []
    for a in legal:
        move, _, arg = name(a).partition(" ")
        if a < A_TSUMO or a >= A_EXCHANGE:
            if groups and groups[-1][0] == move:
                groups[-1][1].append(f"{a} {arg}")
            else:
                groups.append((move, [f"{a} {arg}"]))
        else:
            groups.append((None, [act(a)]))
    return "; ".join((f"{m} " if m else "") + ", ".join(xs) for m, xs in groups)


# ---- the observation, per segment of majiang_env/engine/kernel/observe.py ----------------
MELD_TYPES = {1: "pung", 2: "chow", 3: "ankan", 4: "addkan"}
SCALARS = ("seat", "hand", "start", "lap", "phase", "slot", "wins", "took", "pick", "exch_left")


def _counts(v):
    """Counts per kind (36 values), grouped by colour as in mahjong notation
    (b1256 = b1 b2 b5 b6); a count outside 0-4 as kind=value."""
    out, odd = [], []
    for f in range(4):
        digits = ""
        for j in range(9):
            c = int(v[f * 9 + j])
            if 0 <= c <= 4:
                digits += str(j + 1) * c
            else:
                odd.append(f"{kind(f * 9 + j)}={c}")
        if digits:
            out.append(COLOUR_LETTERS[f] + digits)
    return " ".join(out + odd)


def _kind1(v):
    """A kind + 1 value (0 = none)."""
    return kind(int(v) - 1) if v else "."


def _flags(v):
    v = int(v)
    s = ""
    if v & 15:
        s += "p" + "".join(str(r) for r in range(4) if v >> r & 1)
    if v & 240:
        s += "w" + "".join(str(r) for r in range(4) if v >> (4 + r) & 1)
    if v & 256:
        s += "k"
    if v & ~511:
        s += f"x{v & ~511:#x}"
    return s


def _per_seat(parts):
    return "; ".join(f"r{r}: {p}" for r, p in enumerate(parts) if p)


def obs_lines(o):
    """The observation (int16[OBS_SIZE]) as one line per segment; relative seats
    r0 (the observer) .. r3. Every non-zero entry is shown, and a segment with
    none is left out, so the summary is lossless."""
    assert o.shape == (OBS_SIZE,)
    river = []
    for r in range(4):
        v = [int(x) for x in o[OBS_RIVER + r * 18:OBS_RIVER + r * 18 + 18]]
        while v and v[-1] == 0:
            v.pop()
        river.append(" ".join(_kind1(x) for x in v))
    rflag = [f"r{r}.{i}={_flags(o[OBS_RFLAG + r * 18 + i])}"
             for r in range(4) for i in range(18) if o[OBS_RFLAG + r * 18 + i]]
    melds = []
    for r in range(4):
        ms = []
        for i in range(4):
            t, k, c = (int(x) for x in o[OBS_MELD + (r * 4 + i) * 3:OBS_MELD + (r * 4 + i) * 3 + 3])
            if t or k or c:
                ms.append(f"{MELD_TYPES.get(t, f't{t}')} {_kind1(k)}" + (f"<{_kind1(c)}" if c else ""))
        melds.append(", ".join(ms))
    claim = [f"r{r}:{_kind1(o[OBS_CLAIM + r])}" for r in range(4) if o[OBS_CLAIM + r]]
    s = [int(x) for x in o[OBS_SCALAR:OBS_SCALAR + 24]]
    scal = [f"{n}={x}" for n, x in zip(SCALARS, s, strict=False) if x]
    scal += [f"{n}={','.join(map(str, s[i:i + 4]))}"
             for n, i in (("retired", 10), ("scores", 14), ("left", 18))
             if any(s[i:i + 4])]
    scal += [f"s{i}={s[i]}" for i in (22, 23) if s[i]]
    segs = [("hand", _counts(o[OBS_HAND:OBS_DRAWN])),
            ("drawn", _counts(o[OBS_DRAWN:OBS_SIDE])),
            ("side", _per_seat([_counts(o[OBS_SIDE + r * NUM_KINDS:OBS_SIDE + (r + 1) * NUM_KINDS])
                                for r in range(4)])),
            ("river", _per_seat(river)),
            ("rflag", " ".join(rflag)),
            ("meld", _per_seat(melds)),
            ("claim", " ".join(claim)),
            ("scalar", " ".join(scal))]
    return [f"  obs {n + ':':7} {v}" for n, v in segs if v]


# ---- the playthrough ----------------------------------------------------------------
def _flat_decisions(rec):
    return [(h["index"], d[0], d[1]) for h in rec["hands"] for d in h["decisions"]]


def _nums(xs):
    return " ".join(str(int(x)) for x in xs)


def playthrough(case):
    """The golden text of ``case`` (a key of CASES)."""
    overrides, seed, policy, auto_forced, about = CASES[case]
    rules = RuleConfig(**overrides)
    choose = POLICIES[policy]
    rng = random.Random(seed)
    g = Game(rules, seed=seed, auto_forced=auto_forced)
    lines = [
        f"# majiang golden playthrough {case}: {about}",
        f"# format majiang-record/1, seed {seed}, auto_forced {auto_forced}, "
        f"policy {policy} (random.Random({seed}))",
        "# rules " + " ".join(f"{k}={v}" for k, v in rules.to_dict().items()),
        "# kinds: colour letter (b 青 blue, r 赤 red, y 黄 yellow, g 緑 green) + number; b1 = kind 0;",
        "#   cards held (hand, drawn, side) grouped by colour: b1256 = b1 b2 b5 b6",
        "# obs: r0..r3 = seats relative to the acting seat; river in order (. = empty);",
        "#   rflag r<seat>.<index>=p<seats> picked up by / w<seats> won on by / k kan card;",
        "#   meld <type> <kind>[<claimed kind]; claim r<seat>:<kind>; scalars named as in observe.py;",
        "#   only non-zero entries are shown, and a segment with none is left out",
        "# reward: points each seat gained in hands that closed during the step (forced actions included)",
        "# forced: an action that was the only legal one, applied by the environment",
    ]
    obs_digest = hashlib.sha256()
    shown = 0          # decisions of the record already written
    hands_shown = 0
    legal_sets = []    # (hand, legal) of every decision, forced ones included
    n = 0

    def hand_headers(rec, h):
        """Write the head of every hand up to ``h`` not written yet: its squares."""
        nonlocal hands_shown
        while hands_shown <= h:
            hr = rec["hands"][hands_shown]
            lines.append("")
            lines.append(f"== hand {hr['index']}, start seat {hr['start_seat']}")
            lines.extend(f"square {p}: {_nums(sq)}" for p, sq in enumerate(hr["squares"]))
            hands_shown += 1

    def catch_up(rec, mine=None):
        """Write the decisions the record has beyond ``shown`` (the first is ``mine``)."""
        nonlocal shown
        flat = _flat_decisions(rec)
        for h, seat, a in flat[shown:]:
            hand_headers(rec, h)
            if mine is not None:
                assert (h, seat, a) == mine, ((h, seat, a), mine)
                mine = None
            else:
                lines.append(f"  forced: hand {h} seat {seat} {act(a)}")
                legal_sets.append((h, [a]))
        assert mine is None
        shown = len(flat)

    catch_up(g.record())
    while not g.done:
        legal = g.legal_actions()
        seat = g.current_player
        hand = g.hand_index
        hand_headers(g.record(), hand)
        for s in range(4):
            obs_digest.update(g.observe(s).tobytes())
        n += 1
        lines.append("")
        lines.append(f"[{n}] hand {hand} lap {g.lap} seat {seat} phase {g.phase}")
        lines.append(f"  legal ({len(legal)}): {legal_str(legal)}")
        lines.extend(obs_lines(g.observe(seat)))
        a = choose(rng, legal)
        legal_sets.append((hand, legal))
        reward = g.step(a)
        lines.append(f"  action: {act(a)}   reward {_nums(reward)}")
        catch_up(g.record(), mine=(hand, seat, a))

    rec = g.record(legal=True)
    # the legal sets written above are the record's own, decision by decision
    assert [(h["index"], d[2]) for h in rec["hands"] for d in h["decisions"]] == legal_sets
    lines.append("")
    lines.append("== final record")
    for hr in rec["hands"]:
        lines.append(f"hand {hr['index']}: {len(hr['decisions'])} decisions, {len(hr['wins'])} wins, "
                     f"deltas {_nums(hr['deltas'])}")
        lines.extend(f"  win {json.dumps(w, ensure_ascii=False, sort_keys=True)}" for w in hr["wins"])
    lines.append(f"scores {_nums(rec['scores'])}")
    lines.append(f"observation sha256 (all four seats before every decision) {obs_digest.hexdigest()}")
    return "\n".join(lines) + "\n"


# ---- the text back into a record ----------------------------------------------------
def record_from_text(text):
    """The majiang-record/1 dict (with legal sets) that a golden text holds, plus its
    observation digest: the text is a complete account of the game."""
    lines = text.splitlines()
    head = lines[1].split()
    seed = int(head[4].rstrip(","))
    rules = {}
    for kv in lines[2].split()[2:]:
        k, v = kv.split("=")
        rules[k] = {"True": True, "False": False}.get(v, int(v) if v.isdigit() else v)
    hands, legal, digest, scores = [], None, None, None
    for ln in lines:
        w = ln.split()
        if ln.startswith("== hand "):
            hands.append({"index": int(w[2].rstrip(",")), "start_seat": int(w[5]), "squares": [],
                          "decisions": [], "wins": [], "deltas": None})
        elif ln.startswith("square "):
            hands[-1]["squares"].append([int(x) for x in w[2:]])
        elif ln.startswith("["):
            seat = int(w[6])
        elif ln.startswith("  legal ("):
            legal = [int(x) for x in ln.split(": ", 1)[1].replace(",", " ").replace(";", " ").split()
                     if x.isdigit()]
        elif ln.startswith("  action: "):
            hands[-1]["decisions"].append([seat, int(w[1]), legal])
        elif ln.startswith("  forced: "):
            h = int(w[2])
            hands[h]["decisions"].append([int(w[4]), int(w[5]), [int(w[5])]])
        elif ln.startswith("hand ") and "deltas" in ln:  # the final record: wins follow
            h = int(w[1].rstrip(":"))
            hands[h]["deltas"] = [int(x) for x in ln.split("deltas ")[1].split()]
        elif ln.startswith("  win "):
            hands[h]["wins"].append(json.loads(ln[6:]))
        elif ln.startswith("scores "):
            scores = [int(x) for x in w[1:]]
        elif ln.startswith("observation sha256"):
            digest = w[-1]
    rec = {"format": "majiang-record/1", "rules": rules, "seed": seed, "hands": hands, "scores": scores}
    return rec, digest


# ---- tests ------------------------------------------------------------------------------
def _diff(want, got, path):
    d = list(difflib.unified_diff(want.splitlines(), got.splitlines(), f"{path} (golden)",
                                  "fresh playthrough", n=2, lineterm=""))
    head = "\n".join(d[:60])
    return (f"{path.name} differs from a fresh playthrough (first differing lines below; "
            f"MAJIANG_REGEN_GOLDEN=1 regenerates after a deliberate change):\n{head}"
            + (f"\n... ({len(d) - 60} more diff lines)" if len(d) > 60 else ""))


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_playthrough(case):
    path = GOLDEN_DIR / f"{case}.txt"
    got = playthrough(case)
    if REGEN:
        path.write_text(got, encoding="utf-8")
    assert path.exists(), f"{path} is missing; MAJIANG_REGEN_GOLDEN=1 writes it"
    want = path.read_text(encoding="utf-8")
    if want != got:
        pytest.fail(_diff(want, got, path), pytrace=False)


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_text_is_a_replayable_record(case):
    """Parsed back, the text is the game's strict majiang-record/1 record."""
    rec, digest = record_from_text((GOLDEN_DIR / f"{case}.txt").read_text(encoding="utf-8"))
    g = replay(rec)
    assert g.record(legal=True) == rec
    assert len(digest) == 64


def test_golden_files_are_the_cases_and_small():
    files = sorted(GOLDEN_DIR.iterdir())
    assert [f.name for f in files] == sorted(f"{c}.txt" for c in CASES)
    assert sum(f.stat().st_size for f in files) < 400_000
    wins = [ln for f in files for ln in f.read_text(encoding="utf-8").splitlines()
            if ln.startswith("  win {")]
    assert len(wins) >= 4 and any('"from": null' in w for w in wins)  # wins, a tsumo among them


if __name__ == "__main__":
    GOLDEN_DIR.mkdir(exist_ok=True)
    for c in CASES:
        (GOLDEN_DIR / f"{c}.txt").write_text(playthrough(c), encoding="utf-8")
