"""``bourre play``: a game at the terminal, people and agents at one table (``train.cli`` dispatches to ``_cmd_play``).

A ``human`` seat sees its own hand and the table, and chooses a legal move by its number or by typing it: ``p``
to pass, ``s`` to stand pat, the cards to discard (``5C JD``) in a draw round, the card to play (``QH``) in trick
play; a draw round's up to 33 moves are listed on request (``l``). The other seats are agents built by spec
(``agents.make``). ``--save`` writes the finished deals as a hand history
(``docs/hand_history.md``).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

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
        print(
            f"{text!r} is not one of the choices; enter a number from 1 to {len(legal)}"
            + (", or l to list them" if drawing else "")
        )
        if not drawing:
            print(menu)


def _example(hand: list[int]) -> str:
    from bourre_env.core import cards

    return cards.to_strs(sorted(hand)[:2])


def _cmd_play(args: argparse.Namespace) -> int:
    import agents
    import bourre_env
    from bourre_env import atomic_files, core, history, limits, render
    from bourre_env.view import StateView
    from train.eval.duplicate import agent_seed

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
    seed = args.seed if args.seed is not None else int(np.random.SeedSequence().generate_state(1)[0])
    env = history.Recording(
        bourre_env.env(render_mode="ansi", **{**options, "num_players": len(seats), "deals_per_episode": args.deals}),
        seats=seats,
    )
    raw = env.unwrapped
    params = raw.rules.params()
    bots = {q: agents.make(spec, agent_seed(seed, len(seats), q)) for q, spec in enumerate(seats) if spec != HUMAN}
    humans = [q for q, spec in enumerate(seats) if spec == HUMAN]
    viewer = humans[0] if humans else 0  # whose view the end of a deal is shown from
    names = [f"player_{q} ({'you' if spec == HUMAN and len(humans) == 1 else spec})" for q, spec in enumerate(seats)]
    print(f"Bourré, {len(seats)} players, {args.deals} deal(s), seed {seed}: " + ", ".join(names))
    env.reset(seed=seed)
    for bot in bots.values():
        bot.reset()
    totals = np.zeros(len(seats), dtype=np.int64)
    state = StateView(raw.state_vector, len(seats))
    secret = raw.rules.declaration == "simultaneous"
    saved = True
    legend_shown = False
    try:
        for agent_name in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            q = raw.agent_name_mapping[agent_name]
            where = f"deal {state.deal_no + 1}, {agent_name}"
            if q in bots:
                action = agents.choose(bots[q], obs, repr(seats[q]), where)
            else:
                # the numbered menu below lists the legal moves: drop the table's own one-line list
                table = "\n".join(line for line in str(env.render()).splitlines() if not line.startswith("legal: "))
                print("\n" + table)
                if not legend_shown:
                    print(LEGEND)
                    legend_shown = True
                chosen = _choose(raw.legal_actions(), raw.hand(agent_name), state.phase)
                if chosen is None:
                    print("bye")
                    break
                action = chosen
            print(f"{names[q]}: {_public_move(action, state.phase, secret and q not in humans)}")
            before_vector = raw.state_vector.copy()
            before = StateView(before_vector, len(seats))
            try:
                env.step(action)
            except ValueError as err:  # only a bot's move can be refused: a person chooses from the legal list
                raise agents.AgentError(f"agent {seats[q]!r} at {where}: {err}") from None
            deal_over = state.deals_done != before.deals_done
            settled_vector = raw.state_vector
            if deal_over:
                # The env starts the next deal at once (or ends the episode), so replay this move on a copy of
                # the state before it to show the deal as it was settled.
                settled_vector = before_vector.copy()
                core.step(settled_vector, params, action)
            settled = StateView(settled_vector, len(seats))
            for t in range(raw.rules.hand_size):
                winner = settled.trick_winner(t)
                if winner >= 0 and before.trick_winner(t) < 0:
                    print(f"trick {t + 1} goes to {names[winner]}")
            if deal_over:
                rewards = settled.rewards
                totals += rewards
                # the chips of the deal follow, once, with the players' names: not the table's own result line
                settled_table = render.table_text(settled_vector, params, raw.rules, viewer)
                print("\n" + "\n".join(line for line in settled_table.splitlines() if not line.startswith("result: ")))
                print(
                    f"deal {settled.deal_no + 1} over: "
                    + ", ".join(f"{names[p]} {int(r):+d}" for p, r in enumerate(rewards))
                )
                if args.deals > 1:
                    print("totals: " + ", ".join(f"{names[p]} {int(c):+d}" for p, c in enumerate(totals)))
                if any(raw.truncations.values()):
                    print(
                        f"the pot holds {settled.pot:,} chips, past the bound of {limits.POT_BOUND:,} "
                        f"(bourre_env.limits): the game stops here"
                    )
                for bot in bots.values():
                    bot.reset()
    finally:  # the deals finished so far, also after a quit or Ctrl-C
        if args.save is not None:
            try:
                print(f"wrote {history.write(env.history(), args.save)}")
            except ValueError as err:  # no finished deal to write: said, not an error
                print(f"--save: nothing written: {err}")
            except OSError as err:  # a full disk or device (/dev/full): said in one line, nothing replaced
                saved = False
                print(f"bourre play: error: --save: nothing written: {err}", file=sys.stderr)
    return 0 if saved else 1
