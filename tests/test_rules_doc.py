"""``docs/rules.md`` is the rule book: its tables of options and presets are held to ``bourre_env.core.rules``."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from bourre_env.core.rules import Rules, option_names, preset_descriptions, presets

RULES_DOC = Path(__file__).resolve().parent.parent / "docs" / "rules.md"


def _section(title: str) -> str:
    """The text of the ``## title`` section, up to the next section of that level."""
    text = RULES_DOC.read_text()
    body = text.split(f"\n## {title}\n", 1)[1]
    return body.split("\n## ", 1)[0]


def _table(title: str) -> list[list[str]]:
    """The cells of the first Markdown table of a section, header and ruler left out."""
    rows = [line for line in _section(title).splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows[2:]]


def _literal(value: Any) -> str:
    """A value as the document writes it: Python literals, strings in double quotes, in backticks."""
    return f'`"{value}"`' if isinstance(value, str) else f"`{value!r}`"


def test_every_rules_field_is_documented_with_its_default() -> None:
    rows = _table("Options")
    assert [row[0] for row in rows] == [f"`{name}`" for name in option_names()]
    defaults = {f.name: f.default for f in dataclasses.fields(Rules)}
    for name, default, values, meaning in rows:
        field = name.strip("`")
        expected = "all 13" if field == "ranks" else _literal(defaults[field])
        assert default == expected, field
        assert values and meaning, field


def test_every_preset_is_documented_with_its_changes_and_source() -> None:
    rows = _table("Presets")
    assert [row[0] for row in rows] == [f"`{name}`" for name in presets]
    for name, changes, source in rows:
        preset = presets[name.strip("`")]
        expected = ", ".join(f"`{k}={_literal(v).strip('`')}`" for k, v in preset.changes_from(Rules()).items())
        assert changes == (expected or "(none)"), name
        assert source == preset_descriptions[name.strip("`")].source, name


def test_every_variant_preset_has_its_own_section() -> None:
    titles = re.findall(r"^### `(\w+)`$", _section("Presets"), re.M)
    assert titles == [name for name in presets if name != "standard"]


def test_readme_preset_summary_lists_every_preset() -> None:
    """The README keeps a one-line summary of each preset, written once in ``rules.preset_descriptions``; the rule
    book has the rest."""
    readme = (RULES_DOC.parent.parent / "README.md").read_text()
    summary = readme.split("\n### Rule presets\n", 1)[1].split("\n## ", 1)[0]
    rows = [
        [cell.strip() for cell in line.strip("|").split(" | ")]
        for line in summary.splitlines()
        if line.startswith("| `")
    ]
    assert rows == [[f"`{name}`", d.source, d.summary] for name, d in preset_descriptions.items()]


def test_every_preset_has_a_description() -> None:
    assert list(preset_descriptions) == list(presets)
    assert all(d.source and d.summary for d in preset_descriptions.values())
