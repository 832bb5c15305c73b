"""The world sampler's plan: the bins, card types and replay events of one observation (pure Python, built once).

Part of the world sampler (``bourre_env.sampler`` explains the method); the compiled kernels of
``bourre_env.sampler.kernels`` fill the bins this plan lays out.
"""

from __future__ import annotations

import numpy as np

from bourre_env import core
from bourre_env.card_masks import cards_of
from bourre_env.core import MAX_PLAYERS, NUM_CARDS
from bourre_env.core.rules import Rules
from bourre_env.observation import ROUND_DECLARE, ROUND_NAME_TRUMP
from bourre_env.sampler.record import PublicRecord, T

DP_LIMIT = 200_000
"""Most splits the exact counting programme visits; beyond it the exact rejection method runs instead (only
observations of 7-8 players with many different proven voids and reshuffled cards come near it)."""
MAX_ATTEMPTS_PER_WORLD = 2_000
"""Proposals tried per requested world before ``sample`` gives up with ``RuntimeError``: a consistent world
is nearly always found within a few, so reaching this means the observation admits almost none."""

_FACTORIALS = np.array([float(np.prod(np.arange(1, i + 1, dtype=np.float64))) for i in range(NUM_CARDS + 1)])

# bin kinds: sets of cards whose sizes the public record fixes
B_INIT = 0  # a hand as dealt, not yet played with (pending, or declared and waiting for the draw)
B_KEPT = 1  # the cards of the dealt hand kept at the draw
B_DISC = 2  # the cards discarded at the draw that went to the pile (a dead turned card is not among them)
B_PASSED = 3  # a dealt hand laid down by a pass before the draw
B_DRAWN = 4  # the cards dealt to one seat at the draw from one stock (stage 0: the deal's; r: the r-th reshuffle's)
B_STOCK = 5  # the cards left in the last stock
B_FACE = 6  # the turned card's place

# replay event kinds
EV_ACTION = 0  # a fixed action id
EV_DRAW = 1  # the seat draws, discarding the world's discards of that seat
EV_HIDDEN = 2  # a simultaneous declaration not yet revealed: the world chooses pass or play


# ---------------------------------------------------------------------------------------------- the plan
def _proven_absent(rec: PublicRecord, params: np.ndarray) -> list[int]:
    """What each seat's plays to the tricks prove it does not hold: the core's ``forbidden_after`` of every play,
    in play order (what ``core.apply_play`` gathers into ``S_ABSENT``); nothing with reneges allowed."""
    out = [0] * MAX_PLAYERS
    if params[core.P_RENEGE] == 1:
        return out
    n = rec.num_players
    must_trump = bool(params[core.P_MUST_TRUMP] == 1)
    lead_honors = bool(params[core.P_LEAD_HONORS] == 1)
    for t in range(T):
        leader = rec.trick_leaders[t]
        if leader < 0:
            break
        led, best_led, best_trump = -1, -1, -1
        for k in range(n):
            q = (leader + k) % n
            c = rec.trick_cards[t][q]
            if c < 0:
                continue
            out[q] |= int(
                core.forbidden_after(c, led < 0, led, best_led, best_trump, rec.trump, must_trump, lead_honors)
            )
            if led < 0:
                led = c // 13
            if c // 13 == led and c > best_led:
                best_led = c
            if c // 13 == rec.trump and c > best_trump:
                best_trump = c
    return out


class _Plan:
    """Bins, the replay events and the reshuffle stages of one observation (built once, used for every world).

    Built in steps: the replay events, the bins and stock stages, the observer's own cards pinned to their bins, the
    bins each hidden card may go to, and the groups and card types the kernels count over."""

    def __init__(self, rec: PublicRecord, rules: Rules, params: np.ndarray) -> None:
        n, h, d = rec.num_players, rec.hand_size, rec.dealer
        self.n, self.h, self.dealer = n, h, d
        trump_card = int(params[core.P_TRUMP_CARD])
        declaration = int(params[core.P_DECLARATION])
        face = rec.face
        if (face >= 0) == (trump_card == core.TRUMP_NAMED):
            raise ValueError("observation: the turned card does not fit the trump_card rule")
        secret_round = declaration == core.DECLARATION_SIMULTANEOUS and rec.decision_round == ROUND_DECLARE
        if not rec.in_play and rec.decision_round < 0:
            raise ValueError("observation: the deal is over; there is no hidden state left to sample")

        self.bin_kind: list[int] = []
        self.bin_seat: list[int] = []
        self.bin_stage: list[int] = []
        self.bin_size: list[int] = []
        self.face = face
        self.face_bin = self._new_bin(B_FACE, d, 1) if face >= 0 else -1

        # who did what: laid down before the draw, drew, or still holds the hand as dealt
        self._drew = [rec.ndiscard[q] >= 0 for q in range(n)]
        self._laid_early = [
            rec.decisions[q] == core.PASSED and not self._drew[q] and not secret_round for q in range(n)
        ]
        self.events, timeline = _replay_events(rec, params, secret_round, self._drew, self._laid_early)
        pf_of = self._lay_out_bins(rec, rules, trump_card, timeline)
        final = [b for b in range(len(self.bin_size)) if b not in pf_of]
        pool, fully_pinned = self._pin_own_cards(rec, params, pf_of)
        candidates, column = self._places(rec, params, pool, final, fully_pinned, pf_of)
        self._group(pool, candidates, column)

    def _new_bin(self, kind: int, seat: int, size: int, stage: int = 0) -> int:
        if size < 0:
            raise ValueError("observation: announced counts do not fit the hands")
        self.bin_kind.append(kind)
        self.bin_seat.append(seat)
        self.bin_stage.append(stage)
        self.bin_size.append(size)
        return len(self.bin_size) - 1

    def _lay_out_bins(
        self, rec: PublicRecord, rules: Rules, trump_card: int, timeline: list[tuple[str, int]]
    ) -> dict[int, int]:
        """The bins of every seat and the stock stages, in the pile's history; returns each reshuffled bin's stage."""
        n, h, d, face, face_bin = self.n, self.h, self.dealer, self.face, self.face_bin
        dealers_card = trump_card == core.TRUMP_DEALERS_CARD
        takes = trump_card == core.TRUMP_DEALER_MAY_TAKE
        face_dead = face >= 0 and rec.face_status == core.FACE_DEAD
        self.face_dead_by_dealer = face_dead and trump_card in (core.TRUMP_DEALERS_CARD, core.TRUMP_DEALER_MAY_TAKE)
        face_kept = face >= 0 and not face_dead and trump_card != core.TRUMP_SEPARATE
        hand_bins: list[list[int]] = [[] for _ in range(n)]  # bins of the hand held now (or laid down late)
        init_bins: list[list[int]] = [[] for _ in range(n)]  # bins of the hand as dealt
        disc_bin = [-1] * n
        for q in range(n):
            # cards of a dealt hand, less the turned card where it is the dealer's last card (held in face_bin)
            dealt = h - (1 if dealers_card and q == d else 0)
            if self._laid_early[q]:
                init_bins[q].append(self._new_bin(B_PASSED, q, dealt))
            elif not self._drew[q]:
                b = self._new_bin(B_INIT, q, dealt)
                init_bins[q].append(b)
                hand_bins[q].append(b)
        stock_left = (
            rules.deck_size - n * h - (1 if trump_card in (core.TRUMP_SEPARATE, core.TRUMP_DEALER_MAY_TAKE) else 0)
        )
        stage = 0
        stage_order: list[list[int]] = [[]]
        pf: list[list[int]] = [[]]  # pf[r]: the bins reshuffled into stage r's stock (pf[0] unused)
        pile: list[int] = []
        for what, q in timeline:
            if what == "lay":
                pile.append(init_bins[q][0])
                if q == d and face >= 0 and (dealers_card or takes):
                    pile.append(face_bin)  # the turned card is laid down with the dealer's hand
                continue
            draws, kept, disc = _draw_counts(
                rec.ndiscard[q], h, q == d and dealers_card, face_dead, q == d and takes and face_kept
            )
            kb = self._new_bin(B_KEPT, q, kept)
            db = self._new_bin(B_DISC, q, disc)
            init_bins[q] += [kb, db]
            hand_bins[q].append(kb)
            disc_bin[q] = db
            if draws < 0:
                raise ValueError("observation: the dealer kept the turned card and discarded nothing")
            take = min(draws, stock_left)
            if take > 0:
                b = self._new_bin(B_DRAWN, q, take, stage)
                stage_order[stage].append(b)
                hand_bins[q].append(b)
                stock_left -= take
            rest = draws - take
            if rest > 0:
                stage += 1
                pf.append(pile)
                stage_order.append([])
                stock_left = sum(self.bin_size[b] for b in pile)
                pile = []
                if stock_left < rest:
                    raise ValueError("observation: the stock cannot serve the announced draws")
                b = self._new_bin(B_DRAWN, q, rest, stage)
                stage_order[stage].append(b)
                hand_bins[q].append(b)
                stock_left -= rest
            pile.append(db)
        stage_order[stage].append(self._new_bin(B_STOCK, -1, stock_left, stage))
        if rec.reshuffled != (stage > 0):
            raise ValueError("observation: the reshuffled flag disagrees with the announced draws")
        self.stages = stage
        self.stage_order = stage_order
        self.pf = pf
        self.init_bins = init_bins
        self.hand_bins = hand_bins
        self.disc_bin = disc_bin
        return {b: r for r in range(1, stage + 1) for b in pf[r]}

    def _pin_own_cards(self, rec: PublicRecord, params: np.ndarray, pf_of: dict[int, int]) -> tuple[int, set[int]]:
        """What the observer knows of its own cards (``pinned``, ``card_pf_bin``); returns the cards left to place
        and the bins the pinned cards fill."""
        face, face_bin, hand_bins, disc_bin, drew = self.face, self.face_bin, self.hand_bins, self.disc_bin, self._drew
        own_played = rec.played_by(0)
        face_bit = (1 << face) if face >= 0 else 0
        face_reshuffled = face >= 0 and face_bin in pf_of
        known_hand = not self._laid_early[0] and not (drew[0] and rec.decisions[0] == core.PASSED)
        pinned: list[tuple[int, list[int]]] = []  # (card mask, bins whose free places it fills), in this order
        fully_pinned: set[int] = set()
        card_pf_bin = [-1] * NUM_CARDS
        if face_reshuffled:
            card_pf_bin[face] = face_bin  # a passed dealer's turned card, reshuffled: it lay in that hand before
        if known_hand:
            a_o = rec.hand | own_played
            if not face_reshuffled:
                a_o &= ~face_bit
            if bin(a_o).count("1") != sum(self.bin_size[b] for b in hand_bins[0]):
                raise ValueError("observation: the observer's cards do not fit its hand")
            if a_o & face_bit:
                # the reshuffled turned card came to the observer from that stock
                stage_bins = [
                    b for b in hand_bins[0] if self.bin_kind[b] == B_DRAWN and self.bin_stage[b] == pf_of[face_bin]
                ]
                if not stage_bins:
                    raise ValueError("observation: the observer holds a turned card it cannot have drawn")
                pinned.append((face_bit, stage_bins))
            pinned.append((a_o & ~(a_o & face_bit), hand_bins[0]))
            fully_pinned.update(hand_bins[0])
        else:
            a_o = 0
        d_o = rec.own_discards & ~face_bit
        if drew[0]:
            if bin(d_o).count("1") != self.bin_size[disc_bin[0]]:
                raise ValueError("observation: the observer's discards do not fit its announced count")
            if disc_bin[0] in pf_of:
                for c in cards_of(d_o):
                    card_pf_bin[c] = disc_bin[0]
            else:
                pinned.append((d_o, [disc_bin[0]]))
                fully_pinned.add(disc_bin[0])
        elif d_o:
            raise ValueError("observation: own discards without an announced count")
        if face >= 0 and not face_reshuffled:
            pinned.append((face_bit, [face_bin]))
            fully_pinned.add(face_bin)
        self.pinned = pinned
        self.card_pf_bin = card_pf_bin
        deck_mask = int(params[core.P_DECK_MASK])
        placed = a_o | (0 if face_reshuffled else face_bit)
        if drew[0] and disc_bin[0] not in pf_of:
            placed |= d_o
        if (a_o | d_o) & ~deck_mask:
            raise ValueError("observation: cards outside the deck")
        return deck_mask & ~placed, fully_pinned

    def _places(
        self,
        rec: PublicRecord,
        params: np.ndarray,
        pool: int,
        final: list[int],
        fully_pinned: set[int],
        pf_of: dict[int, int],
    ) -> tuple[list[int], dict[int, int]]:
        """The bins that take hidden cards, and for each the mask of the cards of ``pool`` it may hold."""
        n = self.n
        absent = np.zeros(MAX_PLAYERS, dtype=np.int64)
        if rec.in_play:
            absent[:] = _proven_absent(rec, params)
        played_by = [rec.played_by(q) for q in range(n)]
        candidates = [b for b in final if b not in fully_pinned and self.bin_size[b] > 0]
        stage_final = {
            r: [b for b in final if self.bin_stage[b] == r and self.bin_kind[b] in (B_DRAWN, B_STOCK)]
            for r in range(1, self.stages + 1)
        }
        self.stage_final = stage_final
        hand_set = [set(self.hand_bins[q]) for q in range(n)]
        restricted = [q for q in range(1, n) if rec.in_play and rec.decisions[q] == core.PLAYING]
        column = {b: 0 for b in candidates}
        for c in cards_of(pool):
            owner = next((q for q in range(1, n) if (played_by[q] >> c) & 1), -1)
            allowed = list(candidates)
            if owner >= 0:
                allowed = [b for b in allowed if b in hand_set[owner]]
            if self.card_pf_bin[c] >= 0:
                # a reshuffled card of the observer's (or the turned card): it went through that stock
                allowed = [b for b in allowed if b in stage_final[pf_of[self.card_pf_bin[c]]]]
            for q in restricted:
                if q != owner and (int(absent[q]) >> c) & 1:
                    allowed = [b for b in allowed if b not in hand_set[q]]
            if not allowed:
                raise ValueError(f"observation: no world is consistent with it (card {c} has no place)")
            for b in allowed:
                column[b] |= 1 << c
        return candidates, column

    def _group(self, pool: int, candidates: list[int], column: dict[int, int]) -> None:
        """Groups (bins that allow the same cards) and types (cards allowed in the same groups), in counting order."""
        groups: dict[int, list[int]] = {}
        for b in candidates:
            groups.setdefault(column[b], []).append(b)
        group_cols = list(groups)
        caps = [sum(self.bin_size[b] for b in groups[col]) for col in group_cols]
        if sum(caps) != bin(pool).count("1"):
            raise ValueError("observation: the hidden cards do not fill the hidden places")
        # a card that only one group allows (an opponent's played card) is placed there before anything else
        forced_mask = [0] * len(group_cols)
        free = pool
        for c in cards_of(pool):
            holders = [g for g, col in enumerate(group_cols) if (col >> c) & 1]
            if len(holders) == 1:
                forced_mask[holders[0]] |= 1 << c
                free &= ~(1 << c)
        caps = [cap - bin(f).count("1") for cap, f in zip(caps, forced_mask, strict=True)]
        if min(caps, default=0) < 0:
            raise ValueError("observation: no world is consistent with it (a seat played more cards than it holds)")
        # Groups that differ only in their forced cards allow the same free cards: they are one group for the
        # counting (its free cards are then shared among them uniformly, around their forced cards).
        merged: dict[int, list[int]] = {}
        for g, col in enumerate(group_cols):
            merged.setdefault(col & free, []).append(g)
        free_cols = list(merged)
        free_caps = [sum(caps[g] for g in merged[col]) for col in free_cols]
        # the largest group goes last: its capacity is implied in the counting, which keeps the table small
        order = sorted(range(len(free_cols)), key=lambda k: (free_caps[k], bin(free_cols[k]).count("1")))
        self.sub_groups = [merged[free_cols[k]] for k in order]  # [counting group] -> groups
        self.group_bins = [groups[col] for col in group_cols]
        self.group_caps = caps  # free cards each group takes
        self.forced = [cards_of(f) for f in forced_mask]
        group_cols = [free_cols[k] for k in order]
        caps = [free_caps[k] for k in order]
        self.caps = caps
        types: dict[int, int] = {}
        for c in cards_of(free):
            key = sum(1 << g for g, col in enumerate(group_cols) if (col >> c) & 1)
            types[key] = types.get(key, 0) | (1 << c)
        # the most constrained types first (fewest places): the rejection method places them first
        type_keys = sorted(types, key=lambda k: (sum(caps[g] for g in range(len(caps)) if (k >> g) & 1), k))
        self.type_cards = [cards_of(types[k]) for k in type_keys]
        self.allowed = np.array(
            [[(k >> g) & 1 for g in range(len(group_cols))] for k in type_keys], dtype=np.int8
        ).reshape(len(type_keys), len(group_cols))
        self.below = np.array([[int(u & ~k == 0) for u in type_keys] for k in type_keys], dtype=np.int8).reshape(
            len(type_keys), len(type_keys)
        )


def _draw_counts(
    k: int, h: int, dealer_with_face: bool, face_dead: bool, dealer_took_face: bool
) -> tuple[int, int, int]:
    """(cards drawn, cards kept, cards discarded to the pile) of a seat that announced ``k`` discards."""
    draws, kept, disc = k, h - k, k
    if dealer_with_face:
        if face_dead:
            disc = k - 1  # the dead turned card is one of the announced discards, not a pile card
        else:
            kept = h - 1 - k
    elif dealer_took_face:
        draws = k - 1  # keeping the turned card, the dealer draws one card fewer
    return draws, kept, disc


def _replay_events(
    rec: PublicRecord, params: np.ndarray, secret_round: bool, drew: list[bool], laid_early: list[bool]
) -> tuple[list[tuple[int, int, int]], list[tuple[str, int]]]:
    """The public actions in order, and the pile's history (lay-downs and draws) for the stock stages."""
    n, d = rec.num_players, rec.dealer
    trump_card = int(params[core.P_TRUMP_CARD])
    declaration = int(params[core.P_DECLARATION])
    seat_order = [(d + k) % n for k in range(1, n + 1)]
    events: list[tuple[int, int, int]] = []
    timeline: list[tuple[str, int]] = []
    if trump_card == core.TRUMP_NAMED and rec.decision_round != ROUND_NAME_TRUMP:
        if rec.trump < 0:
            raise ValueError("observation: trump is not named after the naming round")
        events.append((EV_ACTION, d, core.NAME_TRUMP_BASE + rec.trump))
    if rec.decision_round != ROUND_NAME_TRUMP:
        if declaration == core.DECLARATION_WITH_DRAW:
            for q in seat_order:
                if rec.decisions[q] == core.PENDING:
                    break
                if laid_early[q]:
                    events.append((EV_ACTION, q, core.PASS))
                    timeline.append(("lay", q))
                elif drew[q]:
                    events.append((EV_DRAW, q, 0))
                    timeline.append(("draw", q))
                else:
                    raise ValueError(f"observation: seat {q} plays without an announced discard count")
        else:
            for q in seat_order:
                if secret_round and q == rec.to_act:
                    break
                if secret_round:
                    if q == 0:
                        events.append(
                            (EV_ACTION, q, core.PASS if rec.decisions[0] == core.PASSED else core.DECLARE_PLAY)
                        )
                    else:
                        events.append((EV_HIDDEN, q, 0))
                    continue
                if rec.decisions[q] == core.PENDING:
                    break
                events.append((EV_ACTION, q, core.PASS if laid_early[q] else core.DECLARE_PLAY))
            if not secret_round:
                timeline += [("lay", q) for q in seat_order if laid_early[q]]
                for q in seat_order:
                    if drew[q]:
                        events.append((EV_DRAW, q, 0))
                        timeline.append(("draw", q))
        if params[core.P_SECOND_PASS] >= 0:
            for q in seat_order:
                if not drew[q]:
                    continue
                if (rec.stayed >> q) & 1:
                    events.append((EV_ACTION, q, core.SECOND_STAY))
                elif rec.decisions[q] == core.PASSED:
                    events.append((EV_ACTION, q, core.PASS))
                else:
                    break
    if rec.in_play:
        events += _trick_events(rec)
    return events, timeline


def _trick_events(rec: PublicRecord) -> list[tuple[int, int, int]]:
    """The cards played to the tricks, in play order."""
    events: list[tuple[int, int, int]] = []
    playing = [q for q in range(rec.num_players) if rec.decisions[q] == core.PLAYING]
    for t in range(T):
        leader = rec.trick_leaders[t]
        if leader < 0:
            break
        k0 = playing.index(leader)
        for k in range(len(playing)):
            q = playing[(k0 + k) % len(playing)]
            c = rec.trick_cards[t][q]
            if c < 0:
                break
            events.append((EV_ACTION, q, c))
    return events


def _flat(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    start = np.zeros(len(lists) + 1, dtype=np.int64)
    for i, part in enumerate(lists):
        start[i + 1] = start[i] + len(part)
    flat = np.array([x for part in lists for x in part], dtype=np.int64)
    return flat, start
