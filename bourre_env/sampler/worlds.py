"""Worlds a seat cannot rule out: complete hidden states drawn from what one seat has seen.

Search agents (``agents.search.pimc``, ``agents.search.ismcts``) need full game states that agree with everything an
acting seat knows. ``WorldSampler(observation)`` reads the observation vector of one seat
(``bourre_env.observation``) and draws such worlds in batches: each is a core state
(``core.STATE_SIZE``) that holds every hand, every discard and passed hand, the stock in order and a
reshuffle seed, placed in the observer's frame: the observer is seat 0 and seat ``k`` is the player
``k`` places to its left (the observation's relative seats).

>>> sampler = WorldSampler(obs["observation"])          # the acting seat's observation vector
>>> worlds = sampler.sample(64, seed=0)                 # (64, core.STATE_SIZE) int64, ready to step
>>> sampler.params                                      # the rule parameters the worlds are stepped with

What a world is
---------------
A deal is fixed by the order of the deck, the cards each player chose to discard, and the order of the
stock after each reshuffle (plus, during a simultaneous declaration round, the declarations not yet
revealed). A world is one choice of these. It is *consistent* when dealing it and replaying the deal's
public record (the trump named, every pass, declaration and announced discard count, every card played
to a trick, in the order the rules impose) through ``core.step`` succeeds at every step and gives the
observer exactly the observation it has. The public record is rebuilt from the observation alone; the
rule configuration is read from its rule fields (``rules_from_observation``) unless one is given.

Consistency uses everything that is public or proven: the observer's hand, its discards and its plays;
the turned card and where it is; the counts each player announced; every card played and by whom; what
each earlier play proves under the rules (``core.proven_absent``: a void in the suit led, no card that
could have beaten, trumped or overtrumped when the rules required it, no trump honour behind another
lead; nothing with ``illegal_action="renege"``); and what the replay itself checks: a play that an
opponent's cinch would have forbidden, a declaration an entry requirement forbids.

Uniformity
----------
Worlds are drawn uniformly among the consistent ones (decks, discard choices and reshuffle orders each
counted once). The sampler works on *bins*: the sets of cards whose size the public record fixes (each
player's kept cards, discards, draws from each stock, passed hands, the stock left, the turned card).
Any dealing order of a hand and any order of the cards drawn together give the same state, and each
bin assignment stands for the same number of decks, so uniform bin assignments give uniform worlds.
A reshuffle is handled by the identity that a uniform deal followed by a uniform reshuffle is a uniform
placement of the cards at their *final* places (drawn after the reshuffle, or left in the new stock)
together with a uniform choice of which reshuffled card had been in which discard or passed hand: the
final places are sampled, then the reshuffled cards are put back where the record requires (the
observer's own discards into its discard pile) and the rest at random.

The final places are filled by an exact method. Cards are grouped into *types* (cards that may go to
the same bins: unknown cards by which opponents' hands their plays exclude them from, each opponent's
played cards, reshuffled cards of the observer) and bins into *groups* with the same allowed cards.
Counting the ways to complete an assignment type by type (a dynamic programme over the capacities the
groups have left) gives each type's split among the groups with the right probability; every card of a
type is then placed uniformly. When the table of counts would be too large (many opponents with
different proven voids at 7-8 players) an exact rejection method is used instead: groups take their
cards one at a time from what is left to them, and a proposal is kept with the probability that makes
every assignment equally likely. Constraints that only the replay checks (an opponent's cinch, an entry
requirement, a hidden declaration) reject the whole world, which keeps uniformity. The test that defines
the sampler (``tests/test_sampler.py``) replays every sampled world from its deck and compares
observations, and compares the sampler with an exhaustive count of the worlds of small decks.

Reshuffles
----------
When the stock runs out during the draw, the rules rebuild it from the discards and passed hands of the
players already served, shuffled with a seed (``core.draw_card``). The order is hidden, so the world
chooses it: before the draw that runs the stock out, the replay permutes the pile so that the core's
own shuffle, with the world's seed, deals the cards in the order the world chose. The seed left in the
state then shuffles any later reshuffle of a rollout at random.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from bourre_env import core
from bourre_env.card_masks import cards_of
from bourre_env.core.rules import Rules
from bourre_env.observation import OBS_SIZE
from bourre_env.sampler.kernels import _count_levels, _sample_kernel
from bourre_env.sampler.plan import DP_LIMIT, EV_ACTION, EV_DRAW, EV_HIDDEN, MAX_ATTEMPTS_PER_WORLD, _flat, _Plan
from bourre_env.sampler.record import PublicRecord, _check_vector, decode, rules_from_observation

__all__ = [
    "PublicRecord",
    "WorldSampler",
    "decode",
    "rules_from_observation",
    "sample_worlds",
    "DP_LIMIT",
    "EV_ACTION",
    "EV_DRAW",
    "EV_HIDDEN",
]


# ---------------------------------------------------------------------------------------------- the sampler
def _seed_state(seed: int | np.random.Generator | None) -> np.ndarray:
    if isinstance(seed, np.random.Generator):
        value = int(seed.integers(0, 2**63 - 1))
    elif seed is None:
        value = int(np.random.SeedSequence().generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
    elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        value = int(np.random.SeedSequence(int(seed)).generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
    else:
        raise ValueError(f"seed: expected an integer, a numpy Generator or None, got {seed!r}")
    return np.array([value], dtype=np.int64)


@dataclasses.dataclass
class Worlds:
    """Sampled worlds with what rebuilds each from scratch (``sample(..., recipes=True)``).

    ``states[i]`` is world ``i`` at the observer's decision; it is what dealing ``decks[i]`` with the
    plan's dealer and ``seeds[i]`` (``core.start_episode``) and stepping ``actions[i]`` gives, the pile
    being permuted before each draw that runs the stock out so that the stock it becomes reads
    ``reshuffle_orders[i]`` (the new stocks one after another), and the pot set to the observation's.
    ``discards[i, q]``: the cards seat ``q`` discards in world ``i`` (a card mask; the observer's are its own).
    ``snapshots[i, j]``: world ``i`` just before event ``snapshot_events[j]`` (``sample(snapshots=...)``).
    With ``sample(until=e)`` the states are the worlds just before event ``e`` and ``actions`` stop there.
    """

    states: np.ndarray
    decks: np.ndarray
    seeds: np.ndarray
    actions: np.ndarray
    reshuffle_orders: np.ndarray
    dealer: int
    proposals: int
    discards: np.ndarray | None = None
    snapshots: np.ndarray | None = None
    snapshot_events: np.ndarray | None = None


class WorldSampler:
    """Draws worlds consistent with one seat's observation (module docstring: what, and how).

    ``observation`` is the seat's observation vector (``OBS_SIZE`` float32, the ``"observation"`` entry of
    the env's dict). ``rules``: the rule configuration, by default read from the observation's rule fields.
    Construction does the per-observation work (the public record, the bins, the counting tables);
    ``sample`` is compiled and draws a batch. ``ValueError`` when the vector is malformed, belongs to a
    finished deal, or admits no world.
    """

    def __init__(self, observation: np.ndarray, rules: Rules | None = None, method: str = "auto") -> None:
        obs = _check_vector(observation)
        if method not in ("auto", "dp", "rejection"):
            raise ValueError(f"method: expected 'auto', 'dp' or 'rejection', got {method!r}")
        self.record = decode(obs)
        self.rules = rules if rules is not None else rules_from_observation(obs, self.record)
        if not isinstance(self.rules, Rules):
            raise ValueError(f"rules: expected a Rules object, got {self.rules!r}")
        if self.rules.num_players != self.record.num_players or self.rules.hand_size != self.record.hand_size:
            raise ValueError("rules: the table size or hand size differs from the observation's")
        self.params = self.rules.params()
        # the observation's own deal number and episode length decide whether the deal ends the episode
        self.params[core.P_DEALS] = self.record.deal_no + 1 + self.record.deals_left
        plan = _Plan(self.record, self.rules, self.params)
        self.plan = plan
        self.method = method
        self._build_arrays()

    @classmethod
    def from_state(cls, state: np.ndarray, rules: Rules, seat: int, method: str = "auto") -> WorldSampler:
        """The sampler of what ``seat`` sees in a core state (its observation, encoded here), for tests and tools
        that hold the full state; an agent has only its observation and uses the constructor."""
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < rules.num_players:
            raise ValueError(f"seat: expected a seat in 0..{rules.num_players - 1}, got {seat!r}")
        return cls(observer_view(np.asarray(state, dtype=np.int64), rules.params(), int(seat)), rules, method)

    def _build_arrays(self) -> None:
        plan = self.plan
        sizes = np.array(plan.bin_size, dtype=np.int64)
        self._bin_size = sizes
        self._bin_off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self._pin_cards, self._pin_card_start = _flat([cards_of(mask) for mask, _ in plan.pinned])
        self._pin_bins, self._pin_bin_start = _flat([bins for _, bins in plan.pinned])
        self._type_cards, self._type_start = _flat(plan.type_cards)
        self._caps = np.array(plan.caps, dtype=np.int64)
        self._allowed = np.ascontiguousarray(plan.allowed)
        self._below = np.ascontiguousarray(plan.below)
        self._group_bins, self._group_start = _flat(plan.group_bins)
        self._forced, self._forced_start = _flat(plan.forced)
        self._sub_groups, self._sub_start = _flat(plan.sub_groups)
        self._group_caps = np.array(plan.group_caps, dtype=np.int64)
        counts = np.diff(self._type_start)
        self._keys = np.zeros(1, dtype=np.int64)
        self._weights = np.zeros(1, dtype=np.float64)
        self._starts = np.zeros(2, dtype=np.int64)
        self._stride = np.ones(1, dtype=np.int64)
        if len(plan.type_cards) == 0:
            self.method = "dp"  # nothing to count: every hidden card is placed already
        elif self.method != "rejection":
            keys, weights, starts, stride, done = _count_levels(counts, self._caps, self._allowed, DP_LIMIT)
            if done:
                if weights[0] <= 0.0:
                    raise ValueError("observation: no world is consistent with it (the hidden cards cannot be placed)")
                self._keys, self._weights, self._starts, self._stride = keys, weights, starts, stride
                self.method = "dp"
            elif self.method == "dp":
                raise ValueError(f"method 'dp': the counting needs more than {DP_LIMIT} steps for this observation")
            else:
                self.method = "rejection"
        stages = list(range(1, plan.stages + 1))
        self._stage_final, self._stage_final_start = _flat([plan.stage_final[r] for r in stages])
        self._pf_bins, self._pf_start = _flat([plan.pf[r] for r in stages])
        self._card_pf_bin = np.array(plan.card_pf_bin, dtype=np.int64)
        self._order_bins, self._order_start = _flat(plan.stage_order)
        self._init_bins, self._init_start = _flat(plan.init_bins)
        self._disc_bin = np.array(plan.disc_bin, dtype=np.int64)
        ev = plan.events
        self._ev_kind = np.array([e[0] for e in ev], dtype=np.int64)
        self._ev_seat = np.array([e[1] for e in ev], dtype=np.int64)
        self._ev_arg = np.array([e[2] for e in ev], dtype=np.int64)
        self._reshuffled_cards = sum(int(sizes[b]) for r in stages for b in plan.pf[r])

    @property
    def events(self) -> list[tuple[int, int, int]]:
        """The public record replayed into every world: ``(kind, seat, action)`` per decision, in order (``EV_*``
        kinds; the action of a draw or a secret declaration is the world's own)."""
        return list(self.plan.events)

    def sample(
        self,
        count: int,
        seed: int | np.random.Generator | None = 0,
        recipes: bool = False,
        max_attempts: int | None = None,
        snapshots: list[int] | None = None,
        until: int | None = None,
    ) -> Any:
        """``count`` worlds as a ``(count, core.STATE_SIZE)`` int64 array (the observer is seat 0), or a
        ``Worlds`` with what rebuilds them when ``recipes`` is set. Seeded: the same seed gives the same worlds.

        ``snapshots``: indices into ``events``; the ``Worlds`` (implied) then holds in ``snapshots[i, j]`` world
        ``i`` just before its event ``snapshots[j]``, for instance to ask what a model of the other players
        would have done there.

        ``until``: an event index; each world is then returned just before that event, its replay cut there.
        Such a world agrees with the record up to that event only (a later play may prove it wrong): for a
        caller that replays the rest itself and compares observations, as ``agents.search.inference`` does.

        ``RuntimeError`` if ``max_attempts`` proposals (default ``MAX_ATTEMPTS_PER_WORLD * count``) do not
        give ``count`` consistent worlds.
        """
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
            raise ValueError(f"count: expected an integer >= 1, got {count!r}")
        count = int(count)
        rng = _seed_state(seed)
        plan = self.plan
        rules = self.rules
        trump_card = int(self.params[core.P_TRUMP_CARD])
        out = np.zeros((count, core.STATE_SIZE), dtype=np.int64)
        decks = np.zeros((count, rules.deck_size), dtype=np.int64)
        seeds = np.zeros(count, dtype=np.int64)
        actions = np.zeros((count, max(len(plan.events), 1)), dtype=np.int64)
        orders = np.zeros((count, max(self._reshuffled_cards, 1)), dtype=np.int64)
        limit = MAX_ATTEMPTS_PER_WORLD * count if max_attempts is None else int(max_attempts)
        if until is not None and not (isinstance(until, (int, np.integer)) and 0 <= until <= len(plan.events)):
            raise ValueError(f"until: expected an event index in 0..{len(plan.events)}, got {until!r}")
        snap_events = np.asarray(sorted(snapshots or []), dtype=np.int64)
        if snap_events.size and (
            snap_events[0] < 0 or snap_events[-1] >= len(plan.events) or np.any(np.diff(snap_events) == 0)
        ):
            raise ValueError(f"snapshots: expected distinct event indices in 0..{len(plan.events) - 1}")
        snaps = np.zeros((count, snap_events.size, core.STATE_SIZE) if snap_events.size else (1, 1, 1), dtype=np.int64)
        discards = np.zeros((count, plan.n), dtype=np.int64)
        dealt = plan.n * plan.h + (1 if trump_card in (core.TRUMP_SEPARATE, core.TRUMP_DEALER_MAY_TAKE) else 0)
        made, tries, refused = _sample_kernel(
            self.params,
            plan.n,
            plan.h,
            plan.dealer,
            rules.deck_size,
            dealt,
            plan.face,
            trump_card == core.TRUMP_DEALERS_CARD,
            trump_card in (core.TRUMP_SEPARATE, core.TRUMP_DEALER_MAY_TAKE),
            plan.face_dead_by_dealer,
            self._bin_size,
            self._bin_off,
            self._pin_cards,
            self._pin_card_start,
            self._pin_bins,
            self._pin_bin_start,
            self._type_cards,
            self._type_start,
            self._caps,
            self._allowed,
            self._sub_groups,
            self._sub_start,
            self._group_caps,
            self._group_bins,
            self._group_start,
            self._forced,
            self._forced_start,
            self.method == "dp",
            self._keys,
            self._weights,
            self._starts,
            self._stride,
            self._below,
            self._stage_final,
            self._stage_final_start,
            self._pf_bins,
            self._pf_start,
            self._card_pf_bin,
            self._order_bins,
            self._order_start,
            self._init_bins,
            self._init_start,
            self._disc_bin,
            self._ev_kind,
            self._ev_seat,
            self._ev_arg,
            self.record.pot,
            self.record.deal_no,
            count,
            limit,
            rng,
            out,
            decks,
            seeds,
            actions,
            orders,
            snap_events,
            snaps,
            -1 if until is None else until,
            discards,
        )
        self.last_proposals = tries
        self.last_refused = refused
        if made < count:
            raise RuntimeError(
                f"only {made} consistent worlds in {tries} proposals ({refused} refused by the replay): "
                "the observation admits almost none (or it was not produced by the rules)"
            )
        if not recipes and snapshots is None and until is None:
            return out
        return Worlds(
            out,
            decks,
            seeds,
            actions[:, : len(plan.events)],
            orders[:, : self._reshuffled_cards],
            plan.dealer,
            tries,
            discards,
            snaps if snap_events.size else None,
            snap_events,
        )


def sample_worlds(
    observation: np.ndarray, count: int, seed: int | np.random.Generator | None = 0, rules: Rules | None = None
) -> np.ndarray:
    """``WorldSampler(observation, rules).sample(count, seed)``: worlds as core states, the observer in seat 0."""
    states: np.ndarray = WorldSampler(observation, rules).sample(count, seed)  # sample's plain form: states only
    return states


def observer_view(state: np.ndarray, params: np.ndarray, seat: int) -> np.ndarray:
    """The observation vector of ``seat`` in a core state (read only: the cinch memo goes to a scratch array)."""
    from bourre_env import observation as _observation

    out = np.zeros(OBS_SIZE, dtype=np.float32)
    _observation.encode_with(state, params, seat, out, core.new_scratch())
    return out
