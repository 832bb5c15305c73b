"""The replay view of ``bourre serve``: every position of a hand history file, as one seat saw it or with every hand
open, built from the same views as a live table's (``train.serve.tables.seat_view``, ``public_log``)."""

from __future__ import annotations

from typing import Any

from bourre_env import core, history
from train.serve.tables import MAX_REPLAY_DEALS, public_log, seat_view
from train.web.agent_specs import HUMAN
from train.web.errors import TableError

__all__ = ["replay_frames"]


def replay_frames(data: bytes, seat: int | None, open_hands: bool) -> dict[str, Any]:
    """Every position of a history file, as ``seat`` saw it (default: the person's seat, else 0) or with every hand
    open: a frame before each action (naming it) and one after each deal with its results."""
    try:
        saved = history.loads(data)
    except history.HistoryError as err:
        raise TableError(422, f"not a valid hand history: {err}") from None
    if len(saved["deals"]) > MAX_REPLAY_DEALS:
        raise TableError(
            413,
            f"the replay view takes histories of at most {MAX_REPLAY_DEALS} deals, this one has {len(saved['deals'])}",
        )
    rules = history.rules_of(saved)
    n = rules.num_players
    if seat is None:
        seat = next((q for q, s in enumerate(saved["seats"]) if s["agent"] == HUMAN), 0)
    if not 0 <= seat < n:
        raise TableError(400, f"seat: expected an integer in 0..{n - 1}, got {seat}")
    p = rules.params()
    viewer = None if open_hands else seat
    frames: list[dict[str, Any]] = []
    totals = [0] * n
    replay = history.Replay(saved)
    try:
        for step in replay:
            s = step.env.state_vector
            actions = saved["deals"][step.deal]["actions"]
            frame = seat_view(s, p, rules, seat, open_hands)
            secret = rules.declaration == "simultaneous" and frame["phase"] == "declaration"
            mine = viewer is None or step.seat == viewer
            upcoming = public_log([step.record], viewer, secret)[0]
            frame.update(
                deal=step.deal,
                step=step.entry,
                totals=list(totals),
                result=None,
                log=public_log(actions[: step.entry], viewer, secret),
                next={**upcoming, "action": step.action if mine else None},
            )
            frame["legal"] = []  # a replay is watched, not played
            frames.append(frame)
            if step.entry == len(actions) - 1:  # the deal's last action: show it settled
                settled = s.copy()
                core.step(settled, p, step.action)
                results = saved["deals"][step.deal]["results"]
                totals = [t + r for t, r in zip(totals, results["payments"], strict=True)]
                end = seat_view(settled, p, rules, seat, open_hands)
                end.update(
                    deal=step.deal,
                    step=len(actions),
                    totals=list(totals),
                    next=None,
                    legal=[],
                    log=public_log(actions, None, False),
                    result=results,
                )
                frames.append(end)
    except history.HistoryError as err:
        raise TableError(422, f"the history does not replay: {err}") from None
    return {"rules": saved["rules"], "seats": saved["seats"], "seat": seat, "open": open_hands, "frames": frames}
