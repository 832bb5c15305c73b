"""``bourre_env.words.plural``: counts said with the word that agrees with them."""

from __future__ import annotations

from bourre_env.words import plural


def test_one_takes_the_singular_and_every_other_count_the_plural() -> None:
    assert plural(1, "function") == "1 function"
    assert plural(0, "function") == "0 functions"
    assert plural(2, "function") == "2 functions"


def test_an_irregular_plural_and_the_verb_that_agrees() -> None:
    assert plural(3, "process", "processes") == "3 processes"
    assert plural(1, "connection is", "connections are") == "1 connection is"
    assert plural(5, "connection is", "connections are") == "5 connections are"


def test_thousands_are_grouped() -> None:
    assert plural(1520, "token") == "1,520 tokens"
