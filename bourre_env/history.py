"""Hand histories: a versioned JSON record of an episode that replays into the env exactly.

The format is documented in ``docs/hand_history.md`` and described by the JSON Schema
``bourre_env/hand_history.schema.json`` (``SCHEMA_PATH``). In short, a history holds the rules (a
preset and the options changed from it), the seats and who sat in each, and one entry per deal:
the dealer, the chips in the pot before the antes, the deck in dealing order, the seed of the stock
reshuffle, every action with its seat, phase and description, and the results.

Writing: wrap the env in ``Recording`` and play as usual; ``Recording.history()`` is the record of
the deals finished so far in the current episode::

    env = history.Recording(bourre_env.env(num_players=4), seats=["human", "heuristic", "ppo", "random"])
    env.reset(seed=7)
    ...                                    # play the episode
    history.write(env.history(), "deal.json")

Reading and replaying: ``read`` checks a file (or a parsed dict), and ``loads`` JSON text or bytes, against
the format and the rules it names, without any third-party package, and raises ``HistoryError`` naming the first bad
entry (``deals[0].actions[7].action``). ``Replay`` steps a history through a fresh env whose decks
and reshuffle seeds are pinned to the recorded ones, so that every observation, mask and reward is
the one of the game that was played; it checks each action against the rules as it goes, and each
deal's results once it is settled::

    replay = history.Replay(history.read("deal.json"))
    for step in replay:                    # before each action
        obs = step.env.observe(step.env.agent_selection)
    replay.env                             # the env after the last action
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import BaseWrapper

from bourre_env import atomic_files, core, limits, observation
from bourre_env.actions import describe
from bourre_env.bourre_v0 import raw_env
from bourre_env.card_masks import cards_of
from bourre_env.core import cards
from bourre_env.core.rules import Rules, presets
from bourre_env.json_input import NotTextError, strict_json
from bourre_env.words import plural

__all__ = [
    "FORMAT",
    "VERSION",
    "SCHEMA_PATH",
    "PHASES",
    "HistoryError",
    "Recording",
    "Replay",
    "ReplayStep",
    "read",
    "loads",
    "strict_json",
    "NotTextError",
    "write",
    "dumps",
    "rules_of",
    "check",
    "dealing_order",
    "rules_record",
]

FORMAT = "bourre-hand-history"
VERSION = 1
SCHEMA_PATH = Path(__file__).resolve().parent / "hand_history.schema.json"
PHASES = (*observation.ROUND_NAMES, "trick play")
"""The ``phase`` of an action: the decision rounds of the env's Phases table, then trick play."""
DECISIONS = ("played", "passed")
OUTCOMES = ("won", "tied", "bourre", "reneged")
_OUTCOME_BITS = (core.OUTCOME_WON, core.OUTCOME_TIED, core.OUTCOME_BOURRE, core.OUTCOME_RENEGED)
SEED_LIMIT = 2**63
_DIGITS = re.compile(r"0|[1-9][0-9]{0,18}")


class HistoryError(ValueError):
    """A malformed history, or one that does not match its own rules; ``path`` names the first bad entry."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}" if path else problem)
        self.path = path
        self.problem = problem


# ---------------------------------------------------------------------------- rules as JSON
def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Fraction):
        return f"{value.numerator}/{value.denominator}"  # exact, where a float would round
    if isinstance(value, np.integer):
        return int(value)
    return value


def _from_json(name: str, value: Any) -> Any:
    if name == "rake" and isinstance(value, str) and re.fullmatch(r"\d+/[1-9]\d*", value):
        return Fraction(value)
    return value


def _preset_of(rules: Rules) -> str:
    """The preset that the fewest option changes turn into ``rules`` (the first such in preset order)."""
    return min(presets, key=lambda name: len(rules.changes_from(presets[name])))


def rules_record(rules: Rules, preset: str | None = None) -> dict[str, Any]:
    """The ``rules`` entry of a history: the preset, the options changed from it, and every field."""
    name = preset if preset is not None else _preset_of(rules)
    if name not in presets:
        raise ValueError(f"preset: expected one of {sorted(presets)}, got {name!r}")
    return {
        "preset": name,
        "options": {k: _jsonable(v) for k, v in rules.changes_from(presets[name]).items()},
        "fields": {k: _jsonable(v) for k, v in rules.as_dict().items()},
    }


def _rules_text(rules: Rules, preset: str | None) -> str:
    """``rules_record`` as JSON text: built once per rules by the writers, read back (a fresh copy) per history."""
    return json.dumps(rules_record(rules, preset))


# ---------------------------------------------------------------------------- recording
_CARD_NAMES = {c: cards.to_str(c) for c in range(cards.NUM_CARDS)}


def _card_names(ids: Sequence[int]) -> list[str]:
    """``cards.to_str`` of each card id, looked up: the ids come from the state or from a deck the env took (an
    integer past the cards still gets ``to_str``'s error)."""
    return [_CARD_NAMES.get(c) or cards.to_str(c) for c in ids]


def _phase_name(s: np.ndarray, p: np.ndarray) -> str:
    round_ = int(observation.decision_round(s, p))
    return PHASES[round_] if round_ >= 0 else PHASES[-1]


def dealing_order(s: np.ndarray, rules: Rules) -> list[int]:
    """A deck that deals exactly the hands, turned card and stock of the deal that ``s`` has just started.

    The order of the cards within a hand does not matter to the game, so each hand is dealt in ascending id
    order, but for the dealer's card turned for trump, which must come last (the rules' ``trump_card="dealer"``)."""
    n, h = rules.num_players, rules.hand_size
    dealer, face = int(s[core.S_DEALER]), int(s[core.S_FACE])
    hands = {q: cards_of(mask) for q, mask in enumerate(s[core.S_HAND : core.S_HAND + n].tolist())}
    if rules.trump_card == "separate_dealer_may_take":
        hands[dealer].remove(face)  # the dealer holds it while deciding, but it was turned after the hands
    elif rules.trump_card == "dealer":
        hands[dealer].remove(face)
        hands[dealer].append(face)
    order = [hands[(dealer + k) % n][r] for r in range(h) for k in range(1, n + 1)]
    if rules.trump_card in ("separate", "separate_dealer_may_take"):
        order.append(face)
    order += s[core.S_STOCK + int(s[core.S_STOCK_POS]) : core.S_STOCK + int(s[core.S_STOCK_LEN])].tolist()
    return order


def _deal_opening(s: np.ndarray, rules: Rules, deck: list[int]) -> dict[str, Any]:
    n = rules.num_players
    antes = -sum(s[core.S_REWARD : core.S_REWARD + n].tolist())  # a new deal's rewards are minus the antes paid
    return {
        "deal": int(s[core.S_DEAL_NO]),
        "dealer": int(s[core.S_DEALER]),
        "pot_before": int(s[core.S_POT]) - antes,
        "deck": _card_names(deck),
        "reshuffle_seed": str(int(s[core.S_RNG])),
        "actions": [],
    }


def _results(s: np.ndarray, rules: Rules, laid_down: Mapping[int, list[int]], rake_before: int) -> dict[str, Any]:
    """A settled deal's results, read off the state."""
    n = rules.num_players
    # each field read off the state in one slice, as Python integers
    playing = [d == core.PLAYING for d in s[core.S_DECISION : core.S_DECISION + n].tolist()]
    held_masks = s[core.S_HAND : core.S_HAND + n].tolist()
    played = s[core.S_TRICK_CARDS : core.S_TRICK_CARDS + core.MAX_HAND_SIZE * core.MAX_PLAYERS].tolist()
    hands = []
    for q in range(n):
        if playing[q]:
            held = sorted([c for c in played[q :: core.MAX_PLAYERS] if c >= 0] + cards_of(held_masks[q]))
        else:
            held = sorted(laid_down.get(q, []))
        hands.append(_card_names(held))
    return {
        "decisions": [DECISIONS[0] if playing[q] else DECISIONS[1] for q in range(n)],
        "tricks": s[core.S_TRICKS : core.S_TRICKS + n].tolist(),
        "payments": s[core.S_REWARD : core.S_REWARD + n].tolist(),
        "outcomes": [
            [name for name, bit in zip(OUTCOMES, _OUTCOME_BITS, strict=True) if bits & bit]
            for bits in s[core.S_OUTCOME : core.S_OUTCOME + n].tolist()
        ],
        "hands": hands,
        "pot": int(s[core.S_POT]),
        "rake": int(s[core.S_RAKE_TOTAL]) - rake_before,
    }


def _public(action: int, phase: int, seat: int, after: np.ndarray, description: str) -> str:
    """What the other players learn of an action: all of it, but for which cards a draw discards."""
    if phase in core.DRAW_PHASES and action >= core.STAY_BASE:
        count = int(after[core.S_NDISCARD + seat])  # the announced count (a turned card left is no card of the hand)
        return "play, stand pat" if count == 0 else f"play, discard {count}"
    return description


class Recording(BaseWrapper):  # type: ignore[misc]  # untyped base: PettingZoo has no py.typed
    """An AEC env wrapper that records each deal as it is played (see the module docstring).

    ``seats``: who sits in each seat (an ``agents.make`` spec, ``"human"``, or ``None`` for unknown);
    ``preset``: the preset to write the rules against (default: the nearest one)."""

    def __init__(self, env: AECEnv, seats: Sequence[str | None] | None = None, preset: str | None = None) -> None:
        super().__init__(env)
        self.seats = list(seats) if seats is not None else None
        self.preset = preset
        self._episode: dict[str, Any] | None = None
        self._deal: dict[str, Any] | None = None
        self._rules_entry: tuple[Rules, str | None, str] | None = None  # the rules, preset and _rules_text last built

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.env.reset(seed=seed, options=options)
        raw = self.env.unwrapped
        self._rules: Rules = raw.rules
        self._params = raw.rules.params()
        given = (options or {}).get("deck")
        if isinstance(given, str):
            given = given.replace(",", " ").split()
        deck = [cards.to_id(c) for c in given] if given is not None else dealing_order(raw.state_vector, self._rules)
        self._episode = {"seed": None if seed is None else str(int(seed)), "deals": []}
        self._open_deal(deck)

    def _open_deal(self, deck: list[int]) -> None:
        s = self.env.unwrapped.state_vector
        self._deal = _deal_opening(s, self._rules, deck)
        self._laid_down: dict[int, list[int]] = {}
        self._rake_before = int(s[core.S_RAKE_TOTAL])

    def step(self, action: Any) -> None:
        raw = self.env.unwrapped
        s = raw.state_vector
        agent = raw.agent_selection if raw.agents else None
        if self._deal is None or agent is None or raw.terminations[agent] or raw.truncations[agent]:
            self.env.step(action)  # a dead agent's step, or no recording under way
            return
        before = s.copy()
        seat, phase = int(s[core.S_CUR]), int(s[core.S_PHASE])
        hand = cards_of(s[core.S_HAND + seat])
        self.env.step(action)  # an illegal action raises here, and nothing is recorded
        action = int(action)
        ended = s[core.S_DEALS_DONE] != before[core.S_DEALS_DONE]
        after = s
        if ended:
            # The env has already dealt the next deal (or ended the episode): settle a copy to read this deal.
            after = before.copy()
            core.step(after, self._params, action)
        if action == core.PASS:
            self._laid_down[seat] = hand
        description = describe(action, hand, phase)
        self._deal["actions"].append(
            {
                "seat": seat,
                "phase": _phase_name(before, self._params),
                "action": action,
                "description": description,
                "public": _public(action, phase, seat, after, description),
            }
        )
        if ended:
            self._deal["results"] = _results(after, self._rules, self._laid_down, self._rake_before)
            assert self._episode is not None
            self._episode["deals"].append(self._deal)
            self._deal = None
            if s[core.S_PHASE] not in (core.DEAL_OVER, core.GAME_OVER):  # the episode goes on: a new deal
                self._open_deal(dealing_order(s, self._rules))

    def _rules_json(self) -> str:
        # built again only for other rules (another env's, by identity: equal Rules may write different records, a
        # float rake and its Fraction) or another preset
        entry = self._rules_entry
        if entry is None or entry[0] is not self._rules or entry[1] != self.preset:
            entry = self._rules_entry = (self._rules, self.preset, _rules_text(self._rules, self.preset))
        return entry[2]

    def current_actions(self) -> list[dict[str, Any]]:
        """The recorded actions of the deal under way (empty between deals)."""
        return [dict(a) for a in self._deal["actions"]] if self._deal is not None else []

    def history(self, seats: Sequence[str | None] | None = None) -> dict[str, Any]:
        """The history of the current episode's finished deals (``ValueError`` if none is finished yet)."""
        if self._episode is None or not self._episode["deals"]:
            raise ValueError("no finished deal to write: play a deal to its end first")
        who = list(seats) if seats is not None else self.seats
        n = self._rules.num_players
        if who is None:
            who = [None] * n
        if len(who) != n:
            raise ValueError(f"seats: one entry per seat ({n}), got {len(who)}")
        return {
            "format": FORMAT,
            "version": VERSION,
            "rules": json.loads(self._rules_json()),
            "seats": [{"seat": q, "agent": who[q]} for q in range(n)],
            "seed": self._episode["seed"],
            "deals": json.loads(json.dumps(self._episode["deals"])),
        }  # a copy that later play cannot change


# ---------------------------------------------------------------------------- writing and reading
def _scalar(value: Any) -> bool:
    return not isinstance(value, (dict, list))


def _one_line(value: Any) -> bool:
    """Objects of scalars (an action), and lists of scalars or of lists of scalars (a deck, the hands)."""
    if isinstance(value, dict):
        return all(_scalar(v) for v in value.values())
    if isinstance(value, list):
        return all(_scalar(v) or (isinstance(v, list) and all(_scalar(x) for x in v)) for v in value)
    return True


def dumps(history: Mapping[str, Any]) -> str:
    """JSON text of a history: nested entries on their own lines, an action or a deck on one line."""

    def fmt(value: Any, indent: int) -> str:
        if _one_line(value):
            return json.dumps(value, ensure_ascii=False)
        pad = " " * (indent + 2)
        if isinstance(value, dict):
            items = [f"{pad}{json.dumps(k)}: {fmt(v, indent + 2)}" for k, v in value.items()]
            return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
        return "[\n" + ",\n".join(pad + fmt(v, indent + 2) for v in value) + "\n" + " " * indent + "]"

    return fmt(dict(history), 0) + "\n"


def write(history: Mapping[str, Any], path: str | Path) -> Path:
    """Write a history to ``path`` (folders created as needed), whole or not at all; returns the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    return atomic_files.write_text(target, dumps(history))


def read(source: str | os.PathLike[str] | Mapping[str, Any]) -> dict[str, Any]:
    """A history from a file path, or a parsed dict, checked with ``check``; JSON text or bytes go to ``loads``."""
    if isinstance(source, Mapping):
        check(source)
        return dict(source)
    if isinstance(source, (bytes, bytearray)):
        raise TypeError("history.read takes a file path; for JSON bytes or text use history.loads")
    path = Path(source)
    try:
        data = path.read_bytes()
    except OSError as err:
        if isinstance(source, str) and source.lstrip()[:1] in ("{", "["):
            # text that was meant as a history, not a file name
            raise HistoryError(
                "", "history.read takes a file path, and this looks like JSON text: use history.loads(text)"
            ) from None
        raise HistoryError("", f"cannot read the history file: {err}") from None
    return loads(data)


def loads(text: str | bytes) -> dict[str, Any]:
    """A history from JSON text or bytes (UTF-8), checked with ``check``; an object with a key twice is refused."""
    if not isinstance(text, (str, bytes, bytearray)):
        raise TypeError(f"history.loads takes JSON text or bytes, got {type(text).__name__}")
    try:
        data = strict_json(text, text_only=False)  # ``check`` names the entry that is not text
    except (ValueError, RecursionError) as err:
        # ValueError: not JSON, not UTF-8, or an integer past Python's digit limit; RecursionError: nested too deep
        problem = "nested too deep" if isinstance(err, RecursionError) else str(err)
        raise HistoryError("", f"not JSON: {problem}") from None
    check(data)
    return dict(data)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _need(ok: bool, path: str, problem: str) -> None:
    if not ok:
        raise HistoryError(path, problem)


def _object(value: Any, path: str, keys: Sequence[str]) -> None:
    """``value`` is an object with exactly ``keys``; names the first missing or unknown one."""
    _need(isinstance(value, dict), path or "history", f"expected a JSON object, got {type(value).__name__}")
    for key in keys:
        _need(key in value, f"{path}.{key}" if path else key, "missing")
    for key in value:
        shown = key.encode("utf-8", "backslashreplace").decode()  # a lone surrogate as its escape: an error is text
        _need(key in keys, f"{path}.{shown}" if path else shown, "unknown entry")


def _int_in(value: Any, path: str, lo: int, hi: int | None = None) -> None:
    _need(
        _is_int(value) and value >= lo and (hi is None or value <= hi),
        path,
        f"expected an integer {'>= ' + str(lo) if hi is None else f'in {lo}..{hi}'}, got {value!r}",
    )


def _text(value: Any, path: str) -> None:
    """A string that UTF-8 can write (JSON allows lone surrogates such as ``"\\udcff"``; UTF-8 does not)."""
    _need(isinstance(value, str), path, f"expected a string, got {value!r}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise HistoryError(path, f"not valid Unicode text (a lone surrogate): {value!r}") from None


def _seed(value: Any, path: str) -> None:
    _need(
        isinstance(value, str) and _DIGITS.fullmatch(value) is not None and int(value) < SEED_LIMIT,
        path,
        f"expected a seed as a string of decimal digits below 2**63, got {value!r}",
    )


def rules_of(history: Mapping[str, Any]) -> Rules:
    """The ``Rules`` a history names (its preset and options), checked against its ``fields``."""
    entry = history.get("rules") if isinstance(history, Mapping) else None
    _object(entry, "rules", ("preset", "options", "fields"))
    assert isinstance(entry, dict)
    _need(entry["preset"] in presets, "rules.preset", f"expected one of {sorted(presets)}, got {entry['preset']!r}")
    options = entry["options"]
    _need(isinstance(options, dict), "rules.options", "expected a JSON object of rule options")
    try:
        rules = Rules.from_options(entry["preset"], **{k: _from_json(k, v) for k, v in options.items()})
    except (TypeError, ValueError) as err:
        raise HistoryError("rules.options", str(err)) from None
    fields = entry["fields"]
    _need(isinstance(fields, dict), "rules.fields", "expected a JSON object of every rule field")
    expected = {k: _jsonable(v) for k, v in rules.as_dict().items()}
    for key in expected:
        _need(key in fields, f"rules.fields.{key}", "missing")
        _need(
            fields[key] == expected[key],
            f"rules.fields.{key}",
            f"{fields[key]!r}, but preset {entry['preset']!r} with these options gives {expected[key]!r}",
        )
    for key in fields:
        _need(key in expected, f"rules.fields.{key}", "not a rule field")
    return rules


def check(data: Any) -> None:
    """Check the structure of a parsed history and its agreement with its rules, as far as that needs no play
    (``Replay`` checks the rest); ``HistoryError`` names the first bad entry."""
    _object(data, "", ("format", "version", "rules", "seats", "seed", "deals"))
    _need(data["format"] == FORMAT, "format", f"expected {FORMAT!r}, got {data['format']!r}")
    _need(_is_int(data["version"]), "version", f"expected an integer, got {data['version']!r}")
    _need(
        data["version"] <= VERSION,
        "version",
        f"{data['version']} is newer than this reader (version {VERSION}); upgrade bourre-rl",
    )
    _need(data["version"] >= 1, "version", f"expected 1 or more, got {data['version']!r}")
    rules = rules_of(data)
    n = rules.num_players
    seats = data["seats"]
    _need(isinstance(seats, list) and len(seats) == n, "seats", f"expected a list of {n} seats (num_players)")
    for q, seat in enumerate(seats):
        _object(seat, f"seats[{q}]", ("seat", "agent"))
        _need(seat["seat"] == q and _is_int(seat["seat"]), f"seats[{q}].seat", f"expected {q}, got {seat['seat']!r}")
        _need(
            seat["agent"] is None or isinstance(seat["agent"], str),
            f"seats[{q}].agent",
            f"expected a string or null, got {seat['agent']!r}",
        )
        if seat["agent"] is not None:
            _text(seat["agent"], f"seats[{q}].agent")
    if data["seed"] is not None:
        _seed(data["seed"], "seed")
    deals = data["deals"]
    _need(isinstance(deals, list) and len(deals) > 0, "deals", "expected a non-empty list of deals")
    _need(
        len(deals) <= rules.deals_per_episode,
        f"deals[{min(len(deals), rules.deals_per_episode)}]",
        f"an episode of these rules has {plural(rules.deals_per_episode, 'deal')}",
    )
    deck_cards = sorted(rules.deck_cards())
    for k, deal in enumerate(deals):
        at = f"deals[{k}]"
        _object(deal, at, ("deal", "dealer", "pot_before", "deck", "reshuffle_seed", "actions", "results"))
        _need(_is_int(deal["deal"]) and deal["deal"] == k, f"{at}.deal", f"expected {k}, got {deal['deal']!r}")
        _int_in(deal["dealer"], f"{at}.dealer", 0, n - 1)
        _int_in(deal["pot_before"], f"{at}.pot_before", 0, limits.POT_BOUND)  # the env deals no larger pot
        deck = deal["deck"]
        _need(
            isinstance(deck, list) and len(deck) == rules.deck_size,
            f"{at}.deck",
            f"expected a list of the {rules.deck_size} cards of the deck",
        )
        ids = []
        for i, c in enumerate(deck):
            try:
                _need(isinstance(c, str), f"{at}.deck[{i}]", f"expected a card string such as '10H', got {c!r}")
                ids.append(cards.parse_card(c))
            except ValueError as err:
                raise HistoryError(f"{at}.deck[{i}]", str(err)) from None
            _need(ids[-1] in deck_cards, f"{at}.deck[{i}]", f"{c} is not in this deck (ranks {rules.ranks})")
            _need(ids[-1] not in ids[:-1], f"{at}.deck[{i}]", f"{c} is repeated")
        _seed(deal["reshuffle_seed"], f"{at}.reshuffle_seed")
        acts = deal["actions"]
        _need(isinstance(acts, list) and len(acts) > 0, f"{at}.actions", "expected a non-empty list of actions")
        for i, act in enumerate(acts):
            where = f"{at}.actions[{i}]"
            _object(act, where, ("seat", "phase", "action", "description", "public"))
            _int_in(act["seat"], f"{where}.seat", 0, n - 1)
            _need(act["phase"] in PHASES, f"{where}.phase", f"expected one of {list(PHASES)}, got {act['phase']!r}")
            _int_in(act["action"], f"{where}.action", 0, core.NUM_ACTIONS - 1)
            for key in ("description", "public"):
                _text(act[key], f"{where}.{key}")
        _check_results(deal["results"], f"{at}.results", n)


def _check_results(res: Any, at: str, n: int) -> None:
    _object(res, at, ("decisions", "tricks", "payments", "outcomes", "hands", "pot", "rake"))
    for key in ("decisions", "tricks", "payments", "outcomes", "hands"):
        _need(isinstance(res[key], list) and len(res[key]) == n, f"{at}.{key}", f"expected a list of {n} entries")
    for q in range(n):
        _need(res["decisions"][q] in DECISIONS, f"{at}.decisions[{q}]", f"expected one of {list(DECISIONS)}")
        _int_in(res["tricks"][q], f"{at}.tricks[{q}]", 0, core.MAX_HAND_SIZE)
        _need(_is_int(res["payments"][q]), f"{at}.payments[{q}]", f"expected an integer, got {res['payments'][q]!r}")
        _need(
            isinstance(res["outcomes"][q], list) and all(o in OUTCOMES for o in res["outcomes"][q]),
            f"{at}.outcomes[{q}]",
            f"expected a list of {list(OUTCOMES)}",
        )
        _need(isinstance(res["hands"][q], list), f"{at}.hands[{q}]", "expected a list of card strings")
        for i, c in enumerate(res["hands"][q]):
            _text(c, f"{at}.hands[{q}][{i}]")
    _int_in(res["pot"], f"{at}.pot", 0)
    _int_in(res["rake"], f"{at}.rake", 0)


# ---------------------------------------------------------------------------- replay
def _compare_results(recorded: Mapping[str, Any], replayed: Mapping[str, Any], at: str) -> None:
    for key, value in replayed.items():
        if isinstance(value, list):
            for q, v in enumerate(value):
                _need(recorded[key][q] == v, f"{at}.{key}[{q}]", f"{recorded[key][q]!r}, but the deal gives {v!r}")
        else:
            _need(recorded[key] == value, f"{at}.{key}", f"{recorded[key]!r}, but the deal gives {value!r}")


class _PinnedEnv(raw_env):
    """The env with the decks and reshuffle seeds of later deals taken from a history instead of its generator;
    once the history's deals are used up it draws them as usual."""

    def __init__(self, rules: Rules) -> None:
        super().__init__(rules=rules)
        self.pin([], [])

    def pin(self, decks: list[list[str]], seeds: list[int]) -> None:
        """The decks of the next deals after the first (its deck is a reset option) and the reshuffle seeds."""
        self._decks = list(decks)
        self._seeds = list(seeds)

    def _deck(self, given: Any) -> np.ndarray:
        if given is None and self._decks:
            given = self._decks.pop(0)
        return super()._deck(given)

    def _reshuffle_seed(self) -> int:
        return self._seeds.pop(0) if self._seeds else super()._reshuffle_seed()


@dataclasses.dataclass(frozen=True)
class ReplayStep:
    """One recorded action, about to be replayed: ``env`` is positioned before it."""

    index: int  # over the whole history
    deal: int
    entry: int  # index in the deal's ``actions``
    seat: int
    action: int
    record: Mapping[str, Any]  # the history's entry
    env: raw_env


class Replay:
    """Replays a checked history (``read``) through a fresh env: iterate for each action, then ``env`` is final.

    Iterating raises ``HistoryError`` at the first recorded entry that the rules contradict: an action by the wrong
    seat, in another phase, illegal, or described otherwise; a dealer or pot that the previous deal rules out; a deal
    that is not over after its actions; or results other than the replayed ones."""

    def __init__(self, history: Mapping[str, Any]) -> None:
        check(history)
        self.history = history
        self.rules = rules_of(history)
        self.env = _PinnedEnv(self.rules)

    def __iter__(self) -> Iterator[ReplayStep]:
        env, rules = self.env, self.rules
        deals = self.history["deals"]
        first = deals[0]
        env.pin([d["deck"] for d in deals[1:]], [int(d["reshuffle_seed"]) for d in deals])
        env.reset(options={"deck": first["deck"], "dealer": first["dealer"], "pot": first["pot_before"]})
        s, p = env.state_vector, env.rules.params()
        index = 0
        for k, deal in enumerate(deals):
            at = f"deals[{k}]"
            _need(s[core.S_PHASE] not in (core.DEAL_OVER, core.GAME_OVER), at, f"the episode ended after deal {k - 1}")
            opening = _deal_opening(s, rules, [])
            for key in ("dealer", "pot_before"):
                _need(
                    opening[key] == deal[key],
                    f"{at}.{key}",
                    f"{deal[key]}, but the previous deal leaves {opening[key]}",
                )
            laid_down: dict[int, list[int]] = {}
            rake_before = int(s[core.S_RAKE_TOTAL])
            settled: np.ndarray | None = None
            for i, act in enumerate(deal["actions"]):
                where = f"{at}.actions[{i}]"
                _need(settled is None, where, f"the deal is over after {i} actions")
                seat, phase = int(s[core.S_CUR]), int(s[core.S_PHASE])
                _need(act["seat"] == seat, f"{where}.seat", f"{act['seat']}, but player_{seat} is to act")
                name = _phase_name(s, p)
                _need(act["phase"] == name, f"{where}.phase", f"{act['phase']!r}, but the phase is {name!r}")
                hand = cards_of(s[core.S_HAND + seat])
                action = int(act["action"])
                trial = s.copy()
                if not core.step(trial, p, action):
                    legal = ", ".join(f"{a} ({describe(a, hand, phase)})" for a in env.legal_actions())
                    raise HistoryError(f"{where}.action", f"{action} is illegal for player_{seat}; legal: {legal}")
                description = describe(action, hand, phase)
                _need(
                    act["description"] == description,
                    f"{where}.description",
                    f"{act['description']!r}, but action {action} is {description!r}",
                )
                public = _public(action, phase, seat, trial, description)
                _need(act["public"] == public, f"{where}.public", f"{act['public']!r}, but the table sees {public!r}")
                if action == core.PASS:
                    laid_down[seat] = hand
                yield ReplayStep(index, k, i, seat, action, act, env)
                env.step(action)
                index += 1
                if trial[core.S_PHASE] in (core.DEAL_OVER, core.GAME_OVER):
                    settled = trial
            if settled is None:
                raise HistoryError(
                    f"{at}.actions",
                    f"the deal is not over after its {len(deal['actions'])} actions: "
                    f"player_{int(s[core.S_CUR])} is to act",
                )
            _compare_results(deal["results"], _results(settled, rules, laid_down, rake_before), f"{at}.results")

    def run(self) -> raw_env:
        """Replay every action (checking them all); the env after the last one."""
        for _ in self:
            pass
        return self.env
