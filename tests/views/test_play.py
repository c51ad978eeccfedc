"""The command line (python -m majiang_env [watch | play]) and play mode, driven by scripted stdin."""
import io
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from majiang_env.agents import agent_names, register_agent, unregister_agent
from majiang_env.cli import main, parser
from majiang_env.views.play import INTERRUPTED, move_text, play, watch

# action ids (docs/api.md)
A_DISCARD, A_DRAW, A_PUNG, A_CHOW, A_RON, A_EXCHANGE, NUM_ACTIONS = 0, 110, 111, 114, 117, 120, 156

ROOT = Path(__file__).resolve().parents[2]
CJK = re.compile(r"[\u3000-\u9fff]")


def run_cli(*args, stdin="", timeout=120):
    return subprocess.run([sys.executable, "-m", "majiang_env", *args], input=stdin, text=True,
                          capture_output=True, cwd=ROOT, timeout=timeout)


def play_script(lines, **kw):
    out = io.StringIO()
    kw = {"seed": 5, "seat": 1, "rules": {"hands_per_game": 1}, **kw}
    rc = play(stdin=io.StringIO("".join(f"{x}\n" for x in lines)), stdout=out, **kw)
    return rc, out.getvalue()


# ---- watch (the default command) ---------------------------------------------------------
def test_watch_prints_every_hand_in_english(capsys):
    assert main(["--seed", "1", "--agents", "greedy", "random", "greedy", "random"]) == 0
    out = capsys.readouterr().out
    for h in range(1, 5):   # its own result, then a line in the table of each later hand
        assert out.count(f"hand {h}/4 over (record hands[{h - 1}]):") == 5 - h
    assert "game over after" in out and "wins by" in out and "hand read as:" in out
    assert not CJK.search(out)


def test_watch_in_japanese_and_verbose(capsys):
    assert main(["watch", "--lang", "ja", "--hands", "1", "--verbose", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "hand 1/1 starts" in out and "東: 引" in out and "hand 1/1 over" in out


def test_watch_returns_the_game_and_validates():
    g = watch(["random"] * 4, seed=3, rules={"hands_per_game": 1}, stdout=io.StringIO())
    assert g.done
    with pytest.raises(ValueError, match="list of 4"):
        watch(["random"] * 3)
    with pytest.raises(ValueError, match="unknown agent"):
        watch(["random", "random", "random", "nobody"], stdout=io.StringIO())
    with pytest.raises(ValueError, match="lang"):
        watch(lang="fr")


def test_help_is_clean_text():
    for args in (["--help"], ["play", "--help"], ["watch", "--help"]):
        r = run_cli(*args)
        assert r.returncode == 0 and r.stderr == ""
        assert r.stdout.startswith("usage: python -m majiang_env"), r.stdout
        assert "__main__" not in r.stdout and "`" not in r.stdout
    assert "play" in run_cli("--help").stdout


def test_bad_command_line_is_a_usage_error(capsys):
    for args in (["play", "--seat", "7"], ["play", "--opponents", "nobody"], ["watch", "--seed", "-1"],
                 ["play", "--lang", "fr"]):
        with pytest.raises(SystemExit) as e:
            main(args)
        assert e.value.code == 2
        assert "usage: python -m majiang_env" in capsys.readouterr().err


# ---- play: scripted stdin ----------------------------------------------------------------
def test_play_bad_input_gets_a_message_and_the_prompt_again():
    rc, out = play_script(["abc", "", "99", "0", "-3", "tsumo", "discard R9", "?", "1", "q"])
    assert rc == 0
    assert "'abc' is not a move; type a number from 1 to 14" in out
    assert "type the number of a move, 1-14" in out
    assert "there is no move 99; choose a number from 1 to 14" in out
    assert "there is no move 0;" in out and "there is no move -3;" in out
    assert "'tsumo' is not a legal move now" in out and "'discard R9' is not a legal move now" in out
    assert "Type the number of a move" in out                     # the help
    assert "  you: exchange B2" in out                            # "1" was the first move listed
    assert out.count("your move (1-14") == 9 and "your move (1-13" in out
    assert out.rstrip().endswith("you left the game; game abandoned (seed 5).")
    assert "Traceback" not in out


def test_play_accepts_a_move_by_name():
    rc, out = play_script(["exchange b3", "Exchange  R1", "q"])
    assert rc == 0 and "  you: exchange B3" in out and "  you: exchange R1" in out


def test_play_end_of_input_and_ctrl_c_leave_cleanly():
    rc, out = play_script(["1"])
    assert rc == 0 and out.rstrip().endswith("end of input: you left the game; game abandoned (seed 5).")

    class CtrlC(io.StringIO):
        def readline(self, *a):
            raise KeyboardInterrupt
    out = io.StringIO()
    assert play(seed=5, stdin=CtrlC(), stdout=out) == INTERRUPTED
    assert out.getvalue().rstrip().endswith("interrupted (Ctrl-C); game abandoned (seed 5).")


def test_play_a_whole_hand_shows_only_the_human_seat_and_explains_wins():
    rc, out = play_script(["1"] * 400, seed=7, seat=2)
    assert rc == 0
    assert out.rstrip().splitlines()[-1].startswith("game over. final scores: East ")
    assert "you (West) placed" in out
    assert "hand 1/1 over (record hands[0]):" in out
    # wins are explained when they happen: how, base = patterns, the reading, who pays
    assert re.search(r"^  \w+ wins by (ron on \w+'s discard|tsumo).*: base \d+", out, re.M)
    assert "    hand read as: " in out and re.search(r"pays? .*\d+", out)
    # the table is the human's view: other seats' hands and side cards hidden, their exchanges too
    for block in out.split("view of West (seat 2)")[1:]:
        seats = re.findall(r"^[ >](East|South|West|North) \(seat \d.*\n   hand : (.*)$", block, re.M)[:4]
        assert [s for s, _ in seats] == ["East", "South", "West", "North"]
        for seat, hand in seats:
            assert ("hidden" in hand) == (seat != "West"), (seat, hand)
    assert "East: sets a card aside (exchange)" in out
    assert not re.search(r"(East|South|North): exchange ", out)


def test_play_and_watch_against_the_shipped_policy(capsys):
    rc, out = play_script(["1"] * 400, seed=3, seat=0, opponents="pretrained")
    assert rc == 0 and "game over. final scores: East " in out and "Traceback" not in out
    assert main(["--seed", "1", "--hands", "1", "--agents", "pretrained", "greedy", "greedy", "pretrained"]) == 0
    assert "East pretrained, South greedy, West greedy, North pretrained" in capsys.readouterr().out


def test_play_in_japanese():
    rc, out = play_script(["1", "q"], lang="ja")
    assert rc == 0 and "南 (seat 1, 赤, you)" in out and "変青2" in out


def test_play_validates_its_arguments():
    for kw, match in (({"seat": 4}, "seat"), ({"seat": "1"}, "seat"), ({"opponents": "nobody"}, "unknown agent"),
                      ({"opponents": ["greedy"] * 2}, "list of 3"), ({"lang": "fr"}, "lang"),
                      ({"seed": -1}, "seed"), ({"stdin": 42}, "stdin"), ({"stdout": "x"}, "stdout"),
                      ({"rules": {"hands_per_game": 9}}, "hands_per_game")):
        with pytest.raises(ValueError, match=match):
            play(**{"stdin": io.StringIO("q\n"), "stdout": io.StringIO(), **kw})


def test_move_text():
    assert move_text(A_DISCARD + 4, 0) == "discard B5" and move_text(A_DRAW, 3) == "draw"
    assert move_text(A_PUNG, 0) == "pung South's discard"
    assert move_text(A_PUNG + 2, 0, card=22) == "pung North's discard Y5"
    assert move_text(A_RON, 2) == "ron on North's discard"
    assert move_text(A_CHOW + 1, 0, card=22) == "chow South's discard Y5 (Y4-Y6)"
    assert move_text(A_CHOW, 0, rules={"chow_from": "previous"}) == "chow North's discard (low card of the run)"
    assert move_text(A_EXCHANGE + 4, 1, hidden=True) == "sets a card aside (exchange)"
    assert move_text(A_PUNG, 0, lang="ja", card=4) == "刻 南 青5"
    for bad in ({"a": NUM_ACTIONS, "actor": 0}, {"a": True, "actor": 0}, {"a": A_DISCARD + 4, "actor": 4},
                {"a": A_PUNG, "actor": 0, "card": 36}):
        with pytest.raises(ValueError):
            move_text(**bad)


def test_a_new_policy_name_is_playable_at_once(monkeypatch):
    class FirstLegal:
        def __init__(self, seed=None):
            pass

        def __call__(self, obs):
            return int(obs["action_mask"].nonzero()[0][0])
    register_agent("first", FirstLegal)
    try:
        assert "first" in agent_names()
        assert parser().parse_args(["play", "--opponents", "first"]).opponents == "first"
        rc, out = play_script(["1"] * 400, opponents="first")
        assert rc == 0 and "against East first, West first, North first" in out
    finally:
        unregister_agent("first")


# ---- play through a real process with piped stdin -----------------------------------------
def test_play_subprocess_with_bad_input_and_eof():
    r = run_cli("play", "--seed", "5", "--seat", "1", "--hands", "1", stdin="x\n\n42\n1\nq\n")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    assert "'x' is not a move" in r.stdout and "there is no move 42" in r.stdout
    assert "you left the game" in r.stdout
    r = run_cli("play", "--seed", "5", "--hands", "1", stdin="")
    assert r.returncode == 0 and "end of input" in r.stdout and "Traceback" not in r.stderr


@pytest.mark.skipif(os.name != "posix", reason="SIGINT to a child process")
def test_play_subprocess_ctrl_c():
    # a pytest-xdist worker may ignore SIGINT, and a child inherits that: give the child the default
    # disposition, so that Python installs its KeyboardInterrupt handler as it does in a terminal
    proc = subprocess.Popen([sys.executable, "-m", "majiang_env", "play", "--seed", "5"], cwd=ROOT, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        for line in proc.stdout:   # wait until it shows the moves (then it waits for input)
            if line.startswith("your moves:"):
                break
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)      # stdin stays open: the interrupt, not an end of input, ends it
        out, err = proc.stdout.read(), proc.stderr.read()
    finally:
        proc.kill()
    assert proc.returncode == INTERRUPTED
    assert "interrupted (Ctrl-C)" in out and "Traceback" not in err
