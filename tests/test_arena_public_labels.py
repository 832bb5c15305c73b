"""The public pages name an agent as ``match_start`` does, by its name alone: an operator's ``--agent`` spec may hold
a server's address, a key variable's name or a policy file's path, which the hand histories, the leaderboard and
the bot pages once published whole."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sqlalchemy", reason="the arena extra: pip install -e '.[arena]'")

from train.arena import sessions  # noqa: E402
from train.arena.leaderboard import public  # noqa: E402
from train.arena.match import MatchSpec, play_match, public_label  # noqa: E402
from train.arena.ratings import ReferenceStanding, Standings  # noqa: E402
from train.arena.records import bot_matches  # noqa: E402
from train.arena.remote import Registry  # noqa: E402
from train.arena.storage import Store  # noqa: E402
from train.schedule import build_agent  # noqa: E402

SECRET_SPEC = "heuristic:loose"  # a spec with a variant stays as it is; one with a path or options does not
PATH_SPEC = "llm:model=m,base_url=http://10.0.0.7:8000/v1,key_env=HOUSE_KEY"


def test_a_spec_with_options_or_a_path_is_named_by_its_agent() -> None:
    assert public_label(PATH_SPEC) == "llm"
    assert public_label("ppo:/home/op/models/secret.zip") == "ppo"
    assert public_label(SECRET_SPEC) == SECRET_SPEC and public_label("bot:alice") == "bot:alice"


def test_the_leaderboard_names_reference_agents_as_match_start_does() -> None:
    standings = Standings(["heuristic"], [3], 1, [], [ReferenceStanding(PATH_SPEC, 25.0, 8.0, 1.0, 4)])
    assert [r.spec for r in public(standings).references] == ["llm"]
    assert public(standings).to_dict()["references"][0]["spec"] == "llm"


def test_a_bots_matches_and_the_par_games_histories_name_agents_by_their_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path)
    try:
        request = {"seats": ["bot:alice", PATH_SPEC, "heuristic"], "players": 3, "deals": 1, "format": "single"}
        store.start_match("m1", request).result()
        store.finish_match("m1", "finished", None).result()
        (listed,) = bot_matches(store, "alice")
        assert listed["seats"] == ["bot:alice", "llm", "heuristic"]
    finally:
        store.close()
    par: list[dict[str, Any]] = []

    async def keep_par(k: int, rows: np.ndarray, saved: dict[str, Any]) -> None:
        par.append(saved)

    # the par agent is the operator's language-model seat; played here by the heuristic under that spec
    monkeypatch.setattr(sessions, "build_all", lambda spec, seeds: [build_agent("heuristic", s) for s in seeds])
    spec = MatchSpec.from_request({"seats": ["random"] * 2, "deals": 2, "format": "session", "par": PATH_SPEC})
    asyncio.run(play_match(spec, "0" * 16, Registry(), on_par=keep_par))
    assert par and all(s["agent"] == "llm" for saved in par for s in saved["seats"])
