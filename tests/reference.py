"""Slow, obviously-correct pure-Python reference of the Majiang rules.

Written from the rules of record and the API contract only (docs/rules.md, docs/api.md), for
differential testing.  Shares no code with majiang_env.  Standard library only.

Conventions where the rule book is silent are those of the reference brief
(see the module docstring of tests/test_reference_self.py and the report).
"""
from functools import lru_cache
from itertools import product

DEFAULT_RULES = {
    "hands_per_game": 4,
    "chow_from": "next",
    "exchange": True,
    "side_cards_public": False,
    "discard_drawn": False,
    "kuikae": True,
    "furiten": False,
    "require_yaku": False,
    "wins_to_close": 3,
    "payment": "zero_sum",
}

N_SLOTS = 76          # 19 laps x 4 seats
LAST_LAP = 19


def face_of(kind):
    return kind // 9


def number_of(kind):
    return kind % 9 + 1


# ---------------------------------------------------------------- scoring

# (number of melds, distinct faces) -> group g
GROUP = {(2, 2): 1, (2, 1): 2, (3, 2): 3, (3, 3): 4, (3, 1): 5,
         (4, 3): 6, (4, 2): 7, (4, 4): 8, (4, 1): 9}


def _steps_are(vs, step):
    return all(vs[i + 1] - vs[i] == step for i in range(len(vs) - 1))


def group_points(seat, melds):
    """Points of one pattern made of `melds` (0 when they form no pattern).

    A meld is (is_run, face, v, is_kan); v = number of a triplet, lowest
    number of a run."""
    n = len(melds)
    if n == 1:
        is_run, face, v, is_kan = melds[0]
        if not is_run and face == seat:
            return 10 if is_kan else v
        return 0
    runs = [m[0] for m in melds]
    if all(runs):
        base_p = 0
        ends = {1, 7}
    elif not any(runs):
        base_p = 5
        ends = {1, 9}
    else:
        return 0
    vs = sorted(m[2] for m in melds)
    shapes = []
    if _steps_are(vs, 1):
        shapes.append(1)
    if _steps_are(vs, 2):
        shapes.append(2)
    if _steps_are(vs, 3):
        shapes.append(3)
    if all(v in ends for v in vs) and set(vs) == ends:
        shapes.append(4)
    if _steps_are(vs, 0):
        shapes.append(5)
    if not shapes:
        return 0
    p = base_p + max(shapes)
    k = len(set(m[1] for m in melds))
    g = GROUP[(n, k)]
    return 10 * g + p


def pattern_total(seat, melds):
    """Best total over all ways to choose at most 3 disjoint patterns."""
    best = 0
    for labels in product(range(4), repeat=len(melds)):
        total = 0
        for lab in (1, 2, 3):
            group = [m for m, lb in zip(melds, labels, strict=True) if lb == lab]
            if group:
                total += group_points(seat, group)
        best = max(best, total)
    return best


def decompositions(counts, need):
    """All ways to split the kind counts (list of 36) into exactly `need`
    melds plus one pair.  Yields lists of (is_run, kind) for the melds."""
    results = []
    for pk in range(36):
        if counts[pk] >= 2:
            counts[pk] -= 2
            for melds in _meld_splits(counts, need):
                results.append(melds)
            counts[pk] += 2
    return results


def _meld_splits(counts, need):
    first = None
    for k in range(36):
        if counts[k] > 0:
            first = k
            break
    if first is None:
        return [[]] if need == 0 else []
    if need == 0:
        return []
    out = []
    k = first
    if counts[k] >= 3:
        counts[k] -= 3
        for rest in _meld_splits(counts, need - 1):
            out.append([(False, k)] + rest)
        counts[k] += 3
    if k % 9 <= 6 and counts[k + 1] > 0 and counts[k + 2] > 0:
        counts[k] -= 1
        counts[k + 1] -= 1
        counts[k + 2] -= 1
        for rest in _meld_splits(counts, need - 1):
            out.append([(True, k)] + rest)
        counts[k] += 1
        counts[k + 1] += 1
        counts[k + 2] += 1
    return out


def _shown_to_scoring(shown):
    out = []
    for typ, kind in shown:
        if typ == "pung":
            out.append((False, face_of(kind), number_of(kind), False))
        elif typ == "chow":
            out.append((True, face_of(kind), number_of(kind), False))
        elif typ in ("ankan", "minkan"):
            out.append((False, face_of(kind), number_of(kind), True))
        else:
            raise ValueError("bad meld type %r" % (typ,))
    return out


@lru_cache(maxsize=None)
def _best_total_cached(seat, shown, concealed):
    """None if not a winning shape, else the best raw pattern total (>=0)."""
    need = 4 - len(shown)
    if need < 0 or len(concealed) != 2 + 3 * need:
        return None
    counts = [0] * 36
    for k in concealed:
        counts[k] += 1
    decs = decompositions(counts, need)
    if not decs:
        return None
    shown_s = _shown_to_scoring(shown)
    best = 0
    for dec in decs:
        melds = list(shown_s)
        for is_run, k in dec:
            melds.append((is_run, face_of(k), number_of(k), False))
        best = max(best, pattern_total(seat, melds))
    return best


def best_total(seat, shown_melds, concealed_kinds):
    return _best_total_cached(seat, tuple(tuple(m) for m in shown_melds),
                              tuple(sorted(concealed_kinds)))


def best_base(seat, shown_melds, concealed_kinds):
    """Base of a win (>=1), or 0 if not a winning shape."""
    t = best_total(seat, shown_melds, concealed_kinds)
    if t is None:
        return 0
    return t if t > 0 else 1


# ---------------------------------------------------------------- game

class RefGame:
    def __init__(self, rules, squares):
        r = dict(DEFAULT_RULES)
        r.update(rules or {})
        self.rules = r
        self.all_squares = squares
        self.scores = [0, 0, 0, 0]
        self.hand_results = []
        self.done = False
        self.current_player = -1
        self.hand_index = -1
        self._start_hand(0)

    # ---- hand set-up / close
    def _start_hand(self, h):
        if h >= self.rules["hands_per_game"]:
            self.done = True
            self.current_player = -1
            self.phase = "over"
            return
        if h >= len(self.all_squares):
            raise ValueError("no squares given for hand %d" % h)
        sq = [list(x) for x in self.all_squares[h]]
        assert len(sq) == 4 and all(len(x) == 36 for x in sq)
        assert sorted(c for x in sq for c in x) == list(range(144))
        self.hand_index = h
        self.start = h % 4
        self.sq = sq
        self.pos = [0, 0, 0, 0]
        self.hand = [[], [], [], []]
        self.drawn = [None, None, None, None]
        self.melds = [[], [], [], []]
        self.river = [[], [], [], []]      # lists of (card, slot)
        self.side = [[], [], [], []]
        self.retired = [False] * 4
        self.last_slot = [-1, -1, -1, -1]
        self.wins = []
        self.hand_results.append({"wins": self.wins, "deltas": [0, 0, 0, 0]})
        for p in range(4):
            for _ in range(13):
                self.hand[p].append(self._take(p))
        if self.rules["exchange"]:
            for p in range(4):
                for _ in range(4):
                    self.hand[p].append(self._take(p))
            self.exchange_queue = [(self.start + i) % 4
                                   for i in range(4) for _ in range(4)]
            self.phase = "exchange"
            self.current_player = self.exchange_queue[0]
        else:
            self._begin_slot(0)

    def _close_hand(self):
        self._start_hand(self.hand_index + 1)

    def _take(self, p):
        c = self.sq[p][self.pos[p]]
        self.pos[p] += 1
        return c

    def _begin_slot(self, s):
        while s < N_SLOTS and self.retired[(self.start + s) % 4]:
            s += 1
        if s >= N_SLOTS:
            self._close_hand()
            return
        self.slot = s
        self.phase = "take"
        self.took = None
        self.pick_kind = None
        self.turn_drawn = None
        self.current_player = (self.start + s) % 4

    def _lap(self):
        return self.slot // 4 + 1

    # ---- helpers
    def _kinds(self, cards):
        return [c // 4 for c in cards]

    def _count(self, p, kind):
        return sum(1 for c in self.hand[p] if c // 4 == kind)

    def _lowest(self, p, kind):
        return min(c for c in self.hand[p] if c // 4 == kind)

    def _shown(self, p):
        return [(m["type"], m["kind"]) for m in self.melds[p]]

    def _claimable(self, me, q):
        """Card id of q's claimable discard for me, or None."""
        if not self.river[q]:
            return None
        card, slot = self.river[q][-1]
        if slot > self.last_slot[me]:
            return card
        return None

    def _chow_d(self):
        return 1 if self.rules["chow_from"] == "next" else 3

    def _win_ok(self, p, concealed_kinds):
        t = best_total(p, self._shown(p), concealed_kinds)
        if t is None:
            return False
        if self.rules["require_yaku"] and t <= 0:
            return False
        return True

    def _chow_needs(self, action, k):
        """Kinds needed from the hand for chow `action` on discard kind k,
        and the low kind of the run; None if impossible."""
        n = number_of(k)
        if action == 114:
            if n > 7:
                return None
            return [k + 1, k + 2], k
        if action == 115:
            if n < 2 or n > 8:
                return None
            return [k - 1, k + 1], k - 1
        if action == 116:
            if n < 3:
                return None
            return [k - 2, k - 1], k - 2
        return None

    def _has_discard_action_after(self, p, removed, pick_kind, new_pung_kind):
        """kuikae=False check: after removing `removed` card ids from the hand
        (and possibly adding a pung of new_pung_kind), is there any legal
        打 (other than pick_kind), 暗 or 明?"""
        rest = list(self.hand[p])
        for c in removed:
            rest.remove(c)
        kinds = [c // 4 for c in rest]
        for k in set(kinds):
            if k != pick_kind:
                return True
            if kinds.count(k) == 4:
                return True
        pung_kinds = [m["kind"] for m in self.melds[p] if m["type"] == "pung"]
        if new_pung_kind is not None:
            pung_kinds.append(new_pung_kind)
        for k in pung_kinds:
            if k in kinds:
                return True
        return False

    # ---- legality
    def legal_actions(self):
        if self.done:
            return []
        me = self.current_player
        acts = []
        if self.phase == "exchange":
            for k in sorted(set(self._kinds(self.hand[me]))):
                acts.append(120 + k)
            return sorted(acts)
        lap = self._lap()
        if self.phase == "take":
            acts.append(110)
            own_river_kinds = set(c // 4 for c, _ in self.river[me])
            hand_kinds = self._kinds(self.hand[me])
            for d in (1, 2, 3):
                q = (me + d) % 4
                c = self._claimable(me, q)
                if c is None:
                    continue
                k = c // 4
                # ron
                if not (self.rules["furiten"] and k in own_river_kinds):
                    if self._win_ok(me, hand_kinds + [k]):
                        acts.append(116 + d)
                if lap >= LAST_LAP:
                    continue
                # pung
                if hand_kinds.count(k) >= 2:
                    shown = sorted(x for x in self.hand[me] if x // 4 == k)[:2]
                    if self.rules["kuikae"] or self._has_discard_action_after(
                            me, shown, k, k):
                        acts.append(110 + d)
                # chow
                if d == self._chow_d():
                    for a in (114, 115, 116):
                        need = self._chow_needs(a, k)
                        if need is None:
                            continue
                        kinds_needed, _low = need
                        if all(kn in hand_kinds for kn in kinds_needed):
                            shown = [self._lowest(me, kn) for kn in kinds_needed]
                            if self.rules["kuikae"] or \
                                    self._has_discard_action_after(me, shown, k, None):
                                acts.append(a)
            return sorted(set(acts))
        if self.phase == "discard":
            if self.took == "draw":
                conc = self._kinds(self.hand[me])
                if self.drawn[me] is not None:
                    conc = conc + [self.drawn[me] // 4]
                if self._win_ok(me, conc):
                    acts.append(108)
            if lap >= LAST_LAP:
                acts.append(109)
                return sorted(acts)
            kinds = self._kinds(self.hand[me])
            for k in set(kinds):
                if not self.rules["kuikae"] and k == self.pick_kind:
                    continue
                acts.append(k)
            for k in set(kinds):
                if kinds.count(k) == 4:
                    acts.append(36 + k)
            for m in self.melds[me]:
                if m["type"] == "pung" and m["kind"] in kinds:
                    acts.append(72 + m["kind"])
            return sorted(set(acts))
        return []

    # ---- stepping
    def step(self, action):
        legal = self.legal_actions()
        if action not in legal:
            raise ValueError("illegal action %r in phase %s (hand %d); legal: %s"
                             % (action, getattr(self, "phase", "?"),
                                self.hand_index, legal))
        me = self.current_player
        if self.phase == "exchange":
            c = self._lowest(me, action - 120)
            self.hand[me].remove(c)
            self.side[me].append(c)
            self.exchange_queue.pop(0)
            if self.exchange_queue:
                self.current_player = self.exchange_queue[0]
            else:
                self._begin_slot(0)
            return
        if self.phase == "take":
            if action == 110:
                c = self._take(me)
                self.turn_drawn = c
                if self.rules["discard_drawn"]:
                    self.hand[me].append(c)
                else:
                    self.drawn[me] = c
                self.took = "draw"
                self.phase = "discard"
                return
            if 111 <= action <= 113:
                q = (me + action - 110) % 4
                k = self._claimable(me, q) // 4
                shown = sorted(x for x in self.hand[me] if x // 4 == k)[:2]
                for x in shown:
                    self.hand[me].remove(x)
                stand = self._take(me)
                self.melds[me].append({"type": "pung", "kind": k,
                                       "cards": shown, "standin": stand})
                self.took = "pung"
                self.pick_kind = k
                self.phase = "discard"
                return
            if 114 <= action <= 116:
                q = (me + self._chow_d()) % 4
                k = self._claimable(me, q) // 4
                kinds_needed, low = self._chow_needs(action, k)
                shown = [self._lowest(me, kn) for kn in kinds_needed]
                for x in shown:
                    self.hand[me].remove(x)
                stand = self._take(me)
                self.melds[me].append({"type": "chow", "kind": low,
                                       "cards": shown, "standin": stand})
                self.took = "chow"
                self.pick_kind = k
                self.phase = "discard"
                return
            if 117 <= action <= 119:
                q = (me + action - 116) % 4
                c = self._claimable(me, q)
                conc = self._kinds(self.hand[me]) + [c // 4]
                self._win(me, q, c, conc)
                self._end_turn()
                return
        if self.phase == "discard":
            if action <= 35:
                c = self._lowest(me, action)
                self.hand[me].remove(c)
                self.river[me].append((c, self.slot))
            elif action <= 71:
                k = action - 36
                cs = sorted(x for x in self.hand[me] if x // 4 == k)
                for x in cs:
                    self.hand[me].remove(x)
                self.river[me].append((cs[0], self.slot))
                self.melds[me].append({"type": "ankan", "kind": k,
                                       "cards": cs[1:], "standin": None})
            elif action <= 107:
                k = action - 72
                c = self._lowest(me, k)
                self.hand[me].remove(c)
                self.river[me].append((c, self.slot))
                for m in self.melds[me]:
                    if m["type"] == "pung" and m["kind"] == k:
                        m["type"] = "minkan"
                        break
            elif action == 108:
                conc = self._kinds(self.hand[me])
                if self.drawn[me] is not None:
                    conc = conc + [self.drawn[me] // 4]
                self._win(me, None, self.turn_drawn, conc)
            elif action == 109:
                pass
            self._end_turn()
            return
        raise ValueError("cannot step")

    def _win(self, me, frm, card, conc):
        base = best_base(me, self._shown(me), conc)
        assert base >= 1
        deltas = [0, 0, 0, 0]
        deltas[me] += 3 * base
        if self.rules["payment"] == "zero_sum":
            if frm is not None:
                deltas[frm] -= 3 * base
            else:
                for p in range(4):
                    if p != me:
                        deltas[p] -= base
        for p in range(4):
            self.scores[p] += deltas[p]
            self.hand_results[-1]["deltas"][p] += deltas[p]
        self.wins.append({"seat": me, "from": frm, "card": card, "base": base})
        self.retired[me] = True

    def _end_turn(self):
        me = self.current_player
        if self.drawn[me] is not None:
            self.hand[me].append(self.drawn[me])
            self.drawn[me] = None
        self.last_slot[me] = self.slot
        if len(self.wins) >= self.rules["wins_to_close"] or all(self.retired):
            self._close_hand()
        else:
            self._begin_slot(self.slot + 1)

    # ---- inspection
    def card_locations(self):
        loc = {}

        def put(c, place):
            assert c not in loc, "card %d in %s and %s" % (c, loc[c], place)
            loc[c] = place

        if self.done:
            return loc
        for p in range(4):
            for c in self.sq[p][self.pos[p]:]:
                put(c, "square:%d" % p)
            for c in self.hand[p]:
                put(c, "hand:%d" % p)
            if self.drawn[p] is not None:
                put(self.drawn[p], "drawn:%d" % p)
            for m in self.melds[p]:
                for c in m["cards"]:
                    put(c, "meld:%d" % p)
                if m["standin"] is not None:
                    put(m["standin"], "standin:%d" % p)
            for c, _s in self.river[p]:
                put(c, "river:%d" % p)
            for c in self.side[p]:
                put(c, "side:%d" % p)
        assert sorted(loc) == list(range(144)), "not all 144 cards placed"
        return loc


# ---------------------------------------------------------------- records

def check_record(record):
    """Replay a majiang-record/1 through RefGame and assert it agrees."""
    assert record.get("format") == "majiang-record/1", record.get("format")
    hands = record["hands"]
    g = RefGame(record["rules"], [h["squares"] for h in hands])
    for hi, h in enumerate(hands):
        assert g.hand_index == hi and not g.done, \
            "hand %d: reference is at hand %d (done=%s)" % (hi, g.hand_index, g.done)
        assert h.get("start_seat", hi % 4) == hi % 4, "hand %d start_seat" % hi
        for di, dec in enumerate(h["decisions"]):
            seat, action = dec[0], dec[1]
            if g.done or g.hand_index != hi:
                raise AssertionError("hand %d decision %d: hand already closed "
                                     "in reference" % (hi, di))
            assert seat == g.current_player, \
                "hand %d decision %d: record seat %r, reference current_player %r" \
                % (hi, di, seat, g.current_player)
            ref_legal = g.legal_actions()
            if len(dec) > 2 and dec[2] is not None:
                rec_legal = sorted(dec[2])
                assert rec_legal == ref_legal, \
                    "hand %d decision %d (seat %d): record legal %s != reference legal %s" \
                    % (hi, di, seat, rec_legal, ref_legal)
            if action not in ref_legal:
                raise AssertionError("hand %d decision %d: action %r not legal in "
                                     "reference %s" % (hi, di, action, ref_legal))
            g.step(action)
        res = g.hand_results[hi]
        rec_wins = [(w["seat"], w["from"], w["card"], w["base"]) for w in h["wins"]]
        ref_wins = [(w["seat"], w["from"], w["card"], w["base"]) for w in res["wins"]]
        assert rec_wins == ref_wins, "hand %d wins: record %s != reference %s" \
            % (hi, rec_wins, ref_wins)
        assert list(h["deltas"]) == res["deltas"], \
            "hand %d deltas: record %s != reference %s" % (hi, list(h["deltas"]), res["deltas"])
        if hi + 1 < len(hands) or g.done:
            assert g.done or g.hand_index == hi + 1, \
                "hand %d did not close in reference after its decisions" % hi
    if "scores" in record:
        assert list(record["scores"]) == g.scores, \
            "scores: record %s != reference %s" % (list(record["scores"]), g.scores)
