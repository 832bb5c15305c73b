"""The layout of a game's state: one ``int64`` vector, its offsets, and the codes stored in it.

A game's whole state is one ``int64`` vector of ``STATE_SIZE`` (the ``S_*`` offsets below); a batch of
games is a 2-D array with one row per game, stepped by the same compiled functions
(``bourre_env.batch``). The action ids, the phase codes and the other small codes the state holds
are defined here too, so that every module of the rules core reads one table. The rule
configuration's parameter vector (``P_*``) is laid out next to ``Rules`` in ``bourre_env.core.rules``.
Code outside ``bourre_env`` reads a state through ``bourre_env.view`` rather than these offsets.
"""

from __future__ import annotations

import numpy as np

from bourre_env.core.cards import NUM_CARDS
from bourre_env.core.rules import MAX_HAND_SIZE, MAX_PLAYERS

# ---------------------------------------------------------------- action ids
PASS = NUM_CARDS  # 52
STAY_BASE = NUM_CARDS + 1  # 53: stay(discard positions bitmask m) is STAY_BASE + m
NUM_DISCARD_SETS = 1 << MAX_HAND_SIZE  # 64
NUM_ACTIONS = STAY_BASE + NUM_DISCARD_SETS  # 117
DECLARE_PLAY = STAY_BASE  # 53 in the DECLARE phase: declare play (the discards are chosen in the draw round)
SECOND_STAY = STAY_BASE  # 53 in the SECOND_PASS phase: stay in the deal, paying ``second_pass_ante``
NAME_TRUMP_BASE = STAY_BASE  # 53 + suit (clubs, diamonds, hearts, spades) in the NAME_TRUMP phase: name trump

# ---------------------------------------------------------------- phases, in game order
# One phase per decision round, then trick play and the ends. A decision phase's code is also its slot in the
# observation's ``decision_round`` field (``ROUND_*``), so the codes below ``PLAY`` keep this order.
NAME_TRUMP = 0  # the dealer names the trump suit before any decision (``Rules.trump_card="named_by_dealer"``)
DECLARE = 1  # the declaration round before the draw (``Rules.declaration`` other than "with_draw")
DRAW_OR_PASS = 2  # each player in turn passes, or plays discarding and drawing (``Rules.declaration="with_draw"``)
DRAW = 3  # after a declaration round, each declared player in turn discards and draws (no pass)
SECOND_PASS = 4  # the second chance to pass after the draw (``Rules.second_pass_ante`` set)
PLAY = 5
DEAL_OVER = 6
GAME_OVER = 7
PHASE_NAMES = (
    "trump naming",
    "declaration",
    "draw or pass",
    "draw",
    "second pass",
    "trick play",
    "deal over",
    "episode over",
)
"""The phases' names, by code (the first five are the decision rounds of the env docstring's Phases table)."""
DRAW_PHASES = (DRAW_OR_PASS, DRAW)  # the phases whose stays discard and draw

# the decision rounds of the observation's ``decision_round`` field: the decision phases
ROUND_NAME_TRUMP = NAME_TRUMP
ROUND_DECLARE = DECLARE
ROUND_DRAW_OR_PASS = DRAW_OR_PASS
ROUND_DRAW = DRAW
ROUND_SECOND_PASS = SECOND_PASS
ROUND_NAMES = PHASE_NAMES[:PLAY]
"""The names of the decision rounds, in order (the round names of the env docstring's Phases table)."""

# decisions
PENDING = 0
PASSED = 1
PLAYING = 2

# face-up card whereabouts
FACE_IN_HAND = 0  # in the dealer's hand (a sixth card while a dealer who may take it decides; laid down
#                   with the hand if the dealer passes)
FACE_DEAD = 1  # public and out of play: discarded by the dealer, or a separate trump card that is no one's
FACE_PLAYED = 2
FACE_NONE = 3  # no card is turned (the dealer names trump); ``S_FACE`` is then -1

# how a playing seat's deal ended (bits of ``S_OUTCOME``, written by the settlement)
OUTCOME_WON = 1  # alone with the most tricks, and took the pot (a reneging top scorer forfeits it)
OUTCOME_TIED = 2  # tied for the most tricks: the pot was divided or carried
OUTCOME_BOURRE = 4  # played and took no trick
OUTCOME_RENEGED = 8

# ---------------------------------------------------------------- scratch layout
# The cinch memo and the search statistics are no part of the game: a query (``legal_actions``) writes them. They
# live in a per-game scratch array (``new_scratch``) that the ``*_with`` functions of the core take beside the
# state (``core.legal_actions_with``, ``core.step_with``); a scratch serves one game and is cleared when its
# state is replaced (a new episode, another state). The functions without a scratch argument (``legal_actions``,
# ``step``, ``has_cinch``...) use a fresh one for each call: they remember nothing between calls.
X_CINCH_KEY = 0  # (S_MOVES * MAX_PLAYERS + seat + 1) of the memoised cinch answer, 0 for none
X_CINCH_HAND = 1  # the hand of that seat then
X_CINCH_PLAYED = 2  # the cards played then
X_CINCH_VAL = 3  # the memoised answer, 0 or 1
X_CINCH_SEARCHES = 4  # exact searches run (statistics)
X_CINCH_NODES = 5  # search nodes visited (statistics)
X_CINCH_ABORTS = 6  # exact searches that gave up (none since the search has no budget; kept for reports)
X_CINCH_LIMIT_US = 7  # wall-clock limit of one cinch search in microseconds, past which it raises; 0: the default
SCRATCH_SIZE = 8

# ---------------------------------------------------------------- state layout
S_PHASE = 0
S_DEALER = 1
S_CUR = 2  # seat to act, -1 when none
S_TRUMP = 3
S_FACE = 4
S_FACE_STATE = 5
S_DEAL_NO = 6
S_POT = 7
S_STOCK_POS = 8
S_STOCK_LEN = 9
S_PILE_LEN = 10
S_RNG = 11
S_TRICK_NO = 12
S_LEADER = 13
S_NPLAYED = 14
S_LED = 15  # suit led to the current trick, -1 before the lead
S_NACTIVE = 16
S_STAYED = 17  # bitmask of the seats that stayed at the second chance to pass (SECOND_PASS)
S_RAKE_TOTAL = 18
S_PLAYED = 19  # bitmask of every card played to a trick this deal, current trick included
S_DEALS_DONE = 20
S_MOVES = 21  # decisions taken this episode (with the seat, keys the cinch memo)
S_HAND = 22  # [MAX_PLAYERS] card bitmasks
S_DECISION = S_HAND + MAX_PLAYERS  # [MAX_PLAYERS] PENDING / PASSED / PLAYING
S_NDISCARD = S_DECISION + MAX_PLAYERS  # [MAX_PLAYERS] announced discard count, -1 until announced
S_TRICKS = S_NDISCARD + MAX_PLAYERS  # [MAX_PLAYERS] tricks won this deal
S_EXEMPT = S_TRICKS + MAX_PLAYERS  # [MAX_PLAYERS] 1 if the player antes nothing for the next deal
S_RENEGED = S_EXEMPT + MAX_PLAYERS  # [MAX_PLAYERS]
S_REWARD = S_RENEGED + MAX_PLAYERS  # [MAX_PLAYERS] chip change of the current deal
S_CHIPS = S_REWARD + MAX_PLAYERS  # [MAX_PLAYERS] chip change over the episode
S_DISCARDS = S_CHIPS + MAX_PLAYERS  # [MAX_PLAYERS] bitmask of the cards each player discarded
S_TRICK_CARDS = S_DISCARDS + MAX_PLAYERS  # [MAX_HAND_SIZE][MAX_PLAYERS] card each seat played, -1 none
S_TRICK_LEADER = S_TRICK_CARDS + MAX_HAND_SIZE * MAX_PLAYERS  # [MAX_HAND_SIZE]
S_TRICK_WINNER = S_TRICK_LEADER + MAX_HAND_SIZE  # [MAX_HAND_SIZE]
S_STOCK = S_TRICK_WINNER + MAX_HAND_SIZE  # [52]
S_PILE = S_STOCK + NUM_CARDS  # [52] discards and passed hands that a reshuffle would use
S_KNOWN_OUT = S_PILE + NUM_CARDS  # [MAX_PLAYERS] own discards each player knows are out of play (not reshuffled)
S_RESHUFFLES = S_KNOWN_OUT + MAX_PLAYERS  # times the stock ran out and was rebuilt this deal (public)
S_OUTCOME = S_RESHUFFLES + 1  # [MAX_PLAYERS] OUTCOME_* bits of each seat, set when the deal is settled
S_FACE_RESHUFFLED = S_OUTCOME + MAX_PLAYERS  # 1 once a passed dealer's turned card went back into the stock (public)
S_ABSENT = S_FACE_RESHUFFLED + 1  # [MAX_PLAYERS] cards each seat's plays this deal prove it does not hold (public)
STATE_SIZE = S_ABSENT + MAX_PLAYERS


def new_scratch() -> np.ndarray:
    """A zeroed scratch array for one game (``core.legal_actions_with``, ``core.step_with``)."""
    return np.zeros(SCRATCH_SIZE, dtype=np.int64)


def new_state() -> np.ndarray:
    """A zeroed state vector (``start_episode`` fills it)."""
    return np.zeros(STATE_SIZE, dtype=np.int64)
