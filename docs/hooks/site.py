"""MkDocs hooks of the documentation site (mkdocs.yml): the README as its home, links out of docs/, the message schemas.

The pages are written to be read on the repository too, so they link as files of the repository do: the README
to ``docs/rules.md``, a page to ``../bourre_env/batch.py``. On the site:

* the home page (``index.md``) is README.md, its links made relative to docs/ (``docs/rules.md`` becomes
  ``rules.md``): the README stays the one source of the front page;
* a link that leaves docs/ for a file of the repository is pointed at a copy of that file published under
  ``source/`` (the site has no repository address to link to); a link to a folder must name a page of the site in
  ``FOLDER_PAGES``, and a link to a file that does not exist is left as it is, for the strict build to report;
* the page ``reference/messages.md`` gets every JSON Schema of ``train/arena/schemas/`` at its marker, so that a new
  message type is on the site without an edit of the page;
* a page whose HTML still holds a reStructuredText simple table (``=====`` borders, which Markdown prints as a
  paragraph) is reported as a warning, so the strict build fails on it: the docstrings' tables reach the site through
  ``docs/hooks/rst_tables.py``, and one it cannot read must not pass unseen (a table of theirs without a header
  row loses the empty header that Markdown's tables require).
"""

from __future__ import annotations

import json
import logging
import posixpath
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

# a folder of the repository that a page links to, and the site's page that stands for it
FOLDER_PAGES = {"train/arena/schemas": "reference/messages.md"}
SCHEMA_FOLDER = "train/arena/schemas"
MESSAGES_PAGE = "reference/messages.md"
MESSAGES_MARKER = "<!-- message schemas -->"
SOURCE_PREFIX = "source/"

# an inline Markdown link or image target: `](target)` or `](target "title")`; the pages use no other kind
_LINK = re.compile(r"(\]\()([^)\s]+)(\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^\s*(```|~~~)")
# in a page's HTML: code, where a table's border may be shown on purpose, and a simple table's border left as text
_CODE = re.compile(r"<pre\b.*?</pre>|<code\b.*?</code>", re.DOTALL)
_TABLE_BORDER = re.compile(r"={3,}(?: +={3,})+")
# the header of a table that has none (a simple table of two borders): Markdown's tables want one, the page does not
_EMPTY_HEADER = re.compile(r"<thead>\s*<tr>\s*(?:<th></th>\s*)+</tr>\s*</thead>\s*")

# strict mode counts the warnings of the "mkdocs" loggers
log = logging.getLogger("mkdocs.hooks.site")


def _repository_root(config: MkDocsConfig) -> Path:
    return Path(config.config_file_path).resolve().parent


def _is_relative(target: str) -> bool:
    return not (target.startswith(("#", "/", "\\")) or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target))


def _rewrite_links(markdown: str, rewrite: Callable[[str], str]) -> str:
    """Applies ``rewrite`` to the path of every relative link outside fenced code blocks (their text is code)."""

    def one(match: re.Match[str]) -> str:
        target = match.group(2)
        if not _is_relative(target):
            return match.group(0)
        path, hash_mark, anchor = target.partition("#")
        new_path = rewrite(path) if path else path
        return f"{match.group(1)}{new_path}{hash_mark}{anchor}{match.group(3) or ''})"

    lines = markdown.split("\n")
    in_fence = False
    for number, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            lines[number] = _LINK.sub(one, line)
    return "\n".join(lines)


def _outside_target(page_uri: str, path: str) -> str | None:
    """The repository path a page's link leads to when it leaves docs/, else None."""
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(page_uri), path))
    if not joined.startswith("../"):
        return None
    return joined[len("../") :]


def _readme_as_home(root: Path) -> str:
    readme = (root / "README.md").read_text(encoding="utf-8")
    return _rewrite_links(readme, lambda path: path[len("docs/") :] if path.startswith("docs/") else "../" + path)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    root = _repository_root(config)
    if files.get_file_from_path("index.md") is not None:
        raise PluginError("docs/index.md must not exist: the site's home page is README.md (docs/hooks/site.py)")
    files.append(File.generated(config, "index.md", content=_readme_as_home(root)))

    # publish each repository file a page links to; read every page once here, before any is rendered
    published: set[str] = set()
    for file in list(files.documentation_pages()):
        found: list[str] = []

        def collect(path: str, file: File = file, found: list[str] = found) -> str:
            target = _outside_target(file.src_uri, path)
            if target is not None:
                found.append(target)
            return path

        _rewrite_links(file.content_string, collect)
        for target in found:
            source = (root / target).resolve()
            if not source.is_relative_to(root):
                raise PluginError(f"{file.src_uri} links to {target}, outside the repository")
            if source.is_dir() and target not in FOLDER_PAGES:
                raise PluginError(f"{file.src_uri} links to the folder {target}: name its page in FOLDER_PAGES")
            if source.is_file() and target != "README.md" and target not in published:
                published.add(target)
                files.append(File.generated(config, SOURCE_PREFIX + target, abs_src_path=str(source)))
    return files


def _site_path(target: str) -> str:
    if target == "README.md":
        return "index.md"
    return FOLDER_PAGES.get(target, SOURCE_PREFIX + target)


def _messages(root: Path) -> str:
    """Each message's JSON Schema as a section: its type as the heading, its title, the schema itself."""
    sections = []
    for schema_file in sorted((root / SCHEMA_FOLDER).glob("*.json")):
        schema: dict[str, Any] = json.loads(schema_file.read_text(encoding="utf-8"))
        sections.append(
            f"## `{schema_file.stem}`\n\n{schema.get('title', '')}\n\n"
            f"```json\n{json.dumps(schema, indent=2, ensure_ascii=False)}\n```\n"
        )
    if not sections:
        raise PluginError(f"no message schema in {SCHEMA_FOLDER}")
    return "\n".join(sections)


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    page_uri = page.file.src_uri

    def to_site(path: str) -> str:
        target = _outside_target(page_uri, path)
        if target is None or not (_repository_root(config) / target).exists():
            return path
        return posixpath.relpath(_site_path(target), posixpath.dirname(page_uri) or ".")

    markdown = _rewrite_links(markdown, to_site)
    if page_uri == MESSAGES_PAGE:
        if MESSAGES_MARKER not in markdown:
            raise PluginError(f"{MESSAGES_PAGE} lost its marker {MESSAGES_MARKER}")
        markdown = markdown.replace(MESSAGES_MARKER, _messages(_repository_root(config)))
    return markdown


def unrendered_tables(html: str) -> list[str]:
    """The reStructuredText table borders that a page's HTML shows as text, outside code."""
    return [match.group(0) for match in _TABLE_BORDER.finditer(_CODE.sub("", html))]


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    borders = unrendered_tables(html)
    if borders:
        log.warning(
            f"{page.file.src_uri}: {len(borders)} reStructuredText table border(s) printed as text, such as "
            f"{borders[0][:40]!r}: write the table as Markdown, or as a simple table docs/hooks/rst_tables.py reads"
        )
    return _EMPTY_HEADER.sub("", html)
