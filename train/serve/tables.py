"""The game side of ``bourre serve``: tables that keep their game on the server, and the views a client gets.

Nothing here knows HTTP. A ``Table`` holds one seat for a person and an agent in every other seat; it
plays the agents' moves itself and stops whenever the person is to act or the deal is over. What a
client sees of a table is ``seat_view``: the person's own observation (``bourre_env.observation``)
decoded into named entries, the public log of the deal, the running chip totals and, once the deal
is settled, its results and hand history. Nothing else of the game state reaches a view, so a view
never holds a card its seat cannot see.
"""

from __future__ import annotations

import functools
import logging
import math
import secrets
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

import agents
import bourre_env
from bourre_env import core, history, observation
from bourre_env.actions import as_action_id, describe, discard_cards
from bourre_env.core import cards
from bourre_env.core.rules import MAX_PLAYERS, MIN_PLAYERS, Rules, presets
from bourre_env.view import StateView
from bourre_env.words import plural
from train.table import Deal, PausedGame
from train.table import game as table_game
from train.web.agent_specs import HUMAN, check_agent
from train.web.agent_specs import agent_options as agent_options  # both servers' rule, named here too (the tests')
from train.web.agent_specs import check_offered as check_offered
from train.web.errors import TableError
from train.web.trick_list import trick_list

MAX_TABLES = 32
"""Live tables at most; a request for one more is refused (429) until one closes or expires."""
MAX_TABLES_PER_CLIENT = 8
"""Live tables that one client (one IP address) may hold at most, so that one client cannot take every table."""
MOVE_MS = 1000
"""The time cap (milliseconds) of one search agent's move at a table set from the page (its ``ms`` option)."""
MOVE_SECONDS = 10.0
"""The clock of every agent at a table, in wall time: each call into it (built, reset before a deal, a move) that has
not returned by then is abandoned, and the heuristic plays that seat until the call has returned (``Table``)."""
STAND_IN = "heuristic"
"""The agent that plays a seat whose own agent missed the clock."""
IDLE_SECONDS = 30 * 60
"""A table untouched this long is closed."""
KEPT_HISTORIES = 100
"""Finished deals whose history a table keeps for download (the latest ones)."""
MAX_REPLAY_DEALS = 20
"""Deals of a history file that the replay view steps through at most."""

_BUILT = "being built"
_DECISION_NAMES = ("deciding", "passed", "playing")
_FACE_NAMES = ("in the dealer's hand", "out of play", "played")
_LOG = logging.getLogger(__name__)


class AgentError(TableError):
    """An agent at a table failed (it raised, or answered with no legal action): a 502 naming the agent and its seat.
    The table cannot go on (the agent's move is not played) and the server closes it."""

    def __init__(self, seat: int, spec: str, what: str) -> None:
        super().__init__(
            502, f"agent {spec!r} at seat {seat} (player_{seat}) failed: {what}; the table is closed, open a new one"
        )


# ---------------------------------------------------------------------------- views
def _ids(one_hot: np.ndarray) -> list[int]:
    return [int(i) for i in np.flatnonzero(one_hot)]


def _index(one_hot: np.ndarray) -> int | None:
    found = _ids(one_hot)
    return found[0] if found else None


def _strs(ids: Sequence[int]) -> list[str]:
    return [cards.to_str(c) for c in ids]


def seat_view(s: np.ndarray, p: np.ndarray, rules: Rules, seat: int, open_hands: bool = False) -> dict[str, Any]:
    """The table as ``seat`` sees it, from its observation only; ``open_hands`` adds every seat's hand (replays)."""
    obs = np.empty(observation.OBS_SIZE, dtype=np.float32)
    mask = np.empty(core.NUM_ACTIONS, dtype=np.int8)
    observation.observe_with(s, p, seat, obs, mask, core.new_scratch())  # a view: the state is only read
    d = observation.as_dict(obs)
    n = rules.num_players

    def absolute(rel: int | None) -> int | None:
        return None if rel is None else (rel + seat) % n

    hand = _ids(d["hand"])
    round_ = _index(d["decision_round"])
    in_play = bool(d["phase"][1])
    phase = "trick play" if in_play else (observation.ROUND_NAMES[round_] if round_ is not None else "deal over")
    face = _index(d["face_card"])
    seats = []
    for q in range(n):
        rel = (q - seat) % n
        seats.append(
            {
                "seat": q,
                "decision": _DECISION_NAMES[_index(d["decision"][rel]) or 0],
                "discards": _index(d["discard_count"][rel]),
                "tricks": _index(d["tricks_won"][rel]) or 0,
                "stayed": bool(d["stayed"][rel]),
            }
        )
    tricks = _tricks(d, seat, n, rules.hand_size, seats)
    view: dict[str, Any] = {
        "seat": seat,
        "players": n,
        "hand_size": rules.hand_size,
        "phase": phase,
        "hand": _strs(hand),
        "trump": None if _index(d["trump"]) is None else cards.SUIT_NAMES[_index(d["trump"]) or 0],
        "turned": None
        if face is None
        else {"card": cards.to_str(face), "status": _FACE_NAMES[_index(d["face_status"]) or 0]},
        "dealer": absolute(_index(d["dealer"])),
        "to_act": absolute(_index(d["to_act"])),
        "pot": int(round(float(d["pot"][0]) * 100)),
        "seats": seats,
        "tricks": tricks,
        "led": None if _index(d["led_suit"]) is None else cards.SUIT_NAMES[_index(d["led_suit"]) or 0],
        "own_discards": _strs(_ids(d["own_discards"])),
        "cinch": bool(d["cinch"][0]),
        # a decision round's slot in the observation is the code of its phase
        "legal": _legal(mask, hand, round_ if round_ is not None else core.PLAY),
    }
    if open_hands:
        state = StateView(s, n)
        view["hands"] = [_strs(state.hand(q)) for q in range(n)]
    return view


def _tricks(
    d: Mapping[str, np.ndarray], seat: int, n: int, hand_size: int, seats: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The tricks led so far: who led, who played what in order, and who won each finished one."""
    leaders = {t: leader for t in range(hand_size) if (leader := _index(d["trick_leader"][t])) is not None}
    plays = {
        t: [(int(c), (_index(d["played_by"][c]) or 0)) for c in np.flatnonzero(d["played_in"][:, t])]
        for t in range(hand_size)
    }
    return trick_list(leaders, plays, seat, n, hand_size, seats)


def _legal(mask: np.ndarray, hand: list[int], phase: int) -> list[dict[str, Any]]:
    legal = []
    for a in np.flatnonzero(mask).tolist():
        entry: dict[str, Any] = {"action": a, "text": describe(a, hand, phase)}
        if a < core.NUM_CARDS:
            entry["card"] = cards.to_str(a)
        if phase in core.DRAW_PHASES and a >= core.STAY_BASE:
            entry["discard"] = _strs(discard_cards(a, hand))
        legal.append(entry)
    return legal


def public_log(actions: Sequence[Mapping[str, Any]], viewer: int | None, secret_round: bool) -> list[dict[str, Any]]:
    """A deal's recorded actions as ``viewer`` knows them (``None``: everything, as after the deal): its own
    actions described in full, the others' as the table saw them; in a secret declaration round still under way
    (``secret_round``) the others' declarations are not known yet."""
    log = []
    for act in actions:
        mine = viewer is None or act["seat"] == viewer
        text = act["description"] if mine else act["public"]
        if secret_round and not mine and act["phase"] == "declaration":
            text = "declared (revealed when everyone has)"
        log.append({"seat": act["seat"], "phase": act["phase"], "text": text})
    return log


# ---------------------------------------------------------------------------- settings
def table_settings(body: Any, offered: Sequence[str] = ()) -> tuple[Rules, str, int, list[str]]:
    """(rules, preset, the person's seat, one spec per seat) from a new-table request body."""
    if not isinstance(body, dict):
        raise TableError(400, "expected a JSON object with preset, players and agents")
    unknown = sorted(set(body) - {"preset", "players", "seat", "agents"})
    if unknown:
        raise TableError(400, f"unknown field(s) {unknown}; expected preset, players, seat, agents")
    preset = body.get("preset", "standard")
    if not isinstance(preset, str) or preset not in presets:
        raise TableError(400, f"preset: expected one of {sorted(presets)}, got {preset!r}")
    players = body.get("players", 5)
    if isinstance(players, bool) or not isinstance(players, int) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise TableError(400, f"players: expected an integer in {MIN_PLAYERS}..{MAX_PLAYERS}, got {players!r}")
    try:
        rules = Rules.from_options(preset, num_players=players)
    except ValueError as err:
        raise TableError(400, f"{preset} with {players} players: {err}") from None
    seat = body.get("seat", 0)
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < players:
        raise TableError(400, f"seat: expected your seat, an integer in 0..{players - 1}, got {seat!r}")
    given = body.get("agents", "heuristic")
    if isinstance(given, str):
        given = [given] * (players - 1)
    if not isinstance(given, list) or len(given) != players - 1:
        raise TableError(
            400,
            f"agents: one spec for every other seat, or a list of {plural(players - 1, 'spec')} "
            f"(the other seats clockwise from player_0)",
        )
    others = iter([check_agent(spec, offered) for spec in given])
    return rules, preset, seat, [HUMAN if q == seat else next(others) for q in range(players)]


# ---------------------------------------------------------------------------- tables
class _Call:
    """One call into an agent, in a daemon thread of its own; ``done`` is set once it has returned or raised. A call
    that is not waited for is abandoned, never joined: a daemon thread keeps neither the table's thread nor the
    process (Ctrl-C) waiting for it."""

    def __init__(self, call: Callable[[], Any], name: str, doing: str) -> None:
        self.doing = doing
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None
        threading.Thread(target=self._run, args=(call,), name=name, daemon=True).start()

    def _run(self, call: Callable[[], Any]) -> None:
        try:
            self.result = call()
        except BaseException as err:  # whatever the agent raises is reported, not lost in its thread
            self.error = err
        finally:
            self.done.set()


class Table:
    """One person and agents at a table, deal after deal. Each deal is an episode of one deal: the pot carries
    to the next deal (the ``pot`` reset option) and the deal passes left; every player antes every deal. A deal is
    the table's loop held between requests (``train.table.PausedGame``): the agents' seats are answered here, the
    person's by ``act``.

    Every call into an agent (building it, its ``reset`` before a deal, its moves) runs in a daemon thread on the
    agents' clock, ``move_seconds`` of wall time. The heuristic (``STAND_IN``) plays a seat whose agent missed it,
    which the view's ``notices`` say, until the late call has returned: the agent is never called twice at once,
    plays again from its next move, and only in deals it was reset for (an agent built late, from the next deal).
    An agent that raises or answers with no legal action fails the table: ``AgentError`` (502) names it and its
    seat."""

    def __init__(
        self,
        rules: Rules,
        preset: str,
        seat: int,
        specs: list[str],
        rng: np.random.Generator,
        move_ms: float | None = None,
        trusted: Sequence[str] = (),
        move_seconds: float | None = MOVE_SECONDS,
    ) -> None:
        """``move_ms``: the time cap of a search agent's move (its ``ms`` option), but for the ``trusted`` specs;
        ``move_seconds``: the agents' clock (``None``: none, for the warm-up before the server listens)."""
        self.id = secrets.token_urlsafe(16)  # 128 random bits: a table's id is what lets a client use it
        self.rules, self.preset, self.seat, self.specs = rules, preset, seat, specs
        self.params = rules.params()
        self.rng = rng
        self.move_ms, self.trusted, self.move_seconds = move_ms, trusted, move_seconds
        self.notices: list[str] = []
        self.late: dict[int, _Call] = {}  # seat -> its agent's call that missed the clock, until seen returned
        self.reset_for: dict[int, int] = {}  # seat -> the deal its agent was reset for
        self.stand_ins: dict[int, agents.Agent] = {}  # seat -> the heuristic that has played for its agent
        self.deal = 0
        self.turn = 0  # actions taken in the current deal: a client names the turn it answers
        self.env = history.Recording(bourre_env.raw_env(rules=rules), seats=specs, preset=preset)
        self.bots: dict[int, agents.Agent] = {}
        for q, spec in enumerate(specs):
            if q != seat:
                finished, bot = self._call(q, functools.partial(agents.make, spec, int(rng.integers(2**31))), _BUILT)
                if finished:
                    self._take_up(q, bot)
        self.totals = [0] * rules.num_players
        self.histories: dict[int, dict[str, Any]] = {}  # deal number (from 1) -> its history
        self.pot = 0
        self.dealer = int(rng.integers(rules.num_players))
        self.lock = threading.Lock()
        self._new_deal()

    def _call(self, q: int, call: Callable[[], Any], doing: str) -> tuple[bool, Any]:
        """``(True, result)`` of ``call()`` into seat ``q``'s agent on the clock, ``(False, None)`` when it was late
        (kept in ``late``: the agent is not called again until it has returned); ``AgentError`` when it raised."""
        running = _Call(call, f"bourre serve: player_{q}'s agent", doing)
        if not running.done.wait(self.move_seconds):
            self.late[q] = running
            when = f"deal {self.deal}, turn {self.turn}" if self.deal else "before the first deal"
            self._notice(
                f"player_{q}'s agent {self.specs[q]!r} did not answer within {self.move_seconds:g} s ({doing}; "
                f"{when}): the {STAND_IN} plays for it meanwhile"
            )
            return False, None
        if running.error is not None:
            _LOG.warning("bourre serve: agent %r at seat %d raised", self.specs[q], q, exc_info=running.error)
            what = f"{type(running.error).__name__}: {running.error}"
            raise AgentError(q, self.specs[q], f"it raised {what[:300]} ({doing})") from None
        return True, running.result

    def _notice(self, notice: str) -> None:
        _LOG.warning("bourre serve: %s", notice)
        self.notices = [*self.notices[-19:], notice]  # the latest 20: an agent that is always late adds one a move

    def _take_up(self, q: int, bot: agents.Agent) -> None:
        # a search agent thinks within its ms option (pimc, ismcts): capped, so no move holds a table long
        if self.move_ms is not None and self.specs[q] not in self.trusted and hasattr(bot, "ms"):
            bot.ms = self.move_ms if bot.ms is None else min(bot.ms, self.move_ms)
        self.bots[q] = bot

    def _idle(self, q: int) -> bool:
        """Whether seat ``q``'s agent is built and no call into it is still running. A late call that has returned
        since is seen here: a late build is taken up; an agent whose late call raised plays no more at this table."""
        running = self.late.get(q)
        if running is not None:
            if not running.done.is_set():
                return False
            del self.late[q]
            if running.error is not None:
                _LOG.warning("bourre serve: agent %r at seat %d raised", self.specs[q], q, exc_info=running.error)
                self._notice(f"player_{q}'s agent {self.specs[q]!r} failed after missing the clock: it plays no more")
                self.bots.pop(q, None)
                return False
            if running.doing == _BUILT:
                self._take_up(q, running.result)
        return q in self.bots

    def _stand_in(self, q: int) -> agents.Agent:
        if q not in self.stand_ins:
            self.stand_ins[q] = agents.make(STAND_IN, int(self.rng.integers(2**31)))
            self.stand_ins[q].reset()
        return self.stand_ins[q]

    def _agent_action(self, q: int, obs: Mapping[str, np.ndarray]) -> int:
        """Seat ``q``'s move: its agent's on the clock, else its stand-in's; ``AgentError`` for no legal action."""
        if self._idle(q) and self.reset_for.get(q) == self.deal:
            bot = self.bots[q]
            own = {key: value.copy() for key, value in obs.items()}  # an abandoned call keeps its own arrays
            finished, answer = self._call(q, lambda: bot.act(own), "moving")
            if finished:
                action = as_action_id(answer)  # the env's one rule
                legal = np.flatnonzero(obs["action_mask"]).tolist()
                if action is None or action not in legal:
                    raise AgentError(q, self.specs[q], f"it played {answer!r:.60}, not a legal action (legal: {legal})")
                return action
        return int(self._stand_in(q).act(dict(obs)))

    @property
    def over(self) -> bool:
        return self.game.over

    def _new_deal(self) -> None:
        deal = Deal(self.rules, dealer=self.dealer, env_seed=int(self.rng.integers(2**62)), pot=self.pot)
        try:
            # the table's loop, held between requests: the person's seat is answered by act, the others here
            paused = PausedGame(table_game(self.env, deal, self.specs, f"deal {self.deal + 1}"))
        except ValueError as err:  # a pot past the env's bound
            raise TableError(409, f"cannot deal: {err}; open a new table") from None
        self.game = paused
        self.deal += 1
        self.turn = 0
        for q in range(self.rules.num_players):
            if q != self.seat and self._idle(q) and self._call(q, self.bots[q].reset, "resetting for the deal")[0]:
                self.reset_for[q] = self.deal
        for stand_in in self.stand_ins.values():
            stand_in.reset()
        self._play_agents()

    def _play_agents(self) -> None:
        while (pending := self.game.pending) is not None and pending.seat != self.seat:
            self.game.answer(self._agent_action(pending.seat, pending.observation))
            self.turn += 1
        if self.game.over:
            self._settled()

    def _settled(self) -> None:
        saved = self.env.history()
        results = saved["deals"][0]["results"]
        self.totals = [t + r for t, r in zip(self.totals, results["payments"], strict=True)]
        self.pot = results["pot"]
        self.dealer = (self.dealer + 1) % self.rules.num_players
        self.histories[self.deal] = saved
        for old in [k for k in self.histories if k <= self.deal - KEPT_HISTORIES]:
            del self.histories[old]

    def act(self, action: Any, turn: Any) -> None:
        """The person's action; refused (nothing changes) when illegal, out of turn or stale."""
        if isinstance(action, bool) or not isinstance(action, int):
            raise TableError(400, f"action: expected an action id (an integer), got {action!r}")
        if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int)):
            raise TableError(400, f"turn: expected an integer, got {turn!r}")
        if self.over:
            raise TableError(409, f"deal {self.deal} is over: start the next deal")
        pending = self.game.pending
        if pending is None or pending.seat != self.seat:
            raise TableError(409, "it is not your turn: an agent is to act")
        if turn is not None and turn != self.turn:
            raise TableError(409, f"stale request: it answers turn {turn}, the table is at turn {self.turn}")
        legal = self.env.unwrapped.legal_actions()
        if action not in legal:
            view = seat_view(self.env.unwrapped.state_vector, self.params, self.rules, self.seat)
            choices = "; ".join(f"{e['action']} ({e['text']})" for e in view["legal"])
            raise TableError(422, f"illegal action {action}; legal: {choices}")
        self.game.answer(action)
        self.turn += 1
        self._play_agents()

    def next_deal(self) -> None:
        if not self.over:
            raise TableError(409, f"deal {self.deal} is still being played")
        self._new_deal()

    def history(self, deal: int) -> dict[str, Any]:
        if deal == self.deal and not self.over:
            raise TableError(409, f"deal {deal} is still being played: its history is ready when it is over")
        if deal not in self.histories:
            raise TableError(404, f"no history of deal {deal} at this table (it keeps the last {KEPT_HISTORIES})")
        return self.histories[deal]

    def view(self) -> dict[str, Any]:
        """What the person may see: the own observation, the public log, chip totals, and the results once over."""
        raw = self.env.unwrapped
        s = raw.state_vector
        view = seat_view(s, self.params, self.rules, self.seat)
        over = self.over
        secret = self.rules.declaration == "simultaneous" and view["phase"] == "declaration"
        actions = self.histories[self.deal]["deals"][0]["actions"] if over else self.env.current_actions()
        view.update(
            {
                "table": self.id,
                "deal": self.deal,
                "turn": self.turn,
                "over": over,
                "rules": {"preset": self.preset, "players": self.rules.num_players},
                "agents": list(self.specs),
                "notices": list(self.notices),
                "totals": list(self.totals),
                "log": public_log(actions, None if over else self.seat, secret),
                "result": None,
            }
        )
        if over:
            results = self.histories[self.deal]["deals"][0]["results"]
            view["result"] = {**results, "history": f"/api/tables/{self.id}/deals/{self.deal}/history"}
        return view


class Tables:
    """The live tables, at most ``max_tables`` in all and ``per_client`` for one client, each closed after
    ``idle_seconds`` without a request; search agents' moves capped at ``move_ms`` (but for the ``offered`` specs),
    and every agent's calls at ``move_seconds`` of wall time (``Table``)."""

    def __init__(
        self,
        max_tables: int = MAX_TABLES,
        idle_seconds: float = IDLE_SECONDS,
        seed: int | None = None,
        offered: Sequence[str] = (),
        clock: Callable[[], float] = time.monotonic,
        per_client: int = MAX_TABLES_PER_CLIENT,
        move_ms: float = MOVE_MS,
        move_seconds: float = MOVE_SECONDS,
    ) -> None:
        for name, count in (("max_tables", max_tables), ("per_client", per_client)):
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                raise ValueError(f"{name}: expected an integer >= 1, got {count!r}")
        if (
            isinstance(idle_seconds, bool)
            or not isinstance(idle_seconds, (int, float))
            or not 0 < idle_seconds < math.inf
        ):
            raise ValueError(f"idle_seconds (idle_minutes * 60): expected a finite number > 0, got {idle_seconds!r}")
        if isinstance(move_ms, bool) or not isinstance(move_ms, (int, float)) or not 0 < move_ms < math.inf:
            raise ValueError(f"move_ms: expected a finite number > 0, got {move_ms!r}")
        if (
            isinstance(move_seconds, bool)
            or not isinstance(move_seconds, (int, float))
            or not 0 < move_seconds <= 24 * 3600
        ):
            raise ValueError(f"move_seconds: expected a number of seconds in (0, 86400], got {move_seconds!r}")
        self.max_tables = max_tables
        self.per_client = per_client
        self.idle_seconds = idle_seconds
        self.move_ms = move_ms
        self.move_seconds = float(move_seconds)
        self.offered = list(offered)
        self.clock = clock
        self.rng = np.random.default_rng(seed)  # seeds the tables' deals and agents; secret from the clients
        self._tables: dict[str, Table] = {}
        self._used: dict[str, float] = {}
        self._owner: dict[str, str | None] = {}  # the client that opened each table
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._tables)

    def _sweep(self) -> None:
        now = self.clock()
        for key in [k for k, used in self._used.items() if now - used > self.idle_seconds]:
            del self._tables[key], self._used[key], self._owner[key]

    def _check_room(self, client: str | None) -> None:
        if len(self._tables) >= self.max_tables:
            raise TableError(
                429,
                f"the server has {plural(self.max_tables, 'table')} open, its limit; "
                "close one or wait until an idle one expires",
            )
        if client is not None and sum(owner == client for owner in self._owner.values()) >= self.per_client:
            raise TableError(
                429,
                f"you have {plural(self.per_client, 'table')} open, the limit for one client; close one "
                f"(or wait until an idle one expires) to open another",
            )

    def create(self, body: Any, client: str | None = None) -> Table:
        """A new table for ``client`` (its address; ``None``: no per-client limit) from a request body."""
        rules, preset, seat, specs = table_settings(body, self.offered)
        with self._lock:
            self._sweep()
            self._check_room(client)
            rng = np.random.default_rng(self.rng.integers(2**63))
        table = Table(
            rules, preset, seat, specs, rng, move_ms=self.move_ms, trusted=self.offered, move_seconds=self.move_seconds
        )
        with self._lock:
            self._check_room(client)  # filled while this table was being dealt
            self._tables[table.id] = table
            self._used[table.id] = self.clock()
            self._owner[table.id] = client
        return table

    def get(self, table_id: str) -> Table:
        with self._lock:
            self._sweep()
            table = self._tables.get(table_id)
            if table is None:
                raise TableError(404, "no such table: it was closed, expired after idling, or never existed")
            self._used[table_id] = self.clock()
            return table

    def close(self, table_id: str) -> None:
        with self._lock:
            if self._tables.pop(table_id, None) is None:
                raise TableError(404, "no such table")
            del self._used[table_id], self._owner[table_id]

    def discard(self, table_id: str) -> None:
        """Close a table if it is still open (one whose agent failed)."""
        with self._lock:
            if self._tables.pop(table_id, None) is not None:
                del self._used[table_id], self._owner[table_id]
