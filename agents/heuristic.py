"""``heuristic``: an expert rule-based Bourré player that reads nothing but its own observation.

Everything it knows is decoded from the documented observation fields (``bourre_env.observation``,
``FIELDS`` and the offsets ``O_*``): its hand, the trump suit and turned card, who passed or plays
and how many cards each announced, the pot, the cards played so far and by whom. It never looks
at the env. ``HeuristicAgent`` documents the strategy; ``PARAM_SETS`` names the variants
(``agents.make("heuristic")``, ``"heuristic:tight"``, ``"heuristic:loose"``).

``agents.heuristic_batch`` is this agent compiled for batches of observation rows: it must make
exactly the decisions made here, given the same tie-break number (``HeuristicAgent.choose``), and
``tests/test_heuristic_batch.py`` holds it to that; a change of strategy here is ported there.
"""

from __future__ import annotations

import dataclasses
from math import comb, factorial

import numpy as np

from agents.base import Observation
from bourre_env.actions import PASS, STAY_BASE
from bourre_env.observation import (
    O_DEAL,
    O_DEALER,
    O_DECISION,
    O_FACE,
    O_FACE_STATUS,
    O_HAND_SIZE,
    O_LEADER,
    O_LED,
    O_NDISCARD,
    O_OPTIONS,
    O_OWN_DISCARDS,
    O_PHASE,
    O_PLAYED_BY,
    O_PLAYED_IN,
    O_POT,
    O_POT_LIMIT,
    O_ROUND,
    O_TRICK_NO,
    O_TRICKS,
    O_TRUMP,
    OFFSETS,
    ROUND_NAME_TRUMP,
    ROUND_SECOND_PASS,
)

__all__ = ["HeuristicParams", "HeuristicAgent", "PARAM_SETS", "make_heuristic"]

NUM_CARDS = 52
RANKS = 13
ACE = 12
KING = 11
SEATS = 8  # seat slots of the observation (relative seats 0..7; 0 is us)
TRICKS = 6  # trick slots of the observation
FULL_SUIT = (1 << RANKS) - 1
ALL_CARDS = (1 << NUM_CARDS) - 1
DECK_SIZE = 52  # the observation does not carry the deck size: a small deck is read as a full one
PASSED = 1
PLAYING = 2
FACE_IN_HAND = 0

# The one-hot fields from ``hand`` to ``own_discards`` are decoded from a single ``flatnonzero``:
# the positions of the ones, split at the field offsets (the layout is ``bourre_env.observation``'s).
_DECODED = ("hand", "trump", "face_card", "face_status", "dealer", "to_act", "seat_present", "decision",
            "discard_count", "tricks_won", "played_by", "played_in", "trick_leader", "trick_no", "led_suit",
            "own_discards")
_BOUNDS = np.array([OFFSETS[name] for name in _DECODED[1:]], dtype=np.int64)
_END = O_OWN_DISCARDS + NUM_CARDS
assert all(OFFSETS[a] < OFFSETS[b] for a, b in zip(_DECODED, _DECODED[1:], strict=False)), "field order changed"
assert OFFSETS["phase"] == _END, "own_discards must end where phase starts"


@dataclasses.dataclass(frozen=True)
class HeuristicParams:
    """The knobs of the heuristic (see ``HeuristicAgent``); ``PARAM_SETS`` names the tuned sets."""

    margin: float = -0.06
    """Play when P(win pot) - P(bourré) * cost exceeds this (in pots); > 0 is tighter, < 0 looser.
    Tuned by duplicate evaluation: the model is a little pessimistic against loose fields."""
    ace_survival: float = 0.55
    """Chance, per other player in the deal, that a side ace is neither ruffed nor stranded."""
    ruff_credit: float = 0.2
    """Chance that a trump that is not sure still takes a trick (ruffing a side suit, or after the top
    falls), against three opponents; against ``m`` it is ``ruff_credit ** (m / 3)``."""
    kept_trumps: float = 0.75
    """Share of trumps among the cards a player of a selective field keeps (it keeps trumps and aces)."""
    pending_trumps: float = 2.0
    """Trumps expected in the hand of an undecided player of a selective field, should it play."""
    loose_ace_survival: float = 0.7
    """``ace_survival`` against a loose field (nearly everyone plays: ordinary hands, careless play)."""
    loose_ruff_credit: float = 0.7
    """``ruff_credit`` against a loose field."""
    loose_live: float = 0.7
    """Factor on the chance that an opponent's trump beats ours, against a loose field (careless players
    spend their high trumps early)."""
    prior_loose: float = 0.6
    """Prior chance that the field is loose, before seeing anyone decide this deal."""
    selective_players: float = 2.8
    """Players (us included) who come in, on average, in a selective field: each plays with chance
    ``selective_players / n`` (at most 0.85)."""
    loose_share: float = 0.97
    """Chance that a player of a loose field plays (a uniformly random player passes 1 time in 33)."""
    choose_draw: bool = True
    """Weigh drawing to the side aces and kings against letting them go, and take the better draw."""
    keep_kings_with_ace: bool = True
    """Keep a side king together with the ace of its suit (it is the top card once the ace is cashed)."""
    keep_kings_upto: int = 3
    """Keep every side king when at most this many players sit at the table (few ruffers)."""
    lead_bonus: float = 0.15
    """Extra worth of winning a trick now: the winner leads next and keeps control (and pulls trumps)."""
    bourre_bonus: float = 0.0
    """Extra worth of a trick taken now while we have none (one trick avoids paying the pot). 0: measured,
    0.1 and 0.3 did not help; the bourré risk is weighed where it can be avoided, at draw or pass."""
    later_discount: float = 0.7
    """Worth of a side card kept for later, against its chance now (voids and ruffs grow as play goes on)."""


PARAM_SETS: dict[str, HeuristicParams] = {
    "default": HeuristicParams(),
    # plays only clearer edges, and expects a selective field until shown otherwise
    "tight": HeuristicParams(margin=0.02, prior_loose=0.4),
    # gambles on thinner edges, and expects a loose field until shown otherwise
    "loose": HeuristicParams(margin=-0.14, prior_loose=0.8),
}


def _win_given_tricks() -> list[list[list[float]]]:
    """``table[h][m][x]``: chance that ``x`` of ``h`` tricks beat each of ``m`` opponents.

    The other ``h - x`` tricks are spread uniformly at random among the ``m`` opponents (crude but
    symmetric); we take the pot when each opponent ends with fewer than ``x``. Counted exactly:
    assignments of ``r`` labelled tricks to ``m`` seats, at most ``c`` each, number
    ``r! [t^r] (sum_{j<=c} t^j / j!)^m``.
    """
    table = [[[0.0] * (TRICKS + 1) for _ in range(SEATS)] for _ in range(TRICKS + 1)]
    for h in range(1, TRICKS + 1):
        for m in range(SEATS):
            for x in range(h + 1):
                if m == 0:
                    table[h][m][x] = 1.0
                    continue
                r, c = h - x, x - 1
                if c < 0:
                    continue
                poly = [1.0]
                term = [1.0 / factorial(j) for j in range(c + 1)]
                for _ in range(m):
                    out = [0.0] * (len(poly) + c)
                    for i, a in enumerate(poly):
                        for j, b in enumerate(term):
                            out[i + j] += a * b
                    poly = out
                ways = poly[r] * factorial(r) if r < len(poly) else 0.0
                table[h][m][x] = ways / m**r
    return table


WIN_GIVEN = _win_given_tricks()
# SURE_WIN[h][m]: the fewest tricks that always take the pot (at least 1: no trick never does)
SURE_WIN = [[max(1, min(x for x in range(h + 1) if all(v >= 1.0 - 1e-12 for v in WIN_GIVEN[h][m][x:h + 1])))
             if h else 1 for m in range(SEATS)] for h in range(TRICKS + 1)]


def _cdf(k: int, p: float, at_most: int) -> float:
    """P(Binomial(k, p) <= at_most)."""
    if at_most < 0:
        return 0.0
    if at_most >= k:
        return 1.0
    q = 1.0 - p
    if q <= 0.0:
        return 0.0
    term = q**k
    total = term
    ratio = p / q
    for j in range(at_most):
        term *= (k - j) / (j + 1) * ratio
        total += term
    return total


def _add_card(low: list[float], p: float) -> list[float]:
    """``low[x]`` = P(exactly ``x`` tricks) for ``x < len(low)``, after one more card that takes a
    trick with chance ``p`` (only the counts that can fail to win the pot are tracked)."""
    q = 1.0 - p
    return [low[0] * q] + [low[x] * q + low[x - 1] * p for x in range(1, len(low))]


def _field(prm: HeuristicParams, n: int, played: int, passed: int) -> tuple[float, float]:
    """(chance that the field is loose, chance that an undecided player plays), given that
    ``played`` players came in and ``passed`` passed so far this deal.

    Two hypotheses, weighed by Bayes' rule: a selective field (players come in on good hands
    only: they hold hands chosen for their trumps, and play them well) or a loose one (nearly
    everyone plays, as a random player does: ordinary hands, careless play, so our trumps, aces
    and ruffs stand more often). A pass is strong evidence of a selective field. The estimates
    that depend on the field are interpolated with the chance that it is loose.
    """
    sel = min(prm.selective_players / n, 0.85)
    loose = prm.loose_share
    like_loose = prm.prior_loose * loose**played * (1.0 - loose) ** passed
    like_sel = (1.0 - prm.prior_loose) * sel**played * (1.0 - sel) ** passed
    u = like_loose / (like_loose + like_sel)
    return u, u * loose + (1.0 - u) * sel


def _expected_trumps(prm: HeuristicParams, u: float, discards: int, h: int, p_trump: float) -> float:
    """Trumps expected in a playing opponent's hand after the draw.

    ``discards``: the count it announced (-1 while undecided). A selective player keeps trumps
    and aces and draws the rest, so its kept count tells its trumps; a loose player's hand is
    ordinary, with ``p_trump`` (the share of trumps among the cards we have not seen) per card.
    """
    ordinary = h * p_trump
    selective = prm.pending_trumps if discards < 0 else (h - discards) * prm.kept_trumps + discards * p_trump
    return selective + u * (ordinary - selective)


class _Table:
    """The public state of the deal, decoded once per decision from the observation vector."""

    __slots__ = ("hand", "trump", "face", "face_status", "dealer", "n", "decision", "discards", "tricks",
                 "played", "trick_no", "leaders", "led", "own_discards", "h", "max_discard")

    def __init__(self, obs: np.ndarray) -> None:
        ones = np.flatnonzero(obs[:_END])
        cuts = [0, *np.searchsorted(ones, _BOUNDS).tolist(), len(ones)]
        ones_list = ones.tolist()
        (hand, trump, face, face_status, dealer, _to_act, _present, decision, discards, tricks, played_by,
         played_in, leaders, trick_no, led, own) = [ones_list[cuts[k]:cuts[k + 1]] for k in range(len(_DECODED))]
        self.hand: list[int] = hand
        self.trump: int = trump[0] - O_TRUMP
        self.face: int = face[0] - O_FACE if face else -1  # -1: no card turned (the dealer named trump)
        self.face_status: int = face_status[0] - O_FACE_STATUS if face_status else -1
        self.dealer: int = dealer[0] - O_DEALER
        # every seat at the table has exactly one decision one-hot (pending / passed / playing)
        self.n = len(decision)
        self.decision = [0] * self.n
        for i in decision:
            j = i - O_DECISION
            self.decision[j // 3] = j % 3
        self.discards = [-1] * SEATS
        for i in discards:
            j = i - O_NDISCARD
            self.discards[j // (TRICKS + 1)] = j % (TRICKS + 1)
        self.tricks = [0] * SEATS
        for i in tricks:
            j = i - O_TRICKS
            self.tricks[j // (TRICKS + 1)] = j % (TRICKS + 1)
        # played cards as (card, seat, trick): each played card has one one-hot in both fields,
        # and both list the cards in increasing order, so they pair up
        self.played = [((i - O_PLAYED_BY) // SEATS, (i - O_PLAYED_BY) % SEATS, (j - O_PLAYED_IN) % TRICKS)
                       for i, j in zip(played_by, played_in, strict=True)]
        self.trick_no: int = trick_no[0] - O_TRICK_NO if trick_no else TRICKS
        self.leaders = [-1] * TRICKS
        for i in leaders:
            j = i - O_LEADER
            self.leaders[j // SEATS] = j % SEATS
        self.led: int = led[0] - O_LED if led else -1
        self.own_discards = [i - O_OWN_DISCARDS for i in own]
        self.h = round(float(obs[O_HAND_SIZE]) * 6)
        self.max_discard = round(float(obs[O_OPTIONS + 3]) * 6)


class HeuristicAgent:
    """Expert rule-based Bourré, from its observation only; deterministic given the seed.

    **Draw.** Keep every trump and every side ace, a side king beside its ace (it is the next top
    card) and, at a small table (few ruffers), any side king; discard the rest (at most
    ``max_discard``: the best of the excess stays). Two leaner draws are also weighed, letting the
    kings and then the side aces go for more fresh cards (against many opponents a side ace is
    usually ruffed, and a fresh card may be a trump); the draw the model below rates best is kept.

    **Play or pass.** Passing loses only the ante, already paid. Playing takes the pot with
    P(win) and pays the pot with P(bourré) (a bourré player skips the next ante, so a bourré
    costs one chip less when another deal follows). Prize and risk are both the pot, so the pot
    size cancels out and the rule is ``P(win) - P(bourré) * cost > margin``: the bourré risk is
    worth exactly the pot won, and what decides is the hand against the opposition:

    * who plays: the players already in, and each undecided player with a chance that depends on
      the field. Two kinds of field are weighed by Bayes' rule on the decisions seen this deal: a
      selective one, where about ``selective_players`` of the table come in, on hands chosen for
      their trumps, and play them well; and a loose one, where nearly everyone comes in (a
      random player passes once in 33) on ordinary hands, and spends its trumps carelessly, so
      our trumps, aces and ruffs stand more often. A pass is strong evidence of a selective field.
      The dealer holds the turned trump and must play when it is an ace (the mask then lacks
      PASS, and so when everyone else passed: the dealer then just takes the best draw). If nobody
      else plays we are a lone player, who takes every trick without play.
    * trumps against us: a selective player who announced ``d`` discards kept ``5 - d`` cards,
      mostly trumps; a loose player holds the ordinary share. So each unseen trump is live (in a
      playing opponent's hand) with a chance that grows with the number of opponents and their
      announced holdings; the turned card is live with the dealer.
    * our tricks: our ``i``-th highest trump is sure when at most ``i`` of the unseen trumps above
      it are live. Holding the highest trump anyone can hold (the turned card included) is a sure
      trick: a player with a sure trick never goes bourré, so it always plays. A trump that is
      not sure still takes a trick now and then (``ruff_credit``, less against more opponents);
      a side ace stands against each opponent with ``ace_survival``; a drawn card is worth the
      chance of drawing a trump or an ace.
    * with these per-card chances (taken as independent) we get the distribution of our tricks:
      P(bourré) = P(no trick); P(win) = P(more tricks than every other player), the other tricks
      spread among the opponents: three tricks of five always win, two win only if the other
      three go to three different opponents, one never does.

    **Card play.** Only masked cards are considered: the mask already enforces follow suit, beat,
    trump, overtrump and the cinch. From the tricks so far the agent infers what each opponent can
    still hold: one who did not follow is void in the led suit; one who did not trump has no trump
    (or none above the trick's best, where playing a low trump is allowed); one who followed
    without beating an untrumped trick holds nothing above the card that stood. With the unseen
    cards spread over the opponents' hands (trumps where the announced discards put them), it
    estimates for each legal card

    * ``now``: the chance it wins this trick: it beats what is on the table, and nobody still to
      play beats it (a higher card of the suit led, or a void and a trump, or a higher trump);
    * ``later``: its worth if kept: 1 for the highest unseen trump (it always takes a trick),
      otherwise its chance of standing as a lead, discounted for side cards (voids appear as play
      goes on), or the ``ruff_credit`` of a trump that is not the top;

    and plays the legal card maximising ``now * (1 + lead_bonus) - later``. This one rule gives
    the classical play: cash the highest unseen trump on lead (it keeps the lead and pulls the
    opponents' trumps); lead side aces early, while they still stand; win a trick as cheaply as
    possible (the lowest card that wins it safely; a cheap card that would be overtaken is not
    wasted, a high one is not spent where a low one does); otherwise shed the least useful card,
    the lowest, and a singleton side card first when we hold trumps (the void lets us ruff).
    Exact ties between cards are broken by the seeded generator.
    """

    def __init__(self, seed: int | None = 0, params: HeuristicParams | None = None, name: str = "heuristic") -> None:
        self.params = params if params is not None else PARAM_SETS["default"]
        self.name = name
        # Only breaks exact ties between equally scored cards, so play is a function of the
        # observation and the seed.
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        """Nothing to clear: every decision is computed from the current observation alone."""

    def act(self, observation: Observation) -> int:
        obs = observation["observation"]
        mask = observation["action_mask"]
        if not mask.any():
            raise ValueError("the action mask allows no action: this observation is not a decision")
        return self.choose(obs, mask, float(self.rng.random()))

    def choose(self, obs: np.ndarray, mask: np.ndarray, tie_break: float) -> int:
        """The action for one observation vector and its mask (which must allow one: ``act`` checks),
        with ``tie_break`` given.

        ``tie_break``, a number in [0, 1), picks among cards scored exactly alike: of ``k`` tied
        cards (in card order) the ``int(tie_break * k)``-th. ``act`` draws it from the agent's
        generator, one uniform per decision whether or not a tie arises, so that the draws are
        a function of the decisions alone; ``agents.heuristic_batch`` takes the same number per
        row, which is how the two implementations are held to identical decisions.
        """
        if obs[O_ROUND + ROUND_NAME_TRUMP] > 0.5:
            action = self._name_trump(obs, mask)  # dealer_picks_trump: the dealer names trump (53 + suit)
        else:
            action = self._decide(obs, mask) if obs[O_PHASE] > 0.5 else self._play(obs, mask, tie_break)
        if not mask[action]:  # defensive: the rules above only choose masked actions
            action = int(np.flatnonzero(mask)[0])
        return action

    # ------------------------------------------------------------------ naming trump
    @staticmethod
    def _name_trump(obs: np.ndarray, mask: np.ndarray) -> int:
        """The strongest suit of the hand: most cards, then the highest ranks (53 + suit)."""
        hand = np.flatnonzero(obs[:NUM_CARDS] > 0.5).tolist()
        strength = [0.0] * 4
        for c in hand:
            strength[c // RANKS] += 10.0 + c % RANKS
        for suit in sorted(range(4), key=lambda s: -strength[s]):
            if mask[STAY_BASE + suit]:
                return STAY_BASE + suit
        return int(np.flatnonzero(mask)[0])

    # ------------------------------------------------------------------ draw or pass
    def _decide(self, obs: np.ndarray, mask: np.ndarray) -> int:
        prm = self.params
        tb = _Table(obs)
        hand, trump = tb.hand, tb.trump
        max_discard = tb.max_discard

        # What to keep: trumps and side aces; a king beside its ace, or any king at a small table.
        aces = 0
        for c in hand:
            if c % RANKS == ACE:
                aces |= 1 << (c // RANKS)
        value: list[float] = []
        for c in hand:
            s, r = divmod(c, RANKS)
            if s == trump:
                v = 100.0 + r
            elif r == ACE:
                v = 50.0
            elif r == KING and (tb.n <= prm.keep_kings_upto or (prm.keep_kings_with_ace and aces >> s & 1)):
                v = 40.0
            else:
                v = float(r)  # discarded, unless max_discard makes us keep the best of these
            value.append(v)
        # the bourré payment in pots: a bourré player skips the next ante if another deal follows
        pot = float(obs[O_POT]) * 100.0
        if obs[O_POT_LIMIT] > 0.5:
            pot = min(pot, float(obs[O_POT_LIMIT + 1]) * 100.0)
        deals_left = round(float(obs[O_DEAL + 1]) * 10)
        cost = 1.0 - (1.0 / pot if deals_left > 0 and pot >= 1.0 else 0.0)

        if np.count_nonzero(mask) == 1:
            return int(np.flatnonzero(mask)[0])  # one legal action (a hand that fails an entry requirement)
        if obs[O_ROUND + ROUND_SECOND_PASS] > 0.5:
            # The second chance to pass after the draw (four_card): 52 drops out, 53 stays paying a chip. Stay
            # iff the hand as it is now is worth more than the chip: gains are in pots, the chip is 1 / pot.
            trumps_now = [c % RANKS for c in hand if c // RANKS == trump]
            if self._sure_trick(tb, hand):
                return STAY_BASE
            side_now = [c % RANKS for c in hand if c // RANKS != trump]
            p_win, p_bourre = self._outlook(tb, trumps_now, [(side_now.count(ACE), side_now.count(KING), 0)])[0]
            return STAY_BASE if p_win - p_bourre * cost > prm.margin + 1.0 / max(pot, 1.0) else PASS
        # Candidate draws: keep trumps, aces and kings; or let the side honours go to draw more
        # cards (against many opponents a side ace is often ruffed, and a fresh card may be a
        # trump). The model's best one is played if it is worth playing.
        order = sorted(range(len(hand)), key=value.__getitem__)
        # A declaration round (the rules' "two_rounds"): we are still pending and may only pass or declare
        # play (53, the stand-pat id); the draws are weighed as if chosen now, and play is declared as 53.
        declaring = tb.decision[0] == 0 and not mask[STAY_BASE + 1:].any()
        stays: list[int] = []
        options: list[tuple[int, int, int]] = []
        for floor in (40.0, 50.0, 100.0) if prm.choose_draw else (40.0,):
            drop = [i for i in order if value[i] < floor][:max_discard]
            stay = STAY_BASE + sum(1 << i for i in drop)
            if stay in stays or not (mask[stay] or declaring):
                continue  # the same draw as a candidate already listed, or not allowed
            kept = [hand[i] for i in range(len(hand)) if i not in drop]
            if self._sure_trick(tb, kept):
                return STAY_BASE if declaring else stay  # playing cannot cost anything: bourré cannot come
            stays.append(stay)
            side = [c % RANKS for c in kept if c // RANKS != trump]
            options.append((side.count(ACE), side.count(KING), len(drop)))
        if not stays:
            return int(np.flatnonzero(mask)[-1])  # no candidate draw is legal: any legal stay
        trumps = [c % RANKS for c in hand if c // RANKS == trump]
        gains = [p_win - p_bourre * cost for p_win, p_bourre in self._outlook(tb, trumps, options)]
        k = max(range(len(gains)), key=gains.__getitem__)
        play = STAY_BASE if declaring else stays[k]
        if not mask[PASS]:
            return play  # the dealer must play (or the draw round has no pass): the best draw we found
        return play if gains[k] > prm.margin else PASS

    @staticmethod
    def _sure_trick(tb: _Table, kept: list[int]) -> bool:
        """Whether ``kept`` holds the highest trump that anyone could hold (the turned card included)."""
        top = max((c for c in kept if c // RANKS == tb.trump), default=-1)
        if top < 0:
            return False
        # every trump above ours is ours too (the dealer's turned card is not ours unless we deal)
        return all(c in kept for c in range(top + 1, RANKS * (tb.trump + 1)))

    def _outlook(self, tb: _Table, trumps: list[int], options: list[tuple[int, int, int]]) -> list[tuple[float, float]]:
        """(P(win the pot), P(bourré)) of playing each of ``options``.

        ``trumps``: the ranks of the trumps we keep (every option keeps them all); an option is
        (side aces kept, side kings kept, cards drawn).
        """
        prm = self.params
        n, h, trump, dealer, face = tb.n, tb.h, tb.trump, tb.dealer, tb.face
        playing = acted = pending_others = 0
        for q in range(1, n):
            d = tb.decision[q]
            if d == 0:
                if q != dealer:
                    pending_others += 1
            else:
                acted += 1
                if d == PLAYING:
                    playing += 1
        u, q_play = _field(prm, n, playing, acted - playing)
        ace_survival = prm.ace_survival + u * (prm.loose_ace_survival - prm.ace_survival)
        ruff_credit = prm.ruff_credit + u * (prm.loose_ruff_credit - prm.ruff_credit)
        live_scale = 1.0 + u * (prm.loose_live - 1.0)
        face_mine = dealer == 0
        face_rank = face % RANKS if face >= 0 else -1  # -1: no card turned
        # the dealer holds the turned trump, so is likelier to play than others; must on an ace
        q_dealer = 0.0 if face_mine else (1.0 if face_rank == ACE else max(q_play, 0.5))

        # Cards we have not seen: not in our hand (our discards go out of play), not the turned card.
        seen = 1 << face if face >= 0 else 0
        for c in tb.hand:
            seen |= 1 << c
        unseen_total = max(DECK_SIZE - seen.bit_count(), 1)
        trump_bits = ((ALL_CARDS & ~seen) >> (RANKS * trump)) & FULL_SUIT
        n_unseen_trumps = trump_bits.bit_count()
        my_trumps = sorted(trumps, reverse=True)
        above = [(trump_bits >> (r + 1)).bit_count() for r in my_trumps]  # unseen trumps above ours
        face_above = [not face_mine and face_rank > r for r in my_trumps]
        unseen_side_aces = sum(1 for s in range(4) if s != trump and not (seen >> (s * RANKS + ACE)) & 1)
        p_draw_trump = n_unseen_trumps / unseen_total
        p_draw_ace = unseen_side_aces / unseen_total
        # unseen trumps above the turned card (the rest have it above them, when the dealer has it)
        over_face = n_unseen_trumps if face_mine or face < 0 else (trump_bits >> face_rank).bit_count()

        # Trumps the opponents will hold: the players already in (from their announced discards),
        # and a typical playing hand for each undecided player who comes in.
        known_trumps = 0.0
        for q in range(1, n):
            if tb.decision[q] == PLAYING:
                known_trumps += _expected_trumps(prm, u, tb.discards[q], h, p_draw_trump)
        pending_trumps = _expected_trumps(prm, u, -1, h, p_draw_trump)

        # how many opponents will play: the known ones, the dealer, the other undecided players
        dist = [0.0] * (n + 1)
        for dp in (0, 1):
            wd = q_dealer if dp else 1.0 - q_dealer
            if wd <= 0.0:
                continue
            for j in range(pending_others + 1):
                dist[playing + j + dp] += wd * comb(pending_others, j) * q_play**j * (1.0 - q_play) ** (
                    pending_others - j)

        win = [0.0] * len(options)
        bourre = [0.0] * len(options)
        total_w = 0.0
        for m, w in enumerate(dist):
            if w < 0.02:
                continue  # too unlikely a number of opponents to be worth the arithmetic
            total_w += w
            if m == 0:
                for k in range(len(options)):
                    win[k] += w  # a lone player takes every trick without play
                continue
            # chance that one given unseen trump is live (in a playing opponent's hand)
            live = min(0.95, live_scale * (known_trumps + (m - playing) * pending_trumps) / max(n_unseen_trumps, 1))
            ruff = ruff_credit ** (m / 3.0)
            # distribution of our tricks, the cards taken as independent: the trumps first
            row = WIN_GIVEN[h][min(m, SEATS - 1)]
            track = SURE_WIN[h][min(m, SEATS - 1)]  # from this many tricks on the pot is ours
            base = [1.0] + [0.0] * (track - 1)
            for i in range(len(my_trumps)):
                if face_above[i]:
                    sure = (1.0 - q_dealer) * _cdf(above[i], live, i) + q_dealer * _cdf(above[i], live, i - 1)
                else:
                    sure = _cdf(above[i], live, i)
                base = _add_card(base, sure + (1.0 - sure) * ruff)
            ace = ace_survival**m
            draw = p_draw_ace * ace
            if n_unseen_trumps:
                # A drawn trump stands when none of the unseen trumps above it is live: the j-th
                # highest unseen trump with chance x^j (x = 1 - live), times 1 - q_dealer below
                # the turned card. Summed over the unseen trumps as geometric series.
                x = 1.0 - live
                xa = x**over_face
                over = (1.0 - xa) / live if live > 0.0 else float(over_face)
                under = (xa - x**n_unseen_trumps) / live if live > 0.0 else float(n_unseen_trumps - over_face)
                stand = (over + (1.0 - q_dealer) * under) / n_unseen_trumps
                draw += p_draw_trump * (stand + (1.0 - stand) * ruff)
            for k, (aces, kings, draws) in enumerate(options):
                low = base
                for p, count in ((ace, aces), (ace * 0.5, kings), (draw, draws)):
                    for _ in range(count):
                        low = _add_card(low, p)
                # added left to right, not with sum(): from Python 3.12 on sum() compensates rounding,
                # and the compiled port must be able to add exactly as this does on every version
                lose = 0.0
                for x, a in enumerate(low):
                    lose += a * (1.0 - row[x])
                win[k] += w * (1.0 - lose)
                bourre[k] += w * low[0]
        # renormalise over the numbers of opponents weighed
        return [(win[k] / total_w, bourre[k] / total_w) for k in range(len(options))]

    # ------------------------------------------------------------------ trick play
    def _play(self, obs: np.ndarray, mask: np.ndarray, tie_break: float) -> int:
        legal = np.flatnonzero(mask[:NUM_CARDS]).tolist()
        if len(legal) == 1:
            return int(legal[0])
        if not legal:
            return int(np.flatnonzero(mask)[0])
        prm = self.params
        st = _PlayState(_Table(obs), obs, prm)
        bonus = 1.0 + prm.lead_bonus + (prm.bourre_bonus if st.my_tricks == 0 else 0.0)
        best = -1e9
        choice: list[int] = []
        for c in legal:
            now = st.win_now(c)
            later = now * prm.later_discount if st.leading and c // RANKS != st.trump else st.keep_worth(c, prm)
            score = now * bonus - later + st.shed_tiebreak(c)
            if score > best + 1e-9:
                best = score
                choice = [c]
            elif score > best - 1e-9:
                choice.append(c)
        if len(choice) == 1:
            return choice[0]
        return int(choice[min(int(tie_break * len(choice)), len(choice) - 1)])


class _PlayState:
    """What the agent knows during trick play: the trick on the table and where the unseen cards can be."""

    __slots__ = ("trump", "later", "active", "leading", "led", "best_led", "best_trump", "caps", "unseen",
                 "face_holder", "face_rank", "my_tricks", "hand_suits", "w_trump", "w_side", "ruff_credit")

    def __init__(self, tb: _Table, obs: np.ndarray, prm: HeuristicParams) -> None:
        n, h, trump, dealer = tb.n, tb.h, tb.trump, tb.dealer
        self.trump = trump
        must_trump = obs[O_OPTIONS] > 0.5
        playing = [d == PLAYING for d in tb.decision]
        active = [q for q in range(1, n) if playing[q]]
        self.active = active
        self.my_tricks = tb.tricks[0]
        self.face_rank = tb.face % RANKS
        # the turned card is known to be in the dealer's hand while the dealer plays and holds it
        self.face_holder = dealer if tb.face_status == FACE_IN_HAND and dealer != 0 and playing[dealer] else -1
        # how loose the field is: the share of the other players who came in this deal
        u, _ = _field(prm, n, len(active), n - 1 - len(active))
        self.ruff_credit = (prm.ruff_credit + u * (prm.loose_ruff_credit - prm.ruff_credit)) ** (len(active) / 3.0)
        t = tb.trick_no

        seen = 1 << tb.face if tb.face >= 0 else 0
        for c in tb.hand:
            seen |= 1 << c
        for c, _q, _t in tb.played:
            seen |= 1 << c
        if _own_discards_out(tb):
            for c in tb.own_discards:
                seen |= 1 << c
        unseen_all = ALL_CARDS & ~seen
        self.unseen = [(unseen_all >> (RANKS * s)) & FULL_SUIT for s in range(4)]
        unseen_total = unseen_all.bit_count()
        self.hand_suits = [0, 0, 0, 0]
        for c in tb.hand:
            self.hand_suits[c // RANKS] += 1

        # Inference from the tricks so far: caps[q][s] is the highest rank q can still hold in s.
        caps = {q: [ACE, ACE, ACE, ACE] for q in active}
        per_trick: list[dict[int, int]] = [{} for _ in range(t + 1)]
        trumps_played = dict.fromkeys(active, 0)
        for c, q, tt in tb.played:
            if tt <= t:
                per_trick[tt][q] = c
            if c // RANKS == trump and q in trumps_played:
                trumps_played[q] += 1
        cards_left = dict.fromkeys(active, h - t)
        self.leading = True
        self.led = self.best_led = self.best_trump = -1
        order_all = [q for q in range(n) if playing[q]]
        for tt in range(t + 1):
            cards_in = per_trick[tt]
            lead_seat = tb.leaders[tt]
            if not cards_in or lead_seat not in cards_in:
                continue
            start = order_all.index(lead_seat)
            led = cards_in[lead_seat] // RANKS
            best_led = best_trump = -1
            for q in order_all[start:] + order_all[:start]:
                if q not in cards_in:
                    break
                s, r = divmod(cards_in[q], RANKS)
                if q != 0 and q != lead_seat:
                    cap = caps[q]
                    if s == led:
                        if (led == trump or best_trump < 0) and r < best_led:
                            cap[led] = min(cap[led], best_led - 1)  # could not beat the card that stood
                    else:
                        cap[led] = -1  # did not follow: void
                        if s == trump:
                            if best_trump > r:
                                cap[trump] = min(cap[trump], best_trump - 1)  # could not overtrump
                        elif must_trump or best_trump < 0:
                            cap[trump] = -1  # did not trump: no trump
                        else:
                            cap[trump] = min(cap[trump], best_trump - 1)  # could not overtrump
                if s == led and r > best_led:
                    best_led = r
                if s == trump and r > best_trump:
                    best_trump = r
            if tt == t:
                self.leading = False
                self.led, self.best_led, self.best_trump = led, best_led, best_trump
                for q in cards_in:
                    if q in cards_left:
                        cards_left[q] -= 1
        self.caps = caps
        self.later = [q for q in active if q not in per_trick[t]] if not self.leading else active

        # Where the unseen cards are likely to be: each opponent's expected trumps (from its
        # announced discards, less the trumps it has played), the rest of its hand side cards.
        n_trumps = self.unseen[trump].bit_count()
        n_side = unseen_total - n_trumps
        p_trump = (RANKS - 1) / (DECK_SIZE - h - 1)
        self.w_trump: dict[int, float] = {}
        self.w_side: dict[int, float] = {}
        for q in active:
            face_held = 1 if q == self.face_holder else 0
            hidden = cards_left[q] - face_held  # cards of q's hand that we have not seen
            rem = _expected_trumps(prm, u, tb.discards[q], h, p_trump) - trumps_played[q] - face_held
            rem = 0.0 if caps[q][trump] < 0 else min(max(rem, 0.0), hidden)
            self.w_trump[q] = min(rem / max(n_trumps, 1), 1.0)
            self.w_side[q] = min((hidden - rem) / max(n_side, 1), 1.0)

    def holds_above(self, q: int, suit: int, rank: int) -> float:
        """Chance that ``q`` holds a card of ``suit`` above ``rank``."""
        if q == self.face_holder and suit == self.trump and self.face_rank > rank:
            return 1.0
        cap = self.caps[q][suit]
        if cap <= rank:
            return 0.0
        k = ((self.unseen[suit] >> (rank + 1)) & ((1 << (cap - rank)) - 1)).bit_count()
        if k == 0:
            return 0.0
        return 1.0 - (1.0 - (self.w_trump[q] if suit == self.trump else self.w_side[q])) ** k

    def void(self, q: int, suit: int) -> float:
        """Chance that ``q`` holds no card of ``suit``."""
        cap = self.caps[q][suit]
        if cap < 0:
            return 1.0
        if q == self.face_holder and suit == self.trump:
            return 0.0
        k = (self.unseen[suit] & ((1 << (cap + 1)) - 1)).bit_count()
        return (1.0 - (self.w_trump[q] if suit == self.trump else self.w_side[q])) ** k

    def beaten_by(self, q: int, card: int, led: int) -> float:
        """Chance that ``q``, playing after us, beats ``card`` (then the best card of the trick)."""
        s, r = divmod(card, RANKS)
        trump = self.trump
        if s == trump:
            if led == trump:
                return self.holds_above(q, trump, r)
            return self.void(q, led) * self.holds_above(q, trump, r)
        return min(1.0, self.holds_above(q, s, r) + self.void(q, s) * self.holds_above(q, trump, -1))

    def win_now(self, card: int) -> float:
        """Chance that ``card`` wins the current trick."""
        s, r = divmod(card, RANKS)
        if self.leading:
            led = s
        else:
            led = self.led
            if s == self.trump:
                if r <= self.best_trump:
                    return 0.0
            elif s != led or self.best_trump >= 0 or r <= self.best_led:
                return 0.0
        p = 1.0
        for q in self.later:
            p *= 1.0 - self.beaten_by(q, card, led)
        return p

    def keep_worth(self, card: int, prm: HeuristicParams) -> float:
        """What ``card`` is worth if kept for a later trick."""
        s, r = divmod(card, RANKS)
        p = 1.0
        if s == self.trump:
            for q in self.active:
                p *= 1.0 - self.holds_above(q, s, r)
            return p + (1.0 - p) * self.ruff_credit
        for q in self.active:
            p *= 1.0 - self.beaten_by(q, card, s)
        return prm.later_discount * p

    def shed_tiebreak(self, card: int) -> float:
        """Small preferences among otherwise equal cards: lower ranks first, and a singleton side
        card first when we hold trumps (the void lets us ruff later)."""
        s, r = divmod(card, RANKS)
        out = -0.001 * r
        if s != self.trump and self.hand_suits[s] == 1 and self.hand_suits[self.trump] > 0:
            out += 0.002
        return out


def _own_discards_out(tb: _Table) -> bool:
    """Whether our discards are still out of play: a reshuffle after our draw brings them back.

    Replays the draw with the announced counts: the stock holds what the deal left; when it runs
    out, the discards and passed hands of the players already served become the stock.
    """
    n, h = tb.n, tb.h
    stock = DECK_SIZE - n * h
    pile = 0
    ours_in_pile = False
    for i in range(n):
        q = (tb.dealer + 1 + i) % n
        if tb.decision[q] == PASSED:
            pile += h
            continue
        d = max(tb.discards[q], 0)
        if d > stock:
            if ours_in_pile:
                return False
            stock, pile = stock + pile - d, 0
        else:
            stock -= d
        pile += d
        if q == 0:
            ours_in_pile = True
    return True


def make_heuristic(variant: str | None, seed: int | None) -> HeuristicAgent:
    """``agents.make`` factory: ``heuristic`` or ``heuristic:<variant>`` (see ``PARAM_SETS``)."""
    key = variant or "default"
    if key not in PARAM_SETS:
        raise ValueError(f"unknown heuristic variant {variant!r}; known: {sorted(PARAM_SETS)}")
    return HeuristicAgent(seed, PARAM_SETS[key], name="heuristic" if key == "default" else f"heuristic:{key}")
