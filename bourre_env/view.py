"""A read-only view of a game state, so that code outside ``bourre_env`` never reads a state offset.

``StateView(state, num_players)`` reads one state vector (``core.new_state()``, a row of
``BatchGame``'s states, the AEC env's ``state_vector``) through named, typed properties: the phase,
the dealer, the seat to act, the pot, each seat's hand, decision, tricks, reward and outcome, the
cards of each trick. It holds a read-only numpy view of the vector, not a copy: it follows the
state as the game goes on, and nothing written through it can reach the state.

>>> v = StateView(env.unwrapped.state_vector, 5)
>>> v.phase == core.PLAY, v.to_act, v.pot, v.hand(v.to_act)

For compiled (numba) code outside the package the same reads are small ``@njit`` functions
(``phase_of``, ``to_act``, ``hand_of``, ...), which numba inlines into the caller's kernel.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bourre_env.card_masks import cards_of
from bourre_env.core.layout import (
    OUTCOME_BOURRE,
    OUTCOME_RENEGED,
    OUTCOME_TIED,
    OUTCOME_WON,
    PLAYING,
    S_CHIPS,
    S_CUR,
    S_DEAL_NO,
    S_DEALER,
    S_DEALS_DONE,
    S_DECISION,
    S_FACE,
    S_FACE_STATE,
    S_HAND,
    S_NDISCARD,
    S_OUTCOME,
    S_PHASE,
    S_PLAYED,
    S_POT,
    S_RESHUFFLES,
    S_REWARD,
    S_RNG,
    S_STOCK,
    S_STOCK_LEN,
    S_STOCK_POS,
    S_TRICK_CARDS,
    S_TRICK_LEADER,
    S_TRICK_NO,
    S_TRICK_WINNER,
    S_TRICKS,
    S_TRUMP,
    STATE_SIZE,
)
from bourre_env.core.rules import MAX_HAND_SIZE, MAX_PLAYERS, P_NUM_PLAYERS

__all__ = [
    "StateView",
    "phase_of",
    "to_act",
    "dealer_of",
    "pot_of",
    "hand_of",
    "decision_of",
    "reward_of",
    "tricks_of",
    "trick_card",
    "played_cards",
    "rewards_column",
    "phase_column",
    "to_act_column",
    "decision_column",
    "stock_position",
    "stock_to_come",
    "reshuffles_of",
    "rng_state_of",
    "num_players_of",
]


class StateView:
    """Named, typed, read-only access to one state vector of a table of ``num_players``."""

    __slots__ = ("_s", "num_players")

    def __init__(self, state: np.ndarray, num_players: int) -> None:
        if not isinstance(state, np.ndarray) or state.shape != (STATE_SIZE,) or state.dtype != np.int64:
            raise ValueError(
                f"state: expected an int64 vector of {STATE_SIZE} (core.new_state()), got "
                f"{getattr(state, 'dtype', type(state).__name__)} {getattr(state, 'shape', '')}"
            )
        if not 1 <= num_players <= MAX_PLAYERS:
            raise ValueError(f"num_players: expected 1..{MAX_PLAYERS}, got {num_players!r}")
        view = state.view()
        view.flags.writeable = False
        self._s = view
        self.num_players = int(num_players)

    # -- the table ---------------------------------------------------------
    @property
    def phase(self) -> int:
        """``core.NAME_TRUMP``, ``DECLARE``, ``DRAW_OR_PASS``, ``DRAW``, ``SECOND_PASS``, ``PLAY``, ``DEAL_OVER`` or
        ``GAME_OVER`` (``core.PHASE_NAMES`` names them)."""
        return int(self._s[S_PHASE])

    @property
    def dealer(self) -> int:
        return int(self._s[S_DEALER])

    @property
    def to_act(self) -> int:
        """The seat to act, -1 when no one is (a deal over, the episode over)."""
        return int(self._s[S_CUR])

    @property
    def pot(self) -> int:
        """Chips in the pot."""
        return int(self._s[S_POT])

    @property
    def deal_no(self) -> int:
        """The deal under way, 0 for the first of the episode."""
        return int(self._s[S_DEAL_NO])

    @property
    def deals_done(self) -> int:
        """Deals settled this episode."""
        return int(self._s[S_DEALS_DONE])

    @property
    def trump(self) -> int:
        """Trump suit (0..3), -1 until the dealer names it."""
        return int(self._s[S_TRUMP])

    @property
    def face(self) -> int:
        """The card turned for trump, -1 when none is turned."""
        return int(self._s[S_FACE])

    @property
    def face_state(self) -> int:
        """Where the turned card is (``core.FACE_*``)."""
        return int(self._s[S_FACE_STATE])

    @property
    def trick_no(self) -> int:
        """Tricks completed this deal (the trick under way, counted from 0)."""
        return int(self._s[S_TRICK_NO])

    @property
    def played(self) -> list[int]:
        """Every card played to a trick this deal, current trick included, by card id."""
        return _cards(int(self._s[S_PLAYED]))

    # -- per seat ----------------------------------------------------------
    def _seat(self, seat: int) -> int:
        if not 0 <= seat < self.num_players:
            raise ValueError(f"seat: expected 0..{self.num_players - 1}, got {seat!r}")
        return int(seat)

    def hand(self, seat: int) -> list[int]:
        """The cards ``seat`` holds, by card id (ascending)."""
        return _cards(int(self._s[S_HAND + self._seat(seat)]))

    def hand_mask(self, seat: int) -> int:
        """The cards ``seat`` holds, as a card bitmask."""
        return int(self._s[S_HAND + self._seat(seat)])

    def decision(self, seat: int) -> int:
        """``core.PENDING``, ``PASSED`` or ``PLAYING``."""
        return int(self._s[S_DECISION + self._seat(seat)])

    def playing(self, seat: int) -> bool:
        return self.decision(seat) == PLAYING

    def discards_announced(self, seat: int) -> int:
        """How many cards ``seat`` discarded at the draw, -1 until it drew."""
        return int(self._s[S_NDISCARD + self._seat(seat)])

    def tricks(self, seat: int) -> int:
        """Tricks ``seat`` won this deal."""
        return int(self._s[S_TRICKS + self._seat(seat)])

    def reward(self, seat: int) -> int:
        """Chip change of ``seat`` in the current (or just settled) deal."""
        return int(self._s[S_REWARD + self._seat(seat)])

    def chips(self, seat: int) -> int:
        """Chip change of ``seat`` over the episode."""
        return int(self._s[S_CHIPS + self._seat(seat)])

    @property
    def rewards(self) -> np.ndarray:
        """Every seat's chip change in the current deal (int64, one per seat; a copy)."""
        rewards: np.ndarray = self._s[S_REWARD : S_REWARD + self.num_players].copy()
        return rewards

    def outcome(self, seat: int) -> int:
        """``core.OUTCOME_*`` bits of ``seat``, set when the deal is settled (0 for a seat that passed)."""
        return int(self._s[S_OUTCOME + self._seat(seat)])

    def won(self, seat: int) -> bool:
        return bool(self.outcome(seat) & OUTCOME_WON)

    def tied(self, seat: int) -> bool:
        return bool(self.outcome(seat) & OUTCOME_TIED)

    def bourre(self, seat: int) -> bool:
        return bool(self.outcome(seat) & OUTCOME_BOURRE)

    def reneged(self, seat: int) -> bool:
        return bool(self.outcome(seat) & OUTCOME_RENEGED)

    # -- tricks ------------------------------------------------------------
    def _trick(self, trick: int) -> int:
        if not 0 <= trick < MAX_HAND_SIZE:
            raise ValueError(f"trick: expected 0..{MAX_HAND_SIZE - 1}, got {trick!r}")
        return int(trick)

    def trick_cards(self, trick: int) -> list[int]:
        """The card each seat played to ``trick`` (-1: none), one entry per seat."""
        row = S_TRICK_CARDS + self._trick(trick) * MAX_PLAYERS
        return [int(c) for c in self._s[row : row + self.num_players]]

    def trick_leader(self, trick: int) -> int:
        """The seat that led ``trick``, -1 before it is led."""
        return int(self._s[S_TRICK_LEADER + self._trick(trick)])

    def trick_winner(self, trick: int) -> int:
        """The seat that won ``trick``, -1 until it is complete."""
        return int(self._s[S_TRICK_WINNER + self._trick(trick)])


def _cards(mask: int) -> list[int]:
    return cards_of(mask)


def rewards_column(seat: int = 0) -> int:
    """The column of ``seat``'s deal reward in a 2-D array of states (for ``states[:, rewards_column(0)]``)."""
    if not 0 <= seat < MAX_PLAYERS:
        raise ValueError(f"seat: expected 0..{MAX_PLAYERS - 1}, got {seat!r}")
    return S_REWARD + seat


def phase_column() -> int:
    """The column of the phase in a 2-D array of states (``states[:, phase_column()]``)."""
    return S_PHASE


def to_act_column() -> int:
    """The column of the seat to act (-1 when none) in a 2-D array of states."""
    return S_CUR


def decision_column(seat: int = 0) -> int:
    """The column of ``seat``'s decision (``PENDING``, ``PASSED``, ``PLAYING``) in a 2-D array of states; the
    seats' columns follow one another, so ``states[rows, decision_column() + seats]`` reads one seat per row."""
    if not 0 <= seat < MAX_PLAYERS:
        raise ValueError(f"seat: expected 0..{MAX_PLAYERS - 1}, got {seat!r}")
    return S_DECISION + seat


def stock_position(s: np.ndarray) -> int:
    """Cards drawn so far from the stock (the dealt one, or the one a reshuffle rebuilt)."""
    return int(s[S_STOCK_POS])


def stock_to_come(s: np.ndarray) -> slice:
    """The columns of the stock's cards still to be drawn, in the order they will come; writing a permutation of
    them into a copy of the state gives the same game with the stock re-shuffled below the cards already seen."""
    return slice(S_STOCK + int(s[S_STOCK_POS]), S_STOCK + int(s[S_STOCK_LEN]))


def reshuffles_of(s: np.ndarray) -> int:
    """Times the stock ran out this deal and was rebuilt from the discards (public)."""
    return int(s[S_RESHUFFLES])


def rng_state_of(s: np.ndarray) -> int:
    """The state's own random stream (it orders a rebuilt stock), as ``core.start_episode`` takes it."""
    return int(s[S_RNG])


# ---------------------------------------------------------------- for compiled code
@njit(cache=True)
def phase_of(s: np.ndarray) -> int:
    return int(s[S_PHASE])


@njit(cache=True)
def to_act(s: np.ndarray) -> int:
    """The seat to act, -1 when none."""
    return int(s[S_CUR])


@njit(cache=True)
def dealer_of(s: np.ndarray) -> int:
    return int(s[S_DEALER])


@njit(cache=True)
def pot_of(s: np.ndarray) -> int:
    return int(s[S_POT])


@njit(cache=True)
def hand_of(s: np.ndarray, seat: int) -> int:
    """The card bitmask of ``seat``'s hand."""
    return int(s[S_HAND + seat])


@njit(cache=True)
def decision_of(s: np.ndarray, seat: int) -> int:
    """``PENDING``, ``PASSED`` or ``PLAYING`` (the true decision; ``core.decision_seen`` is what a seat sees)."""
    return int(s[S_DECISION + seat])


@njit(cache=True)
def reward_of(s: np.ndarray, seat: int) -> int:
    """Chip change of ``seat`` in the current (or just settled) deal."""
    return int(s[S_REWARD + seat])


@njit(cache=True)
def tricks_of(s: np.ndarray, seat: int) -> int:
    return int(s[S_TRICKS + seat])


@njit(cache=True)
def trick_card(s: np.ndarray, trick: int, seat: int) -> int:
    """The card ``seat`` played to ``trick``, -1 if none."""
    return int(s[S_TRICK_CARDS + trick * MAX_PLAYERS + seat])


@njit(cache=True)
def played_cards(s: np.ndarray) -> int:
    """Bitmask of every card played to a trick this deal."""
    return int(s[S_PLAYED])


@njit(cache=True)
def num_players_of(p: np.ndarray) -> int:
    """The number of seats of the rules whose parameter vector (``Rules.params()``) is ``p``."""
    return int(p[P_NUM_PLAYERS])
