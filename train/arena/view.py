"""A seat's view for a ``turn`` message, built fast from the seat's observation alone.

The view is the browser table's (``train.serve.tables.seat_view``), entry for entry: ``tests/test_arena_protocol.py``
holds the two equal on states of many games, that function being the oracle. This one is built for the arena's hot
path (a turn of every remote decision): it reads the observation once, through its non-zero entries (``observation``'s
layout, ``FIELDS`` and ``OFFSETS``), instead of splitting it into arrays, and it writes the entries of a draw's stays
(up to 32, each naming the cards it discards) from their discards directly, as ``bourre_env.actions.describe`` would
name them, without parsing the hand again for each. Nothing but the observation and the legal mask enters a view.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bourre_env import core, observation
from bourre_env.actions import describe
from bourre_env.core import cards
from train.web.trick_list import trick_list

__all__ = ["legal_entries", "view_of"]

_DECISION_NAMES = ("deciding", "passed", "playing")
_FACE_NAMES = ("in the dealer's hand", "out of play", "played")
_CARD = tuple(cards.to_str(c) for c in range(core.NUM_CARDS))


def _locator() -> tuple[list[int], list[int]]:
    """For each index of the observation vector: its field's number in ``FIELDS`` and its flat index in the field."""
    field_of: list[int] = []
    local_of: list[int] = []
    for number, field in enumerate(observation.FIELDS):
        field_of.extend([number] * field.size)
        local_of.extend(range(field.size))
    return field_of, local_of


_FIELD_OF, _LOCAL_OF = _locator()
_NUMBER = {field.name: number for number, field in enumerate(observation.FIELDS)}
_S, _T = observation.S, observation.T


def _stays(hand: tuple[int, ...]) -> list[tuple[str, list[str]]]:
    """For every subset ``m`` of the hand (bit ``i``: its ``i``-th lowest card), the text of the stay that discards
    it and the cards it discards, each list built from a smaller subset's: one list and one string a subset, not a
    pass over the hand."""
    names: list[list[str]] = [[]]
    joined: list[str] = [""]
    stays = [("play, stand pat", names[0])]
    for m in range(1, 1 << len(hand)):
        low = (m & -m).bit_length() - 1
        rest = m & (m - 1)
        card = _CARD[hand[low]]
        discard = [card, *names[rest]]
        text = f"{card} {joined[rest]}" if rest else card
        names.append(discard)
        joined.append(text)
        stays.append((f"play, discard {len(discard)}: {text}", discard))
    return stays


def _legal(actions: tuple[int, ...], hand: tuple[int, ...], phase: int) -> list[dict[str, Any]]:
    out = []
    draw = phase in core.DRAW_PHASES
    stays: list[tuple[str, list[str]]] | None = None
    for a in actions:
        if draw and a >= core.STAY_BASE:
            # the action table's stay (bourre_env.actions): bit i of a - STAY_BASE discards the i-th lowest card; its
            # text is describe's, written here from the discards (describe parses and sorts the hand again for each
            # of a draw's up to 32 stays: most of a draw turn's cost; the oracle test holds the two equal)
            if stays is None:
                stays = _stays(hand)
            text, discard = stays[(a - core.STAY_BASE) & ((1 << len(hand)) - 1)]  # bits past the hand discard nothing
            out.append({"action": a, "text": text, "discard": discard})
            continue
        entry: dict[str, Any] = {"action": a, "text": describe(a, hand, phase)}
        if a < core.NUM_CARDS:
            entry["card"] = _CARD[a]
        out.append(entry)
    return out


def legal_entries(actions: tuple[int, ...], hand: tuple[int, ...], phase: int) -> list[dict[str, Any]]:
    """The ``legal`` entries of a turn: each action's id, its ``describe`` text, the card it plays or the cards it
    discards."""
    return _legal(actions, hand, phase)


def view_of(obs: np.ndarray, mask: np.ndarray, players: int, hand_size: int, seat: int) -> dict[str, Any]:
    """The view of ``seat`` (``train.serve.tables.seat_view``'s dict, ``legal`` included) from its observation
    vector and legal mask."""
    ones: dict[int, list[int]] = {}  # field number -> flat indices of its non-zero entries, in order
    for i in obs.nonzero()[0].tolist():  # np.flatnonzero's work on a vector, without its two Python layers
        ones.setdefault(_FIELD_OF[i], []).append(_LOCAL_OF[i])

    def first(name: str) -> int | None:
        found = ones.get(_NUMBER[name])
        return found[0] if found else None

    def per_seat(name: str, width: int) -> dict[int, int]:  # relative seat -> its first non-zero column
        out: dict[int, int] = {}
        for flat in ones.get(_NUMBER[name], ()):
            out.setdefault(flat // width, flat % width)
        return out

    n = players
    hand = tuple(ones.get(_NUMBER["hand"], ()))
    round_ = first("decision_round")
    in_play = 1 in ones.get(_NUMBER["phase"], ())
    phase = "trick play" if in_play else (observation.ROUND_NAMES[round_] if round_ is not None else "deal over")
    face, trump, led = first("face_card"), first("trump"), first("led_suit")
    dealer, to_act = first("dealer"), first("to_act")
    decision, discards = per_seat("decision", 3), per_seat("discard_count", _T + 1)
    tricks_won, stayed = per_seat("tricks_won", _T + 1), set(ones.get(_NUMBER["stayed"], ()))
    seats = []
    for q in range(n):
        rel = (q - seat) % n
        seats.append(
            {
                "seat": q,
                "decision": _DECISION_NAMES[decision.get(rel, 0)],
                "discards": discards.get(rel),
                "tricks": tricks_won.get(rel, 0),
                "stayed": rel in stayed,
            }
        )
    return {
        "seat": seat,
        "players": n,
        "hand_size": hand_size,
        "phase": phase,
        "hand": [_CARD[c] for c in hand],
        "trump": None if trump is None else cards.SUIT_NAMES[trump],
        "turned": None if face is None else {"card": _CARD[face], "status": _FACE_NAMES[first("face_status") or 0]},
        "dealer": None if dealer is None else (dealer + seat) % n,
        "to_act": None if to_act is None else (to_act + seat) % n,
        "pot": int(round(float(obs[observation.O_POT]) * 100)),
        "seats": seats,
        "tricks": _tricks(ones, seat, n, hand_size, seats),
        "led": None if led is None else cards.SUIT_NAMES[led],
        "own_discards": [_CARD[c] for c in ones.get(_NUMBER["own_discards"], ())],
        "cinch": bool(ones.get(_NUMBER["cinch"])),
        # a decision round's slot in the observation is the code of its phase
        "legal": legal_entries(tuple(mask.nonzero()[0].tolist()), hand, round_ if round_ is not None else core.PLAY),
    }


def _tricks(
    ones: dict[int, list[int]], seat: int, n: int, hand_size: int, seats: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The tricks led so far, as ``seat_view`` writes them: who led, who played what in order, who won each."""
    leaders: dict[int, int] = {}
    for flat in ones.get(_NUMBER["trick_leader"], ()):
        leaders.setdefault(flat // _S, flat % _S)
    played_by: dict[int, int] = {}
    for flat in ones.get(_NUMBER["played_by"], ()):
        played_by.setdefault(flat // _S, flat % _S)
    played_in: dict[int, list[int]] = {}  # trick -> its cards, by card id
    for flat in ones.get(_NUMBER["played_in"], ()):
        played_in.setdefault(flat % _T, []).append(flat // _T)
    plays = {t: [(c, played_by.get(c, 0)) for c in cards_of] for t, cards_of in played_in.items()}
    return trick_list(leaders, plays, seat, n, hand_size, seats)
