"""``bourre play``: a game at the terminal, people and agents at one table (its parser: ``add_parser``).

A ``human`` seat sees its own hand and the table, and chooses a legal move by its number or by typing it: ``p``
to pass, ``s`` to stand pat, the cards to discard (``5C JD``) in a draw round, the card to play (``QH``) in trick
play; a draw round's up to 33 moves are listed on request (``l``). The other seats are agents built by spec
(``agents.make``). ``--save`` writes the finished deals as a hand history
(``docs/hand_history.md``).

A move that is the only legal one is played for the person, and said so (``only one legal move (the 4 of
clubs): played for you``). The trick list marks the seat that led each trick and the trick's winner; the end of a
deal says, seat by seat, what the chips mean (won the pot, bourré: pays the pot, tied, passed). When the input is
not a terminal (a script piped in) what was read is echoed after the prompt, so that the output is a transcript:
``docs/play.md`` shows one, and a test reruns its command and compares it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from train import arguments
from train.outputs import Earlier

if TYPE_CHECKING:
    from train.table import Decision

HUMAN = "human"
LEGEND = "(* the seat to act, D the dealer; cards are rank then suit: 10H or TH, QS, 2C)"
MAX_DEALS = 10_000
"""Most deals of one ``bourre play`` (its hand history keeps every deal in memory until it is written); longer
series of agents alone are what ``bourre eval`` is for."""


def _public_move(action: int, phase: int, secret: bool) -> str:
    """What the table sees of a move made in ``phase``: ``actions.describe``'s public text, or nothing but that
    a declaration was made while declarations are ``secret`` (a simultaneous declaration round)."""
    from bourre_env import core
    from bourre_env.actions import describe

    if secret and phase == core.DECLARE:
        return "declares (hidden until everyone has declared)"
    return describe(action, None, phase, public=True)


def _typed(text: str, legal: list[int], hand: list[int], phase: int) -> int | None:
    """The legal action a person typed in words or cards, or None: ``p`` (pass), ``s`` (stand pat), the cards to
    discard in a draw round (``5C JD``), the card to play in trick play (``QH``)."""
    from bourre_env import actions, core
    from bourre_env.core import cards

    word = text.lower()
    drawing = phase in core.DRAW_PHASES
    if word in ("p", "pass") and core.PASS in legal:
        return core.PASS
    if word in ("s", "stand", "stand pat") and drawing:
        chosen = actions.stay(discard=[], hand=hand)
        return chosen if chosen in legal else None
    try:
        named = cards.parse_many(text.replace(",", " "))
    except ValueError:
        return None
    if drawing:
        if not set(named) <= set(hand):
            return None
        chosen = actions.stay(discard=named, hand=hand)
    elif len(named) == 1 and phase == core.PLAY:
        chosen = actions.play(named[0])
    else:
        return None
    return chosen if chosen in legal else None


def _refusal(text: str, legal: list[int], hand: list[int], phase: int) -> str:
    """Why ``text`` is not a move, said to a person who typed it: a card not in the hand or not legal is named, with
    the hand or the legal cards beside it, so that the next try can be right."""
    from bourre_env import actions, core
    from bourre_env.core import cards

    ask = f"enter a number from 1 to {len(legal)}"
    try:
        named = cards.parse_many(text.replace(",", " "))
    except ValueError:
        named = []
    if not named:
        return f"{text!r} is not one of the choices; {ask}"
    missing = [card for card in named if card not in hand]
    if missing:
        held = cards.to_strs(hand) or "no cards"
        verb = "is" if len(missing) == 1 else "are"
        return f"{cards.to_strs(missing)} {verb} not in your hand (you hold {held}); {ask}"
    if phase == core.PLAY:
        playable = cards.to_strs(a for a in legal if actions.is_card(a))
        if len(named) > 1:
            return f"play one card at a time (you may play {playable}); {ask}"
        return f"{cards.to_str(named[0])} is not legal now (you may play {playable}); {ask}"
    if phase in core.DRAW_PHASES:
        return f"discarding {cards.to_strs(named)} is not one of the choices; {ask}"
    return f"{text!r} is not one of the choices: cards are played in trick play; {ask}"


def _choose(legal: list[int], hand: list[int], phase: int) -> int | None:
    """The human's choice among ``legal``: by number, or typed (``_typed``: a pass, the cards to discard, the card to
    play); ``None`` on EOF or quit. A draw round's choices (up to 33) are listed only on request."""
    from bourre_env import core
    from bourre_env.actions import describe

    items = [f"{i:>2}) {describe(a, hand, phase)}" for i, a in enumerate(legal, 1)]
    # Columns, so that the 33 draw choices of a five-card hand fit on one screen.
    width = max(len(item) for item in items) + 3
    per_row = max(1, 96 // width)
    menu = "\n".join(
        "  " + "".join(item.ljust(width) for item in items[i : i + per_row]).rstrip()
        for i in range(0, len(items), per_row)
    )
    drawing = phase in core.DRAW_PHASES and len(legal) > 8
    if drawing:
        can_pass = "p to pass, " if core.PASS in legal else ""
        prompt = (
            f"your move: {can_pass}s to stand pat, the cards to discard (e.g. {_example(hand)}), "
            "l to list all, q to quit: "
        )
    else:
        print(menu)
        prompt = f"your move [1-{len(legal)}{', or a card' if phase == core.PLAY else ''}, q to quit]: "
    while True:
        try:
            text = input(prompt).strip()
        except EOFError:
            print()
            return None
        if not sys.stdin.isatty():  # a terminal echoes what is typed; a script's input is echoed for the transcript
            print(text)
        if text.lower() in ("q", "quit", "exit"):
            return None
        if text.lower() in ("l", "list"):
            print(menu)
            continue
        if text.isdigit() and 1 <= int(text) <= len(legal):
            return legal[int(text) - 1]
        chosen = _typed(text, legal, hand, phase)
        if chosen is not None:
            return chosen
        print(_refusal(text, legal, hand, phase) + (", or l to list them" if drawing else ""))
        if not drawing:
            print(menu)


def _card_words(card: int) -> str:
    """``4C`` as a person says it: the 4 of clubs."""
    from bourre_env.core import cards

    rank = cards.RANKS[cards.rank_of(card)]
    rank_word = {"J": "jack", "Q": "queen", "K": "king", "A": "ace"}.get(rank, rank)
    return f"the {rank_word} of {cards.SUIT_NAMES[cards.suit_of(card)]}"


def _forced_move_text(action: int, hand: list[int], phase: int) -> str:
    """What the table tells a person whose only legal move is ``action``, which is then played for them."""
    from bourre_env import core
    from bourre_env.actions import describe

    move = _card_words(action) if phase == core.PLAY else describe(action, hand, phase)
    return f"only one legal move ({move}): played for you"


def _trick_lines(state_vector: np.ndarray, num_players: int, hand_size: int) -> list[str]:
    """The finished tricks of a deal in the order they were played, from the seat that led: ``trick 2: p2:KH
    (led) p0:6H p1:7H  -> won by player_2 with KH``."""
    from bourre_env.core import cards
    from bourre_env.view import StateView

    view = StateView(state_vector, num_players)
    lines = []
    for trick in range(hand_size):
        winner = view.trick_winner(trick)
        if winner < 0:
            continue
        row = view.trick_cards(trick)
        leader = view.trick_leader(trick)
        order = [(leader + k) % num_players for k in range(num_players)] if leader >= 0 else range(num_players)
        plays = [f"p{q}:{cards.to_str(row[q])}{' (led)' if q == leader else ''}" for q in order if row[q] >= 0]
        lines.append(
            f"trick {trick + 1}: {' '.join(plays)}  -> won by player_{winner} with {cards.to_str(row[winner])}"
        )
    return lines


def _table_for_a_person(rendered: str, state_vector: np.ndarray, num_players: int, hand_size: int) -> str:
    """``render.table_text``'s table with its trick list replaced by ``_trick_lines`` (leader and winner marked),
    without its one-line list of legal moves (the numbered menu lists them) or its result line (the end of a deal
    says it with the players' names)."""
    kept = []
    tricks_shown = False
    for line in rendered.splitlines():
        if line.startswith(("legal: ", "result: ")):
            continue
        if line.startswith("trick ") and ": p" in line:
            if not tricks_shown:
                kept += _trick_lines(state_vector, num_players, hand_size)
                tricks_shown = True
            continue
        kept.append(line)
    return "\n".join(kept)


def _result_meaning(settled_vector: np.ndarray, num_players: int, tie: str, seat: int) -> str:
    """What ``seat``'s chips at the end of a deal mean, in words: won the pot, bourré, tied, passed, or played
    and took fewer tricks than the winner."""
    from bourre_env import core
    from bourre_env.view import StateView

    view = StateView(settled_vector, num_players)
    tricks = view.tricks(seat)
    took = f"took {tricks} trick{'s' if tricks != 1 else ''}"
    if view.reneged(seat):
        return "reneged (an illegal play): pays the penalty into the next deal's pot"
    if view.bourre(seat):
        return "bourré: took no trick, so pays the pot into the next deal's pot"
    if view.won(seat):
        return f"won the pot: {took}, the most"
    if view.tied(seat):
        if tie == "divide":
            return f"tied for the most tricks ({tricks}): shares the pot"
        return f"tied for the most tricks ({tricks}): no one wins, the pot carries to the next deal"
    if view.decision(seat) == core.PASSED:
        return "passed: sat the deal out, loses only what it put in the pot"
    return f"{took}, not the most: loses only what it put in the pot"


def _example(hand: list[int]) -> str:
    from bourre_env.core import cards

    return cards.to_strs(sorted(hand)[:2])


class _QuitError(Exception):
    """The person quit (``q``, or the end of the input)."""


class _TerminalTable:
    """``bourre play``'s side of the table's loop (``train.table``; imported when a game starts, so that the command
    line starts without the game code): it answers each decision (a bot's by ``agents.choose``, a person's from the
    terminal) and, as an observer of the loop (``train.table.Observer``), tells the table what each move did."""

    def __init__(self, env: Any, seats: list[str], bots: dict[int, Any], deals: int) -> None:
        from bourre_env.view import StateView

        self.env = env
        self.raw = env.unwrapped
        self.seats = seats
        self.bots = bots
        self.deals = deals
        n = len(seats)
        self.humans = [q for q, spec in enumerate(seats) if spec == HUMAN]
        self.viewer = self.humans[0] if self.humans else 0  # whose view the end of a deal is shown from
        alone = len(self.humans) == 1
        self.names = [f"player_{q} ({'you' if spec == HUMAN and alone else spec})" for q, spec in enumerate(seats)]
        self.params = self.raw.rules.params()
        self.totals = np.zeros(n, dtype=np.int64)
        self.state = StateView(self.raw.state_vector, n)
        self.secret = self.raw.rules.declaration == "simultaneous"
        self.hand_size = self.raw.rules.hand_size
        self.legend_shown = False

    def __call__(self, decision: Decision) -> int:
        """The move at ``decision``; ``_QuitError`` when the person quits."""
        from agents.base import choose

        q = decision.seat
        n = len(self.seats)
        if q in self.bots:
            action = choose(self.bots[q], decision.observation, repr(self.seats[q]), decision.where)
        else:
            print("\n" + _table_for_a_person(str(self.env.render()), self.raw.state_vector, n, self.hand_size))
            if not self.legend_shown:
                print(LEGEND)
                self.legend_shown = True
            legal = self.raw.legal_actions()
            hand = self.raw.hand(decision.agent)
            if len(legal) == 1:  # no choice to make: asking would only cost the person a keystroke
                print(_forced_move_text(legal[0], hand, self.state.phase))
                action = legal[0]
            else:
                chosen = _choose(legal, hand, self.state.phase)
                if chosen is None:
                    raise _QuitError
                action = chosen
        print(f"{self.names[q]}: {_public_move(action, self.state.phase, self.secret and q not in self.humans)}")
        return action

    def dealt(self, env: Any) -> None:
        return None

    def stepped(self, decision: Decision, action: int, before_vector: np.ndarray, env: Any) -> None:
        """The tricks the move finished; at the end of a deal its table, its chips and what they mean."""
        from bourre_env import core, limits, render
        from bourre_env.core import cards
        from bourre_env.view import StateView

        n, names = len(self.seats), self.names
        before = StateView(before_vector, n)
        deal_over = self.state.deals_done != before.deals_done
        settled_vector = self.raw.state_vector
        if deal_over:
            # The env starts the next deal at once (or ends the episode), so replay this move on a copy of
            # the state before it to show the deal as it was settled.
            settled_vector = before_vector.copy()
            core.step(settled_vector, self.params, action)
        settled = StateView(settled_vector, n)
        for t in range(self.hand_size):
            winner = settled.trick_winner(t)
            if winner >= 0 and before.trick_winner(t) < 0:
                won_with = cards.to_str(settled.trick_cards(t)[winner])
                print(f"trick {t + 1} goes to {names[winner]}, with {won_with}")
        if not deal_over:
            return
        rewards = settled.rewards
        self.totals += rewards
        # the chips of the deal follow, once, with the players' names: not the table's own result line
        settled_table = render.table_text(settled_vector, self.params, self.raw.rules, self.viewer)
        print("\n" + _table_for_a_person(settled_table, settled_vector, n, self.hand_size))
        print(
            f"deal {settled.deal_no + 1} over: " + ", ".join(f"{names[p]} {int(r):+d}" for p, r in enumerate(rewards))
        )
        width = max(len(name) for name in names)
        for p, r in enumerate(rewards):
            meaning = _result_meaning(settled_vector, n, self.raw.rules.tie, p)
            print(f"  {names[p]:<{width}} {int(r):+4d}  {meaning}")
        if self.deals > 1:
            print("totals: " + ", ".join(f"{names[p]} {int(c):+d}" for p, c in enumerate(self.totals)))
        if any(self.raw.truncations.values()):
            print(
                f"the pot holds {settled.pot:,} chips, past the bound of {limits.POT_BOUND:,} "
                f"(bourre_env.limits): the game stops here"
            )
        for bot in self.bots.values():
            bot.reset()


def add_parser(commands: Any) -> None:
    """The ``play`` command's parser, under ``commands`` (the ``bourre`` parser's subparsers)."""
    play = commands.add_parser(
        "play",
        help="play at the terminal against agents",
        description="Play Bourré at the terminal. Seats are clockwise from player_0.",
    )
    play.add_argument(
        "--seats",
        required=True,
        metavar="SPECS",
        help=f"comma-separated seat list, '{HUMAN}' for a person, e.g. {HUMAN},heuristic,random; "
        f"it sets num_players (and --deals sets deals_per_episode: no --rule for them)",
    )
    play.add_argument(
        "--seed", type=arguments.seed, default=None, help="seed of the deals and the agents (default: fresh)"
    )
    play.add_argument(
        "--deals",
        type=arguments.at_most(MAX_DEALS),
        default=1,
        help=f"deals to play, 1 to {MAX_DEALS:,}; the pot and the ante exemptions carry from deal to deal "
        "(default: 1; for longer series of agents, bourre eval)",
    )
    play.add_argument(
        "--rule",
        type=arguments.rule_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a rule option, e.g. tie=divide (repeatable)",
    )
    play.add_argument(
        "--save",
        type=Path,
        default=None,
        metavar="FILE",
        help="write the finished deals as a hand history (docs/hand_history.md)",
    )
    play.set_defaults(func=_cmd_play)


def _cmd_play(args: argparse.Namespace) -> int:
    import agents
    import bourre_env
    from bourre_env import atomic_files, history
    from bourre_env.words import plural
    from train.schedule import agent_seed
    from train.table import Deal, drive, game, reset_agents

    seats = [s.strip() for s in args.seats.split(",")]
    if not 2 <= len(seats) <= 8 or not all(seats):
        raise ValueError(f"--seats: 2 to 8 comma-separated specs, got {args.seats!r}")
    options = dict(args.rule)
    for key, value, flag in (("num_players", len(seats), "--seats"), ("deals_per_episode", args.deals, "--deals")):
        if key in options and options[key] != value:
            raise ValueError(
                f"--rule {key}={options[key]!r} contradicts {flag} (which makes it {value}); {flag} alone sets it"
            )
    if args.save is not None:
        atomic_files.check_writable_file(args.save, "--save")
    earlier = Earlier.at(args.save)
    seed = args.seed if args.seed is not None else int(np.random.SeedSequence().generate_state(1)[0])
    env = history.Recording(
        bourre_env.env(render_mode="ansi", **{**options, "num_players": len(seats), "deals_per_episode": args.deals}),
        seats=seats,
    )
    bots = {q: agents.make(spec, agent_seed(seed, len(seats), q)) for q, spec in enumerate(seats) if spec != HUMAN}
    table = _TerminalTable(env, seats, bots, args.deals)
    print(f"Bourré, {len(seats)} players, {plural(args.deals, 'deal')}, seed {seed}: " + ", ".join(table.names))
    # the whole episode (every deal of --deals) is one game of the table's loop
    loop = game(env, Deal(env.unwrapped.rules, env_seed=seed), seats, f"bourre play seed {seed}", (table,))
    reset_agents(list(bots.values()))
    saved = True
    try:
        drive(loop, table)
    except _QuitError:
        print("bye")
    finally:  # the deals finished so far, also after a quit or Ctrl-C
        if args.save is not None:
            try:
                print(f"wrote {history.write(env.history(), args.save)}")
                replaced = earlier.line()
                if replaced is not None:
                    print(replaced)
            except ValueError as err:  # no finished deal to write: said, not an error
                print(f"--save: nothing written: {err}")
            except OSError as err:  # a full disk or device (/dev/full): said in one line, nothing replaced
                saved = False
                print(f"bourre play: error: --save: nothing written: {err}", file=sys.stderr)
    return 0 if saved else 1
