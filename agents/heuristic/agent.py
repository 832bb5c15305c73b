"""``heuristic``: an expert rule-based Bourré player that reads nothing but its own observation.

Everything it knows is decoded from the documented observation fields (``bourre_env.observation``,
``FIELDS`` and the offsets ``O_*``): its hand, the trump suit and turned card, who passed or plays
and how many cards each announced, the pot, the cards played so far and by whom. It never looks
at the env. ``HeuristicAgent`` documents the strategy; ``PARAM_SETS`` names the variants
(``agents.make("heuristic")``, ``"heuristic:tight"``, ``"heuristic:loose"``).

``agents.heuristic.batch`` is this agent compiled for batches of observation rows: it must make
exactly the decisions made here, given the same tie-break number (``HeuristicAgent.choose``), and
``tests/test_heuristic_batch.py`` holds it to that; a change of strategy here is ported there.
"""

from __future__ import annotations

from math import comb

import numpy as np

from agents.base import Observation
from agents.heuristic.knowledge import _PlayState, _Table
from agents.heuristic.odds import (
    ACE,
    ALL_CARDS,
    DECK_SIZE,
    DRAW_FLOORS,
    FULL_SUIT,
    KEEP_SIDE_ACE,
    KEEP_SIDE_KING,
    KEEP_TRUMP,
    KING,
    KING_PER_ACE,
    MAX_LIVE,
    MIN_COUNT_WEIGHT,
    NAME_TRUMP_CARD,
    NUM_CARDS,
    NUM_RANKS,
    PARAM_SETS,
    PLAYING,
    SEATS,
    SURE_WIN,
    WIN_GIVEN,
    HeuristicParams,
    _add_card,
    _cdf,
    _expected_trumps,
    _field,
)
from bourre_env.actions import DECLARE_PLAY, NAME_TRUMP_BASE, PASS, SECOND_STAY, STAY_BASE
from bourre_env.observation import (
    O_DEAL,
    O_PHASE,
    O_POT,
    O_POT_LIMIT,
    O_ROUND,
    ROUND_NAME_TRUMP,
    ROUND_SECOND_PASS,
)

__all__ = ["HeuristicParams", "HeuristicAgent", "PARAM_SETS", "make_heuristic"]


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
        a function of the decisions alone; ``agents.heuristic.batch`` takes the same number per
        row, which is how the two implementations are held to identical decisions.
        """
        if obs[O_ROUND + ROUND_NAME_TRUMP] > 0.5:
            action = self._name_trump(obs, mask)  # dealer_picks_trump: the dealer names trump (NAME_TRUMP_BASE + suit)
        else:
            action = self._decide(obs, mask) if obs[O_PHASE] > 0.5 else self._play(obs, mask, tie_break)
        if not mask[action]:  # defensive: the rules above only choose masked actions
            action = int(np.flatnonzero(mask)[0])
        return action

    # ------------------------------------------------------------------ naming trump
    @staticmethod
    def _name_trump(obs: np.ndarray, mask: np.ndarray) -> int:
        """The strongest suit of the hand: most cards, then the highest ranks (``NAME_TRUMP_BASE + suit``)."""
        hand = np.flatnonzero(obs[:NUM_CARDS] > 0.5).tolist()
        strength = [0.0] * 4
        for c in hand:
            strength[c // NUM_RANKS] += NAME_TRUMP_CARD + c % NUM_RANKS
        for suit in sorted(range(4), key=lambda s: -strength[s]):
            if mask[NAME_TRUMP_BASE + suit]:
                return NAME_TRUMP_BASE + suit
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
            if c % NUM_RANKS == ACE:
                aces |= 1 << (c // NUM_RANKS)
        value: list[float] = []
        for c in hand:
            s, r = divmod(c, NUM_RANKS)
            if s == trump:
                v = KEEP_TRUMP + r
            elif r == ACE:
                v = KEEP_SIDE_ACE
            elif r == KING and (tb.n <= prm.keep_kings_upto or (prm.keep_kings_with_ace and aces >> s & 1)):
                v = KEEP_SIDE_KING
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
            # The second chance to pass after the draw (four_card): PASS drops out, SECOND_STAY stays paying a
            # chip. Stay iff the hand as it is now is worth more than the chip: gains are in pots, the chip is 1 / pot.
            trumps_now = [c % NUM_RANKS for c in hand if c // NUM_RANKS == trump]
            if self._sure_trick(tb, hand):
                return SECOND_STAY
            side_now = [c % NUM_RANKS for c in hand if c // NUM_RANKS != trump]
            p_win, p_bourre = self._outlook(tb, trumps_now, [(side_now.count(ACE), side_now.count(KING), 0)])[0]
            return SECOND_STAY if p_win - p_bourre * cost > prm.margin + 1.0 / max(pot, 1.0) else PASS
        # Candidate draws: keep trumps, aces and kings; or let the side honours go to draw more
        # cards (against many opponents a side ace is often ruffed, and a fresh card may be a
        # trump). The model's best one is played if it is worth playing.
        order = sorted(range(len(hand)), key=value.__getitem__)
        # A declaration round (the rules' "two_rounds"): we are still pending and may only pass or declare
        # play (DECLARE_PLAY); the draws are weighed as if chosen now, and play is declared with DECLARE_PLAY.
        declaring = tb.decision[0] == 0 and not mask[STAY_BASE + 1 :].any()
        stays: list[int] = []
        options: list[tuple[int, int, int]] = []
        for floor in DRAW_FLOORS if prm.choose_draw else DRAW_FLOORS[:1]:
            drop = [i for i in order if value[i] < floor][:max_discard]
            stay = STAY_BASE + sum(1 << i for i in drop)
            if stay in stays or not (mask[stay] or declaring):
                continue  # the same draw as a candidate already listed, or not allowed
            kept = [hand[i] for i in range(len(hand)) if i not in drop]
            if self._sure_trick(tb, kept):
                return DECLARE_PLAY if declaring else stay  # playing cannot cost anything: bourré cannot come
            stays.append(stay)
            side = [c % NUM_RANKS for c in kept if c // NUM_RANKS != trump]
            options.append((side.count(ACE), side.count(KING), len(drop)))
        if not stays:
            return int(np.flatnonzero(mask)[-1])  # no candidate draw is legal: any legal stay
        trumps = [c % NUM_RANKS for c in hand if c // NUM_RANKS == trump]
        gains = [p_win - p_bourre * cost for p_win, p_bourre in self._outlook(tb, trumps, options)]
        k = max(range(len(gains)), key=gains.__getitem__)
        play = DECLARE_PLAY if declaring else stays[k]
        if not mask[PASS]:
            return play  # the dealer must play (or the draw round has no pass): the best draw we found
        return play if gains[k] > prm.margin else PASS

    @staticmethod
    def _sure_trick(tb: _Table, kept: list[int]) -> bool:
        """Whether ``kept`` holds the highest trump that anyone could hold (the turned card included)."""
        top = max((c for c in kept if c // NUM_RANKS == tb.trump), default=-1)
        if top < 0:
            return False
        # every trump above ours is ours too (the dealer's turned card is not ours unless we deal)
        return all(c in kept for c in range(top + 1, NUM_RANKS * (tb.trump + 1)))

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
        face_rank = face % NUM_RANKS if face >= 0 else -1  # -1: no card turned
        # the dealer holds the turned trump, so is likelier to play than others; must on an ace
        q_dealer = 0.0 if face_mine else (1.0 if face_rank == ACE else max(q_play, 0.5))

        # Cards we have not seen: not in our hand (our discards go out of play), not the turned card.
        seen = 1 << face if face >= 0 else 0
        for c in tb.hand:
            seen |= 1 << c
        unseen_total = max(DECK_SIZE - seen.bit_count(), 1)
        trump_bits = ((ALL_CARDS & ~seen) >> (NUM_RANKS * trump)) & FULL_SUIT
        n_unseen_trumps = trump_bits.bit_count()
        my_trumps = sorted(trumps, reverse=True)
        above = [(trump_bits >> (r + 1)).bit_count() for r in my_trumps]  # unseen trumps above ours
        face_above = [not face_mine and face_rank > r for r in my_trumps]
        unseen_side_aces = sum(1 for s in range(4) if s != trump and not (seen >> (s * NUM_RANKS + ACE)) & 1)
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
                dist[playing + j + dp] += (
                    wd * comb(pending_others, j) * q_play**j * (1.0 - q_play) ** (pending_others - j)
                )

        win = [0.0] * len(options)
        bourre = [0.0] * len(options)
        total_w = 0.0
        for m, w in enumerate(dist):
            if w < MIN_COUNT_WEIGHT:
                continue  # too unlikely a number of opponents to be worth the arithmetic
            total_w += w
            if m == 0:
                for k in range(len(options)):
                    win[k] += w  # a lone player takes every trick without play
                continue
            # chance that one given unseen trump is live (in a playing opponent's hand)
            live = min(MAX_LIVE, live_scale * (known_trumps + (m - playing) * pending_trumps) / max(n_unseen_trumps, 1))
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
                for p, count in ((ace, aces), (ace * KING_PER_ACE, kings), (draw, draws)):
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
            later = now * prm.later_discount if st.leading and c // NUM_RANKS != st.trump else st.keep_worth(c, prm)
            score = now * bonus - later + st.shed_tiebreak(c)
            if score > best + 1e-9:
                best = score
                choice = [c]
            elif score > best - 1e-9:
                choice.append(c)
        if len(choice) == 1:
            return choice[0]
        return int(choice[min(int(tie_break * len(choice)), len(choice) - 1)])


def make_heuristic(variant: str | None, seed: int | None) -> HeuristicAgent:
    """``agents.make`` factory: ``heuristic`` or ``heuristic:<variant>`` (see ``PARAM_SETS``)."""
    key = variant or "default"
    if key not in PARAM_SETS:
        raise ValueError(f"unknown heuristic variant {variant!r}; known: {sorted(PARAM_SETS)}")
    return HeuristicAgent(seed, PARAM_SETS[key], name="heuristic" if key == "default" else f"heuristic:{key}")
