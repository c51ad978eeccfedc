"""An independent reading of the greedy policy (the module docstring of
majiang_env/engine/kernel/greedy.py, re-read in plain Python): its tie set at a
position. Used by tests/test_greedy.py and by the feature reference's greedy flags."""
import itertools

import numpy as np

from majiang_env.engine import tables
from majiang_env.engine.kernel.observe import OBS_CLAIM, OBS_DRAWN, OBS_HAND, OBS_MELD, OBS_RIVER, OBS_SIDE

_ALLOC = {need: np.array([ms for ms in itertools.product(range(need + 1), repeat=4) if sum(ms) == need])
          for need in range(5)}


class RefPolicy:
    """The module docstring of kernel/greedy.py, re-read in plain Python."""

    def __init__(self, chow_off=1, kuikae=True):
        self.dt = tables.deficiency_table()
        self.chow_off, self.kuikae = chow_off, kuikae

    def d(self, cnt, n):
        need = 4 - n
        if need < 0:
            return 99
        rows = np.array([self.dt[tables.colour_key(cnt[c * 9:c * 9 + 9])] & 15 for c in range(4)], np.int64)
        al = _ALLOC[need]
        best = 99
        for pc in range(4):
            cols = al * 2 + (np.arange(4) == pc)
            best = min(best, int(rows[np.arange(4), cols].sum(1).min()))
        return best

    def acc(self, cnt, n, unseen):
        d = self.d(cnt, n)
        s = 0
        for x in range(36):
            if unseen[x] > 0 and cnt[x] < 4:
                c2 = cnt.copy()
                c2[x] += 1
                if self.d(c2, n) < d:
                    s += unseen[x]
        return s

    @staticmethod
    def unseen(obs):
        o = obs.astype(np.int64)
        seen = o[OBS_HAND:OBS_HAND + 36] + o[OBS_DRAWN:OBS_DRAWN + 36]
        seen = seen + o[OBS_SIDE:OBS_SIDE + 144].reshape(4, 36).sum(0)
        for v in o[OBS_RIVER:OBS_RIVER + 72]:
            if v:
                seen[v - 1] += 1
        for t, k, cl in o[OBS_MELD:OBS_MELD + 48].reshape(16, 3):
            if t in (1, 4):
                seen[k - 1] += 2
            elif t == 3:
                seen[k - 1] += 3
            elif t == 2:
                for kk in range(k - 1, k + 2):
                    if kk != cl - 1:
                        seen[kk] += 1
        return 4 - seen

    def ties(self, obs, mask):
        legal = [int(a) for a in np.flatnonzero(mask)]
        if len(legal) <= 1:
            return set(legal)
        wins = {a for a in legal if a in (108, 117, 118, 119)}
        if wins:
            return wins
        o = obs.astype(np.int64)
        cnt = o[OBS_HAND:OBS_HAND + 36] + o[OBS_DRAWN:OBS_DRAWN + 36]
        n = int((o[OBS_MELD:OBS_MELD + 12:3] > 0).sum())
        unseen = self.unseen(obs)

        def best_of(options):  # {action: [(counts, melds), ...]} -> tie set
            vals = {a: min(self.d(c, m) for c, m in opts) for a, opts in options.items()}
            low = min(vals.values())
            tied = [a for a in options if vals[a] == low]
            if len(tied) == 1:
                return set(tied), low
            accs = {a: max(self.acc(c, m, unseen) for c, m in options[a] if self.d(c, m) == low) for a in tied}
            top = max(accs.values())
            return {a for a in tied if accs[a] == top}, low

        def minus(c, k, t=1):
            c = c.copy()
            c[k] -= t
            return c

        if 110 in legal:
            picks = {}
            for a in legal:
                if 111 <= a <= 113:
                    k = o[OBS_CLAIM + a - 110] - 1
                    shown = (k, k)
                elif 114 <= a <= 116:
                    k = o[OBS_CLAIM + self.chow_off] - 1
                    low = k - (a - 114)
                    shown = tuple(kk for kk in range(low, low + 3) if kk != k)
                else:
                    continue
                h = minus(minus(cnt, shown[0]), shown[1])
                # kuikae=False: 打 k is illegal, but 明 k gives k up too (needs a 刻 of k)
                own_pungs = {int(kk) - 1 for t, kk, _ in o[OBS_MELD:OBS_MELD + 12].reshape(4, 3) if t == 1}
                k_ok = self.kuikae or a <= 113 or k in own_pungs
                opts = [(minus(h, y), n + 1) for y in range(36) if h[y] > 0 and (k_ok or y != k)]
                opts += [(minus(h, y, 4), n + 2) for y in range(36) if h[y] == 4]
                picks[a] = opts
            if picks:
                tied, low = best_of(picks)
                if low < self.d(cnt, n):
                    return tied
            return {110}
        options = {}
        for a in legal:
            if a >= 120:
                options[a] = [(minus(cnt, a - 120), n)]
            elif a < 36:
                options[a] = [(minus(cnt, a), n)]
            elif a < 72:
                options[a] = [(minus(cnt, a - 36, 4), n + 1)]
            elif a < 108:
                options[a] = [(minus(cnt, a - 72), n)]
        return best_of(options)[0]
