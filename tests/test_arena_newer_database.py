"""A database that a newer version migrated (a revision these migrations do not know) is refused in one line by
every command that opens it: the database's revision and the code's named, no traceback. SQLite here; PostgreSQL
goes through the same ``storage.migrate``."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason="the arena extra: pip install -e '.[arena]'")
pytest.importorskip("alembic", reason="the arena extra: pip install -e '.[arena]'")

import sqlalchemy as sa  # noqa: E402
from alembic.script import ScriptDirectory  # noqa: E402

from train.arena.storage import NewerDatabaseError, Store, alembic_config  # noqa: E402
from train.cli import main  # noqa: E402

FUTURE = "0099_from_the_future"


@pytest.fixture
def newer(tmp_path: Path) -> Path:
    store = Store(tmp_path)
    with store.engine.begin() as db:
        db.execute(sa.text("UPDATE alembic_version SET version_num = :v"), {"v": FUTURE})
    store.close()
    return tmp_path


def test_a_store_refuses_a_newer_database_in_one_line(newer: Path) -> None:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    with pytest.raises(NewerDatabaseError) as refused:
        Store(newer)
    message = str(refused.value)
    assert FUTURE in message and str(head) in message and "\n" not in message


@pytest.mark.parametrize(
    "command",
    [["arena", "add-bot", "alice"], ["arena", "add-operator", "me"], ["arena", "rerate"], ["arena", "serve"]],
    ids=lambda c: c[1],
)
def test_every_command_refuses_a_newer_database_in_one_line(
    newer: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    status = main([*command, "--data", str(newer)])
    out, err = capsys.readouterr()
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert FUTURE in err and "Traceback" not in err + out
