"""A griffe extension of the site's API reference (mkdocs.yml): interactive examples in docstrings become code.

The docstrings are prose, with examples written as at the interpreter (``>>> env = bourre_env.env()``), not in a
docstring style's "Examples" section. Left as they are, Markdown reads ``nonzero()[0][0]`` as a link and runs the
lines together; fenced as ``pycon``, they show as the session they are.
"""

from __future__ import annotations

from typing import Any

from griffe import Extension, Object

_PROMPTS = (">>>", "...")


def fence_examples(docstring: str) -> str:
    """Wraps each run of ``>>>`` lines, with their continuation and output lines, in a ``pycon`` fence."""
    fenced: list[str] = []
    in_example = False
    for line in docstring.split("\n"):
        stripped = line.strip()
        if not in_example and stripped.startswith(_PROMPTS[0]):
            indent = line[: len(line) - len(line.lstrip())]
            fenced.append(f"{indent}```pycon")
            in_example = True
        elif in_example and not stripped:
            fenced.append(f"{indent}```")
            in_example = False
        fenced.append(line)
    if in_example:
        fenced.append(f"{indent}```")
    return "\n".join(fenced)


class DoctestFences(Extension):
    def on_instance(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_examples(obj.docstring.value)
