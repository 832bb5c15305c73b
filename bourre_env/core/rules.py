"""The rule configuration: one frozen object, one field per house rule, and the named presets.

Every **[option]** of the rule book, ``docs/rules.md``, is a field here under the same
name; the published variants add the fields they need (``play_ante``,
``ante_exemptions``, ``ante_payer``, ``max_discard_large_table``,
``trump_card``, ``declaration``, ``entry_requirement``, ``second_pass_ante``,
``renege_multiple``). The defaults are the ``standard`` game. ``presets`` holds every
rule set of the rule book's Presets section by name. ``Rules.replace(**changes)`` adjusts a
configuration field by field and validates the result; ``Rules.from_options``
builds one from a preset name and keyword options as ``bourre_env.env(rules=...,
**options)`` receives them: ``Rules.from_options("double_ante", num_players=7)``.

Invalid values and combinations raise ``ValueError`` naming the field and the
allowed values (or the reason a combination cannot be played).
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from bourre_env.core import cards

MIN_PLAYERS = 2
MAX_PLAYERS = 8
MAX_HAND_SIZE = 6
CINCH_TRICKS = 3
TIE_VALUES = ("carry", "divide")
ILLEGAL_ACTION_VALUES = ("error", "renege")
ANTE_PAYER_VALUES = ("each", "dealer")
TRUMP_CARD_VALUES = ("dealer", "separate", "separate_dealer_may_take", "named_by_dealer")
DECLARATION_VALUES = ("with_draw", "two_rounds", "simultaneous")
ENTRY_REQUIREMENT_VALUES = ("none", "trump_or_club")
_INT_OPTIONS = (
    "num_players",
    "hand_size",
    "max_discard",
    "pot_limit",
    "deals_per_episode",
    "max_discard_large_table",
    "play_ante",
    "second_pass_ante",
    "renege_multiple",
)
_INT64_MAX = 2**63 - 1  # the compiled core keeps every option in an int64 parameter vector
LARGE_TABLE = 7
"""Tables of this many players or more use ``max_discard_large_table`` (the Wikipedia rule: "7 or 8 play")."""

# The compiled core reads an option whose values are names by a code: the index of the value in the tuple above.
TRUMP_DEALERS_CARD = TRUMP_CARD_VALUES.index("dealer")  # the dealer's last card, part of the dealer's hand
TRUMP_SEPARATE = TRUMP_CARD_VALUES.index("separate")  # an extra card after the hands, no one's
# an extra card after the hands that the dealer, playing, may take into hand
TRUMP_DEALER_MAY_TAKE = TRUMP_CARD_VALUES.index("separate_dealer_may_take")
# no card turned: the dealer names the trump suit after looking at the hand (dealer_picks_trump)
TRUMP_NAMED = TRUMP_CARD_VALUES.index("named_by_dealer")
DECLARATION_WITH_DRAW = DECLARATION_VALUES.index("with_draw")  # one decision per player: pass, or play with a discard
# a declaration round in turn (DECLARE), then the draw round of the players who play
DECLARATION_TWO_ROUNDS = DECLARATION_VALUES.index("two_rounds")
# the same, the declarations hidden from one another and revealed together
DECLARATION_SIMULTANEOUS = DECLARATION_VALUES.index("simultaneous")
ENTRY_NONE = ENTRY_REQUIREMENT_VALUES.index("none")
# four_card: "at least one trump or at least one club (a 'dirty club')"
ENTRY_TRUMP_OR_CLUB = ENTRY_REQUIREMENT_VALUES.index("trump_or_club")
CLUBS = cards.SUITS.index("C")

# The int64 parameter vector the compiled core reads (``make_params``): one entry per rule, at these offsets.
P_NUM_PLAYERS = 0
P_HAND_SIZE = 1
P_MAX_DISCARD = 2
P_MUST_TRUMP = 3
P_LEAD_HONORS = 4
P_POT_LIMIT = 5  # -1 for no limit
P_TIE_DIVIDE = 6
P_RAKE_NUM = 7
P_RAKE_DEN = 8
P_RENEGE = 9
P_DEALS = 10
P_DECK_MASK = 11  # bitmask of the card ids in the deck
P_DECK_SIZE = 12
P_CINCH_BUDGET = 13  # node budget of the budgeted reference search (tests/reference_cinch.py); the core has none
P_PLAY_ANTE = 14  # chips a player adds to the pot on declaring play
P_ANTE_EXEMPTIONS = 15  # 1: bourré and tied (carried pot) players skip the next ante
P_DEALER_ANTES = 16  # 1: the dealer pays every player's ante
P_TRUMP_CARD = 17  # TRUMP_* above: where the card turned for trump comes from and whose it is
P_DECLARATION = 18  # DECLARATION_* above: how pass or play is declared
P_ENTRY = 19  # ENTRY_* above: what a hand must hold for its player to play
P_SECOND_PASS = 20  # chips a player pays to stay at the second chance to pass after the draw; -1: no second pass
P_RENEGE_MULT = 21  # a player who reneged pays this many times the pot
NUM_PARAMS = 22


def _normalize_ranks(value: int | str | Iterable[int | str] | None) -> tuple[int, ...]:
    """Rank indices, ascending, from a count of top ranks, a notation string or rank names/indices."""
    if value is None:
        return tuple(range(cards.NUM_RANKS))
    if isinstance(value, bool):
        raise ValueError(f"ranks: expected a count of top ranks or rank names, got {value!r}")
    if isinstance(value, (int, np.integer)):
        count = int(value)
        if not 1 <= count <= cards.NUM_RANKS:
            raise ValueError(f"ranks: a count of top ranks must be in 1..13, got {count}")
        return tuple(range(cards.NUM_RANKS - count, cards.NUM_RANKS))
    items: Iterable[int | str] = value.replace(",", " ").split() if isinstance(value, str) else list(value)
    indices = set()
    for item in items:
        if isinstance(item, str):
            indices.add(cards.parse_rank(item))
        elif isinstance(item, (int, np.integer)) and 0 <= int(item) < cards.NUM_RANKS:
            indices.add(int(item))
        else:
            raise ValueError(f"ranks: {item!r} is not a rank name (2..10, J, Q, K, A) or a rank index 0..12")
    if not indices:
        raise ValueError("ranks: at least one rank is needed")
    return tuple(sorted(indices))


@dataclasses.dataclass(frozen=True)
class Rules:
    """One rule set. Field names are the option names of docs/rules.md."""

    num_players: int = 5
    """Players at the table, 2..8, seated clockwise."""
    hand_size: int = 5
    """Cards dealt to each player, and so tricks per deal, 1..6."""
    ranks: tuple[int, ...] = tuple(range(cards.NUM_RANKS))
    """Ranks in the deck, as rank indices (2=0 .. A=12).

    Accepts a count of top ranks (``6`` is A K Q J 10 9) or rank names."""
    max_discard: int | None = None
    """Most cards of the hand a player may discard; ``None`` means the whole hand (the default of 5 for
    5-card hands). A turned card that the dealer may take and leaves does not count."""
    max_discard_large_table: int | None = None
    """Most cards a player may discard when 7 or 8 play, instead of ``max_discard``; ``None``: ``max_discard``.

    The Wikipedia rules use 3 ("so as not to have to re-use them for later players")."""
    must_trump_when_cannot_win: bool = True
    """A player void in the suit led who cannot overtrump must still play a trump (``False``: any card)."""
    lead_trump_honors: bool = False
    """A player holding the A, K or Q of trumps must lead one of them."""
    pot_limit: int | None = None
    """Most chips a winner takes from the pot and a bourré player pays; ``None`` for no limit."""
    tie: str = "carry"
    """A tie for most tricks: ``"carry"`` the pot to the next deal, or ``"divide"`` it among the tied players."""
    rake: float = 0.0
    """Fraction of a pot paid out that the house keeps, rounded down to whole chips; 0 <= rake < 1. A float is read
    as the nearest fraction with a denominator of at most 10**6 (``1/3`` is a third); pass a ``Fraction`` to be
    exact."""
    illegal_action: str = "error"
    """An action outside the mask: ``"error"`` raises ``ValueError``; ``"renege"`` plays the card as a renege."""
    deals_per_episode: int = 1
    """Deals in one episode; the pot, ante exemptions and the deal carry from deal to deal."""
    play_ante: int = 0
    """Chips a player who plays adds to the pot at the moment of declaring play (``double_ante``: 1).

    Paid by every player who plays, a dealer forced to play included, and part of the pot that a
    bourré player matches and the winner takes."""
    ante_exemptions: bool = True
    """Players bourré in the previous deal, and tied players of a carried pot, skip the next ante.

    ``False``: every player antes every deal (``double_ante``; ``dealer_antes_for_all``, whose dealer
    antes for every seat)."""
    ante_payer: str = "each"
    """Who pays the ante of 1 chip per player before a deal: ``"each"`` player their own, or the
    ``"dealer"`` for every player who owes one (``dealer_antes_for_all``)."""
    trump_card: str = "dealer"
    """The card turned for trump: ``"dealer"``, the dealer's last card, part of the dealer's hand;
    ``"separate"``, one extra card turned after the hands, public and out of play (it belongs to no one);
    ``"separate_dealer_may_take"``, such a card that the dealer, playing, may take into hand: the dealer
    decides holding ``hand_size + 1`` cards and discards at least one of them (the turned card, or a card
    of the hand), drawing one card fewer than the cards of the hand discarded when keeping the turned card;
    ``"named_by_dealer"``, no card is turned: after looking at the hand the dealer names the trump suit before
    anyone decides (``dealer_picks_trump``); the dealer's cards all stay hidden, and with no turned card the
    dealer must play only when everyone else passed."""
    declaration: str = "with_draw"
    """How pass or play is declared: ``"with_draw"``, one decision per player in turn, passing or playing with a
    discard (the standard game); ``"two_rounds"``, first each player in turn declares play or pass (paying
    ``play_ante`` on declaring play), then the players who play discard and draw in turn
    (``two_round_declaration``); ``"simultaneous"``, the same two rounds, but no one sees another's declaration
    until all are made and revealed together (the players still act one at a time, in turn): ``play_ante`` is paid
    at the reveal, and if everyone passed the dealer plays (``simultaneous_declaration``)."""
    entry_requirement: str = "none"
    """What a hand must hold for its player to play: ``"none"``, or ``"trump_or_club"`` (``four_card``: "at least
    one trump or at least one club (a 'dirty club')"). Judged on the hand held when declaring play (before the
    draw); a hand that fails it may only pass, except a dealer who must play, who plays whatever the hand."""
    second_pass_ante: int | None = None
    """``None``: no second chance to pass. An integer ``k`` (``four_card``: 1): after the draw each playing player in
    turn from the dealer's left stays, paying ``k`` chips, or passes, laying the hand down (out of the deal: no
    bourré, the chips already paid stay in the pot). When one player is left, that player wins every trick
    without play and pays no stay chip."""
    renege_multiple: int = 1
    """With ``illegal_action="renege"``, a player who reneged pays this many times the pot (``four_card``: 2, "the
    penalty for a renege is twice the pot"), instead of the single pot of a bourré."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "ranks", _normalize_ranks(self.ranks))
        # numpy integers are accepted as the numbers they hold: kept as numpy scalars they would carry their width
        # into the arithmetic of the checks and the core (np.int16(5) * 2**20 overflows)
        for name in _INT_OPTIONS:
            value = getattr(self, name)
            if isinstance(value, np.integer):
                object.__setattr__(self, name, int(value))
        self._validate()

    # -- validation ---------------------------------------------------------
    def _validate(self) -> None:
        def need(ok: bool, field: str, allowed: str, got: Any) -> None:
            if not ok:
                raise ValueError(f"{field}: expected {allowed}, got {got!r}")

        def is_int(v: Any) -> bool:
            return isinstance(v, (int, np.integer)) and not isinstance(v, bool)

        need(
            is_int(self.num_players) and MIN_PLAYERS <= self.num_players <= MAX_PLAYERS,
            "num_players",
            f"an integer in {MIN_PLAYERS}..{MAX_PLAYERS}",
            self.num_players,
        )
        need(
            is_int(self.hand_size) and 1 <= self.hand_size <= MAX_HAND_SIZE,
            "hand_size",
            f"an integer in 1..{MAX_HAND_SIZE}",
            self.hand_size,
        )
        need(
            self.max_discard is None or (is_int(self.max_discard) and 0 <= self.max_discard <= self.hand_size),
            "max_discard",
            f"None or an integer in 0..hand_size ({self.hand_size})",
            self.max_discard,
        )
        need(
            isinstance(self.must_trump_when_cannot_win, bool),
            "must_trump_when_cannot_win",
            "True or False",
            self.must_trump_when_cannot_win,
        )
        need(isinstance(self.lead_trump_honors, bool), "lead_trump_honors", "True or False", self.lead_trump_honors)
        need(
            self.pot_limit is None or (is_int(self.pot_limit) and self.pot_limit >= 1),
            "pot_limit",
            "None or an integer >= 1",
            self.pot_limit,
        )
        need(self.tie in TIE_VALUES, "tie", " or ".join(repr(v) for v in TIE_VALUES), self.tie)
        need(
            isinstance(self.rake, (int, float, Fraction)) and not isinstance(self.rake, bool) and 0 <= self.rake < 1,
            "rake",
            "a number with 0 <= rake < 1",
            self.rake,
        )
        need(
            self.illegal_action in ILLEGAL_ACTION_VALUES,
            "illegal_action",
            " or ".join(repr(v) for v in ILLEGAL_ACTION_VALUES),
            self.illegal_action,
        )
        need(
            is_int(self.deals_per_episode) and self.deals_per_episode >= 1,
            "deals_per_episode",
            "an integer >= 1",
            self.deals_per_episode,
        )
        need(
            self.max_discard_large_table is None
            or (is_int(self.max_discard_large_table) and 0 <= self.max_discard_large_table <= self.hand_size),
            "max_discard_large_table",
            f"None or an integer in 0..hand_size ({self.hand_size})",
            self.max_discard_large_table,
        )
        need(is_int(self.play_ante) and self.play_ante >= 0, "play_ante", "an integer >= 0", self.play_ante)
        need(isinstance(self.ante_exemptions, bool), "ante_exemptions", "True or False", self.ante_exemptions)
        need(
            self.ante_payer in ANTE_PAYER_VALUES,
            "ante_payer",
            " or ".join(repr(v) for v in ANTE_PAYER_VALUES),
            self.ante_payer,
        )
        need(
            self.trump_card in TRUMP_CARD_VALUES,
            "trump_card",
            " or ".join(repr(v) for v in TRUMP_CARD_VALUES),
            self.trump_card,
        )
        need(
            self.declaration in DECLARATION_VALUES,
            "declaration",
            " or ".join(repr(v) for v in DECLARATION_VALUES),
            self.declaration,
        )
        need(
            self.entry_requirement in ENTRY_REQUIREMENT_VALUES,
            "entry_requirement",
            " or ".join(repr(v) for v in ENTRY_REQUIREMENT_VALUES),
            self.entry_requirement,
        )
        need(
            self.second_pass_ante is None or (is_int(self.second_pass_ante) and self.second_pass_ante >= 0),
            "second_pass_ante",
            "None or an integer >= 0",
            self.second_pass_ante,
        )
        need(
            is_int(self.renege_multiple) and self.renege_multiple >= 1,
            "renege_multiple",
            "an integer >= 1",
            self.renege_multiple,
        )
        for name in _INT_OPTIONS:
            value = getattr(self, name)
            need(value is None or value <= _INT64_MAX, name, f"at most {_INT64_MAX} (2**63 - 1)", value)
        # A dealer who may take the turned card holds one card more than a hand while deciding (action positions).
        need(
            self.trump_card != "separate_dealer_may_take" or self.hand_size < MAX_HAND_SIZE,
            "trump_card",
            f"'dealer' or 'separate' with hand_size {self.hand_size}: 'separate_dealer_may_take' gives the dealer "
            f"hand_size + 1 cards, at most {MAX_HAND_SIZE}",
            self.trump_card,
        )
        # Serving the last player to draw needs cards beyond every hand in play (see docs/rules.md, Small decks);
        # a separate trump card is one more card out of the stock.
        separate = int(self.trump_card in ("separate", "separate_dealer_may_take"))
        needed = self.num_players * self.hand_size + separate + self.discard_limit
        need(
            self.deck_size >= needed,
            "ranks",
            f"a deck of at least num_players * hand_size + {'1 (the separate trump card) + ' if separate else ''}"
            f"max_discard = {needed} cards ({-(-needed // cards.NUM_SUITS)} ranks or more) for "
            f"{self.num_players} players with {self.hand_size}-card hands",
            f"{len(self.ranks)} ranks = {self.deck_size} cards",
        )

    # -- derived values -----------------------------------------------------
    @property
    def deck_size(self) -> int:
        return len(self.ranks) * cards.NUM_SUITS

    @property
    def discard_limit(self) -> int:
        """Most cards one player may discard at this table: ``max_discard`` (``None``: the hand size), or
        ``max_discard_large_table`` when set and ``LARGE_TABLE`` or more play."""
        if self.max_discard_large_table is not None and self.num_players >= LARGE_TABLE:
            return int(self.max_discard_large_table)
        return self.hand_size if self.max_discard is None else int(self.max_discard)

    @property
    def rake_fraction(self) -> Fraction:
        # a float is read as the simplest fraction within 10**-6 of it: 1/3 is a third, not 3333333333333333/10**16,
        # whose numerator would overflow the core's stake * numerator long before the pot bound
        if isinstance(self.rake, float):
            return Fraction(str(self.rake)).limit_denominator(10**6)
        return Fraction(self.rake)

    def deck_cards(self) -> list[int]:
        """Card ids of the deck in a fixed order (by suit, then rank)."""
        return [cards.make(r, s) for s in range(cards.NUM_SUITS) for r in self.ranks]

    def replace(self, **changes: Any) -> Rules:
        """A copy with some fields changed, validated."""
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise ValueError(f"unknown rule option(s) {sorted(unknown)}; options are {option_names()}")
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_options(cls, rules: Rules | str | None = None, **options: Any) -> Rules:
        """A configuration from a base (a ``Rules``, a preset name or ``None`` for standard) and field options."""
        if rules is None:
            base = cls()
        elif isinstance(rules, Rules):
            base = rules
        elif isinstance(rules, str) and rules in presets:
            base = presets[rules]
        else:
            raise ValueError(f"rules: expected a Rules object or one of {sorted(presets)}, got {rules!r}")
        return base.replace(**options) if options else base

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def changes_from(self, base: Rules) -> dict[str, Any]:
        """The fields whose value differs from ``base``, by name, in field order."""
        return {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if getattr(self, f.name) != getattr(base, f.name)
        }

    def params(self) -> np.ndarray:
        """The configuration as the int64 parameter vector the compiled core reads (``make_params``)."""
        return make_params(self)


def make_params(rules: Rules) -> np.ndarray:
    """The int64 parameter vector of a rule configuration."""
    p = np.zeros(NUM_PARAMS, dtype=np.int64)
    p[P_NUM_PLAYERS] = rules.num_players
    p[P_HAND_SIZE] = rules.hand_size
    p[P_MAX_DISCARD] = rules.discard_limit
    p[P_MUST_TRUMP] = int(rules.must_trump_when_cannot_win)
    p[P_LEAD_HONORS] = int(rules.lead_trump_honors)
    p[P_POT_LIMIT] = -1 if rules.pot_limit is None else rules.pot_limit
    p[P_TIE_DIVIDE] = int(rules.tie == "divide")
    rake = rules.rake_fraction
    p[P_RAKE_NUM] = rake.numerator
    p[P_RAKE_DEN] = rake.denominator
    p[P_RENEGE] = int(rules.illegal_action == "renege")
    p[P_DEALS] = rules.deals_per_episode
    mask = 0
    for c in rules.deck_cards():
        mask |= 1 << c
    p[P_DECK_MASK] = mask
    p[P_DECK_SIZE] = rules.deck_size
    p[P_CINCH_BUDGET] = 100_000
    p[P_PLAY_ANTE] = rules.play_ante
    p[P_ANTE_EXEMPTIONS] = int(rules.ante_exemptions)
    p[P_DEALER_ANTES] = int(rules.ante_payer == "dealer")
    p[P_TRUMP_CARD] = TRUMP_CARD_VALUES.index(rules.trump_card)
    p[P_DECLARATION] = DECLARATION_VALUES.index(rules.declaration)
    p[P_ENTRY] = ENTRY_REQUIREMENT_VALUES.index(rules.entry_requirement)
    p[P_SECOND_PASS] = -1 if rules.second_pass_ante is None else rules.second_pass_ante
    p[P_RENEGE_MULT] = rules.renege_multiple
    return p


def option_names() -> list[str]:
    return [f.name for f in dataclasses.fields(Rules)]


presets: Mapping[str, Rules] = types.MappingProxyType(
    {
        "standard": Rules(),
        # Pagat, "Double Ante": a second chip from each player who plays; "it is normal to require an
        # initial ante from all players, including those who paid for a bourré or were involved in a split pot".
        "double_ante": Rules(play_ante=1, ante_exemptions=False),
        # The Wikipedia article, Variations: "the dealer of each hand would ante five dollars for a five-person,
        # one-dollar-ante game": one chip per seat, every deal, so the standard exemptions have no ante to waive.
        "dealer_antes_for_all": Rules(ante_payer="dealer", ante_exemptions=False),
        # The Wikipedia article, Rules: "Only three cards may be discarded when there are seven players" (read as 7 or
        # 8, the tables where a fourth discard would exhaust the stock), and "play to win": a player void in the suit
        # led "must play a trump and 'play to win'", but "if you are unable to 'play to win,' it is not necessary to
        # play a trump card that will not be able to win the trick". The article calls play to win the general
        # consensus; the groups that force the losing trump anyway are the standard game.
        "wikipedia": Rules(max_discard_large_table=3, must_trump_when_cannot_win=False),
        # Pagat, "Separate Trump Card", first form: "The turned up trump belongs to no one. It indicates
        # the trump suit but cannot be taken or played by any player."
        "separate_trump_card": Rules(trump_card="separate"),
        # The second form: "The turned up trump can be taken by the dealer if he or she decides to play. The dealer
        # effectively has six cards; if for example the dealer discards four cards and elects to use the turned up
        # trump, three replacement cards will be dealt to make up the dealer's five-card hand."
        "separate_trump_card_dealer_may_take": Rules(trump_card="separate_dealer_may_take"),
        # Pagat, in its "Double Ante" section: "Some play that the decisions whether or not to play and how
        # many cards to draw are separated into two separate rounds. First each player in turn declares either 'play'
        # (paying a second ante of one chip) or 'pass'." A second ante presupposes the double-ante game, so its
        # initial ante is from everyone, every deal, as there ("it is normal to require an initial ante from all").
        "two_round_declaration": Rules(play_ante=1, ante_exemptions=False, declaration="two_rounds"),
        # Pagat, "Simultaneous Declaration": "all players decide independently whether they will play or
        # pass. Those who want to play hold a chip in their closed fist; those who pass hold an empty fist. All reveal
        # their decisions simultaneously and then those who decided to play discard in rotation as usual." The chip is
        # a token, as in the hi-lo poker declarations the text likens it to: the standard antes, no second chip.
        "simultaneous_declaration": Rules(declaration="simultaneous"),
        # Pagat, "Four card Bourré" (Indiana): "four cards dealt to each player, with a separate card that
        # belongs to no one indicating the trump suit. Players must have at least one trump or at least one club (a
        # 'dirty club') to play, which costs one chip. After players have decided whether to stay, up to 3 cards can
        # be discarded, but not all four. After the draw, players have another chance to pass; those who want to play
        # must pay an additional chip. [...] The penalty for a renege is twice the pot." Deciding to stay comes before
        # the discards, so the declaration is a round of its own, where playing costs the chip (play_ante); the
        # ante before the deal and the payments are the standard ones ("As usual ...").
        "four_card": Rules(
            hand_size=4,
            max_discard=3,
            trump_card="separate",
            declaration="two_rounds",
            play_ante=1,
            entry_requirement="trump_or_club",
            second_pass_ante=1,
            renege_multiple=2,
        ),
        # The Action Network's article on the game, the "NBA version of the game, which permits the dealer to pick the
        # trump suit after looking at his first five-card hand. After the trump suit has been established, players have
        # the option to remain in the game or to fold." No card is turned, so the dealer's cards all stay hidden.
        "dealer_picks_trump": Rules(trump_card="named_by_dealer"),
    }
)
"""The named rule sets of docs/rules.md (its Presets section), each a ``Rules`` to adjust field by field."""


@dataclasses.dataclass(frozen=True)
class PresetDescription:
    """How a preset is described wherever the documentation lists it (README, docs/rules.md), written once here."""

    source: str
    """Where the rule set is published."""
    summary: str
    """What it changes from ``standard``, in one line."""


preset_descriptions: Mapping[str, PresetDescription] = types.MappingProxyType(
    {
        "standard": PresetDescription("the Louisiana rules published on pagat, after Nickens' book", "nothing"),
        "double_ante": PresetDescription(
            'pagat, "Double Ante" (also among the Wikipedia article\'s variations)',
            "each player who plays adds a second chip; everyone antes every deal",
        ),
        "dealer_antes_for_all": PresetDescription(
            "the Wikipedia article, Variations", "the dealer pays 1 chip per seat before every deal"
        ),
        "wikipedia": PresetDescription(
            "the Wikipedia article, Rules",
            'at most 3 discards with 7 or 8 players; "play to win": a void player whose trumps cannot win the trick '
            "may play any card",
        ),
        "separate_trump_card": PresetDescription(
            'pagat, "Separate Trump Card", first form',
            "an extra card turned for trump after the hands, no one's, never played",
        ),
        "separate_trump_card_dealer_may_take": PresetDescription(
            'pagat, "Separate Trump Card", second form',
            "the same card, which the dealer may take as a sixth card, discarding at least one of the six",
        ),
        "two_round_declaration": PresetDescription(
            'pagat, within "Double Ante"', "the double-ante game with play or pass declared in a round before the draw"
        ),
        "simultaneous_declaration": PresetDescription(
            'pagat, "Simultaneous Declaration"', "the same declaration round, kept secret until everyone has declared"
        ),
        "four_card": PresetDescription(
            'pagat, "Four card Bourré": the Indiana game reported by Victoria Diemer',
            "4 cards, a separate trump card, a trump or a club needed to play, up to 3 discards, a paid second chance "
            "to pass, a renege costs twice the pot",
        ),
        "dealer_picks_trump": PresetDescription(
            'the "NBA version" described in The Action Network\'s article on the game',
            "no card turned: the dealer names trump after looking at the hand",
        ),
    }
)
"""Each preset's source and one-line summary; ``tests/test_rules_doc.py`` holds the documents' tables to them."""
