"""An independent reader of the full state (``majiang-state/1``), written from the
layout table of docs/observation.md ("Full state") alone: it shares no code with
``majiang_env.engine.kernel.fullstate``. Also the projection of a full state to
the compact observation a seat sees, written from the observation's documented
layout (docs/observation.md "Segments"), so a test can check that the state and
an observation describe the same moment."""
import numpy as np

FORMAT = "majiang-state/1"
# the documented offsets: hand, drawn, side, square, river, flags, melds, claims, scalars, size
HAND, DRAWN, SIDE, SQUARE, RIVER, RFLAG, MELD, CLAIM, SCALAR, SIZE = 0, 144, 148, 292, 436, 508, 580, 644, 660, 682
SCALAR_NAMES = ("hand_index", "start_seat", "phase", "to_act", "slot", "lap", "num_wins", "took", "picked",
                "exchange_left")


def read(x):
    """A dict of the state's parts (numpy int arrays, absolute seats)."""
    x = np.asarray(x, np.int64)
    assert x.shape == (SIZE,)
    sc = x[SCALAR:SIZE]
    out = {
        "hand": x[HAND:DRAWN].reshape(4, 36),
        "drawn": x[DRAWN:SIDE],
        "side": x[SIDE:SQUARE].reshape(4, 36),
        "square": x[SQUARE:RIVER].reshape(4, 36),
        "river": x[RIVER:RFLAG].reshape(4, 18),
        "river_flags": x[RFLAG:MELD].reshape(4, 18),
        "melds": x[MELD:CLAIM].reshape(4, 4, 4),      # type, kind + 1, claimed kind + 1, stand-in kind + 1
        "claims": x[CLAIM:SCALAR].reshape(4, 4),
        "retired": sc[10:14],
        "scores": sc[14:18],
        "square_left": sc[18:22],
    }
    for i, name in enumerate(SCALAR_NAMES):
        out[name] = int(sc[i])
    return out


def kind_totals(s):
    """How many copies of each kind the state places somewhere (4 each when every card is there)."""
    tot = np.zeros(36, np.int64)
    tot += s["hand"].sum(0) + s["side"].sum(0)
    for v in list(s["drawn"]) + list(s["square"].ravel()) + list(s["river"].ravel()):
        if v:
            tot[v - 1] += 1
    for p in range(4):
        for t, k1, c1, sb in s["melds"][p].tolist():
            if t == 0:
                continue
            k = k1 - 1
            if t in (1, 4):                    # 刻 / 明: two shown cards and a stand-in
                tot[k] += 2
            elif t == 3:                       # 暗: three shown (the fourth is in the river)
                tot[k] += 3
            else:                              # 順: the run less the claimed discard (in the river)
                for j in range(k, k + 3):
                    tot[j] += j != c1 - 1
            if t != 3:
                tot[sb - 1] += 1
    return tot


def observation_of(x, me, side_public):
    """The compact observation (int16[436]) seat ``me`` sees, from the full state ``x``."""
    s = read(x)
    obs = np.zeros(436, np.int16)
    obs[0:36] = s["hand"][me]
    if s["drawn"][me]:
        obs[36 + s["drawn"][me] - 1] = 1
    for r in range(4):
        q = (me + r) % 4
        if r == 0 or side_public:
            obs[72 + r * 36:72 + (r + 1) * 36] = s["side"][q]
        obs[216 + r * 18:216 + (r + 1) * 18] = s["river"][q]
        for i, f in enumerate(s["river_flags"][q].tolist()):
            rel = f & 256
            for q2 in range(4):
                r2 = (q2 - me) % 4
                if f >> q2 & 1:
                    rel |= 1 << r2
                if f >> (4 + q2) & 1:
                    rel |= 1 << (4 + r2)
            obs[288 + r * 18 + i] = rel
        obs[360 + r * 12:360 + (r + 1) * 12] = s["melds"][q][:, :3].ravel()
        if r:
            obs[408 + r] = s["claims"][me, q]
    mine = s["to_act"] == me
    obs[412:434] = [me, s["hand_index"], (s["start_seat"] - me) % 4, s["lap"], s["phase"], s["slot"], s["num_wins"],
                    s["took"] if mine else 0, s["picked"] if mine else 0, s["exchange_left"],
                    *np.roll(s["retired"], -me), *np.roll(s["scores"], -me), *np.roll(s["square_left"], -me)]
    return obs
