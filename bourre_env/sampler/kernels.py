"""The world sampler's compiled kernels: exact uniform assignment of card types to bins, and the replay.

Part of the world sampler (``bourre_env.sampler`` explains the method).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bourre_env import core
from bourre_env.core import MAX_HAND_SIZE, MAX_PLAYERS, NUM_CARDS
from bourre_env.sampler.plan import _FACTORIALS, EV_ACTION, EV_HIDDEN


# ---------------------------------------------------------------------------------------------- kernels
@njit(cache=True)
def _uniform(rng: np.ndarray) -> float:
    return (core.splitmix64(rng) >> 10) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def _below(rng: np.ndarray, k: int) -> int:
    return core.splitmix64(rng) % k


@njit(cache=True)
def _shuffle(a: np.ndarray, lo: int, hi: int, rng: np.ndarray) -> None:
    for i in range(hi - 1, lo, -1):
        j = lo + _below(rng, i - lo + 1)
        x = a[i]
        a[i] = a[j]
        a[j] = x


@njit(cache=True)
def _walk(
    mode: int,
    key: int,
    t: int,
    counts: np.ndarray,
    caps: np.ndarray,
    allowed: np.ndarray,
    stride: np.ndarray,
    remaining: np.ndarray,
    later: np.ndarray,
    next_keys: np.ndarray,
    next_f: np.ndarray,
    u: float,
    buf: np.ndarray,
    split: np.ndarray,
) -> tuple[float, int]:
    """Visit every split of type ``t``'s cards among the groups that fits the capacities left (``key``).

    ``key`` holds the capacities left in every group but the last, in mixed radix (``stride``); the last
    group's is implied by the cards left. A split ``x`` weighs ``1 / prod(x_g!)`` (the ways to choose which
    cards go where, up to a constant per type). ``mode`` 0 writes the child keys into ``buf`` (up to its size;
    the number of splits is returned), 1 returns the weighted sum of ``next_f`` over the children (found in
    the sorted ``next_keys``), 2 picks the split at which the running weight passes ``u`` into ``split[t]``.
    Only splits that can still be completed are visited: each group's share is bounded below by what the
    later groups cannot absorb, and by the room the later types cannot fill there (``later[t, g]``: the cards
    of types after ``t`` that group ``g`` allows).
    """
    ng = caps.shape[0]
    nt = counts[t]
    digits = np.zeros(ng, dtype=np.int64)
    dsum = 0
    for g in range(ng - 1):
        digits[g] = (key // stride[g]) % (caps[g] + 1)
        dsum += digits[g]
    rem_last = remaining[t] - dsum
    if rem_last < 0:
        return 0.0, 0
    last_room = rem_last if allowed[t, ng - 1] == 1 else 0
    # the least each group must take now, since the later types cannot fill it
    low = np.zeros(ng, dtype=np.int64)
    for g in range(ng):
        room = digits[g] if g < ng - 1 else rem_last
        short = room - later[t, g]
        if short > 0:
            if allowed[t, g] == 0:
                return 0.0, 0
            low[g] = short
    after = np.zeros(ng, dtype=np.int64)  # what groups g+1.. can take
    need = np.zeros(ng, dtype=np.int64)  # what groups g+1.. must take
    acc = last_room
    acc_need = low[ng - 1]
    for g in range(ng - 2, -1, -1):
        after[g] = acc
        need[g] = acc_need
        if allowed[t, g] == 1:
            acc += digits[g]
        acc_need += low[g]
    if acc < nt or acc_need > nt:
        return 0.0, 0
    total = 0.0
    leaves = 0
    x = np.zeros(ng, dtype=np.int64)
    r = np.zeros(ng + 1, dtype=np.int64)
    fact = _FACTORIALS
    if ng == 1:
        if nt > last_room or nt < low[0]:
            return 0.0, 0
        g = -1
        leaf = True
    else:
        g = 0
        r[0] = nt
        x[0] = max(low[0], nt - after[0]) - 1
        leaf = False
    while True:
        if not leaf:
            if g < 0:
                break
            x[g] += 1
            top = min(r[g] - need[g], digits[g]) if allowed[t, g] == 1 else 0
            if x[g] > top:
                g -= 1
                continue
            if g < ng - 2:
                r[g + 1] = r[g] - x[g]
                g += 1
                x[g] = max(low[g], r[g] - after[g]) - 1
                continue
        # a complete split: the last group takes what is left
        x_last = (r[g] - x[g]) if g >= 0 else nt
        child = key
        w = 1.0 / fact[x_last]
        for j in range(ng - 1):
            child -= x[j] * stride[j]
            w /= fact[x[j]]
        leaves += 1
        if mode == 0:
            if leaves <= buf.shape[0]:
                buf[leaves - 1] = child
        elif mode == 1:
            i = np.searchsorted(next_keys, child)
            if i < next_keys.shape[0] and next_keys[i] == child:
                total += w * next_f[i]
        else:
            i = np.searchsorted(next_keys, child)
            if i < next_keys.shape[0] and next_keys[i] == child and next_f[i] > 0.0:
                v = w * next_f[i]
                for j in range(ng - 1):
                    split[t, j] = x[j]
                split[t, ng - 1] = x_last
                if u < v:
                    return v, leaves
                u -= v
        if g < 0:
            break
        leaf = False
    return total, leaves


@njit(cache=True)
def _totals(counts: np.ndarray, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cards of types ``t..`` (``remaining[t]``), and cards of types after ``t`` that group ``g`` allows
    (``later[t, g]``)."""
    ntypes, ng = allowed.shape
    remaining = np.zeros(ntypes + 1, dtype=np.int64)
    later = np.zeros((ntypes, ng), dtype=np.int64)
    for t in range(ntypes - 1, -1, -1):
        remaining[t] = remaining[t + 1] + counts[t]
        if t + 1 < ntypes:
            for g in range(ng):
                later[t, g] = later[t + 1, g] + counts[t + 1] * allowed[t + 1, g]
    return remaining, later


@njit(cache=True)
def _count_levels(
    counts: np.ndarray, caps: np.ndarray, allowed: np.ndarray, limit: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]:
    """The counting programme over the reachable capacity states, type by type.

    Level ``t`` lists (sorted) the capacity keys reachable after placing types ``0..t-1``; ``f`` at a key of
    level ``t`` is the weighted number of ways to place the types ``t..`` from there. Returns the keys, the
    weights, the level starts, the mixed-radix strides and whether the work stayed within ``limit``.
    """
    ntypes = counts.shape[0]
    ng = caps.shape[0]
    stride = np.ones(max(ng, 1), dtype=np.int64)
    for g in range(1, ng):
        stride[g] = stride[g - 1] * (caps[g - 1] + 1)
    full = 0
    for g in range(ng - 1):
        full += caps[g] * stride[g]
    remaining, later = _totals(counts, allowed)
    empty_f = np.zeros(1, dtype=np.float64)
    starts = np.zeros(ntypes + 2, dtype=np.int64)
    keys = np.zeros(1, dtype=np.int64)
    keys[0] = full
    starts[1] = 1
    work = 0
    buf = np.zeros(64, dtype=np.int64)
    for t in range(ntypes):
        level = keys[starts[t] : starts[t + 1]]
        children = np.zeros(64, dtype=np.int64)
        m = 0
        for key in level:
            while True:
                _, k = _walk(
                    0,
                    key,
                    t,
                    counts,
                    caps,
                    allowed,
                    stride,
                    remaining,
                    later,
                    keys,
                    empty_f,
                    0.0,
                    buf,
                    np.zeros((1, 1), dtype=np.int64),
                )
                if k <= buf.shape[0]:
                    break
                buf = np.zeros(2 * k, dtype=np.int64)
            work += k
            if work > limit:
                return keys, empty_f, starts, stride, False
            while m + k > children.shape[0]:
                grown = np.zeros(2 * children.shape[0], dtype=np.int64)
                grown[:m] = children[:m]
                children = grown
            children[m : m + k] = buf[:k]
            m += k
        nxt = np.unique(children[:m])
        grown = np.zeros(starts[t + 1] + nxt.shape[0], dtype=np.int64)
        grown[: starts[t + 1]] = keys[: starts[t + 1]]
        grown[starts[t + 1] :] = nxt
        keys = grown
        starts[t + 2] = keys.shape[0]
    f = np.zeros(keys.shape[0], dtype=np.float64)
    for i in range(starts[ntypes], starts[ntypes + 1]):
        f[i] = 1.0 if keys[i] == 0 else 0.0
    for t in range(ntypes - 1, -1, -1):
        nk = keys[starts[t + 1] : starts[t + 2]]
        nf = f[starts[t + 1] : starts[t + 2]]
        for i in range(starts[t], starts[t + 1]):
            f[i], _ = _walk(
                1,
                keys[i],
                t,
                counts,
                caps,
                allowed,
                stride,
                remaining,
                later,
                nk,
                nf,
                0.0,
                buf,
                np.zeros((1, 1), dtype=np.int64),
            )
    return keys, f, starts, stride, True


@njit(cache=True)
def _dp_assign(
    counts: np.ndarray,
    caps: np.ndarray,
    allowed: np.ndarray,
    keys: np.ndarray,
    f: np.ndarray,
    starts: np.ndarray,
    stride: np.ndarray,
    split: np.ndarray,
    rng: np.ndarray,
) -> bool:
    """Draw how many cards of each type go to each group (``split[t, g]``), exactly in proportion to the
    number of card assignments; False when there is none."""
    ntypes = counts.shape[0]
    if f[0] <= 0.0:
        return False
    remaining, later = _totals(counts, allowed)
    ng = caps.shape[0]
    key = keys[0]
    total = f[0]
    buf = np.zeros(1, dtype=np.int64)
    for t in range(ntypes):
        nk = keys[starts[t + 1] : starts[t + 2]]
        nf = f[starts[t + 1] : starts[t + 2]]
        _walk(2, key, t, counts, caps, allowed, stride, remaining, later, nk, nf, _uniform(rng) * total, buf, split)
        for j in range(ng - 1):
            key -= split[t, j] * stride[j]
        i = np.searchsorted(nk, key)
        total = nf[i]
    return True


@njit(cache=True)
def _rejection_assign(
    counts: np.ndarray, caps: np.ndarray, allowed: np.ndarray, below: np.ndarray, split: np.ndarray, rng: np.ndarray
) -> bool:
    """Exact rejection sampling of ``split[t, g]``, for tables too large to count.

    Cards are placed one at a time, the types in order (most constrained first): each takes a free place
    chosen uniformly among those its type allows. A complete placement has probability ``prod 1 / f_i``
    (``f_i``: the free places open to the ``i``-th card), so it is kept with probability ``prod f_i / U_i``,
    where ``U_i`` bounds ``f_i`` for every placement: the places the type allows less the earlier cards that
    must have taken one of them (those of types allowed only there, ``below[t, u]``, or those the places
    outside cannot hold), less the type's own earlier cards. Every complete placement is then kept with
    probability ``1 / prod U_i``: uniform.
    """
    ntypes = counts.shape[0]
    ng = caps.shape[0]
    free = caps.copy()
    keep = 1.0
    for t in range(ntypes):
        for g in range(ng):
            split[t, g] = 0
    placed = 0
    for t in range(ntypes):
        places = 0
        outside = 0
        for g in range(ng):
            if allowed[t, g] == 1:
                places += caps[g]
            else:
                outside += caps[g]
        # earlier cards that must sit among this type's places: those of types allowed nowhere else, and every
        # card beyond what the places outside can hold
        inside = 0
        for u in range(t):
            if below[t, u] == 1:
                inside += counts[u]
        inside = max(inside, placed - outside)
        for i in range(counts[t]):
            f = 0
            for g in range(ng):
                if allowed[t, g] == 1:
                    f += free[g]
            if f == 0:
                return False
            keep *= f / (places - inside - i)
            k = _below(rng, f)
            for g in range(ng):
                if allowed[t, g] == 1:
                    if k < free[g]:
                        free[g] -= 1
                        split[t, g] += 1
                        break
                    k -= free[g]
        placed += counts[t]
    return _uniform(rng) < keep


@njit(cache=True)
def _order_pile(s: np.ndarray, p: np.ndarray, desired: np.ndarray) -> None:
    """Permute the pile so that the core's reshuffle, with the state's seed, deals ``desired`` in order.

    The permutation is read off the core's own shuffle: a scratch copy whose pile holds positions runs it.
    """
    k = s[core.S_PILE_LEN]
    scratch = s.copy()
    for i in range(k):
        scratch[core.S_PILE + i] = i
    scratch[core.S_STOCK_POS] = scratch[core.S_STOCK_LEN]
    core.draw_card(scratch)
    for i in range(k):
        s[core.S_PILE + scratch[core.S_STOCK + i]] = desired[i]


# Kept whole, over the line limit: split into its steps (pinned cards, groups, reshuffled cards, deck, replay) as
# separate kernels it drew about 28% fewer worlds per second (75k against 106k worlds/s, 5 players, measured)
@njit(cache=True)
def _sample_kernel(
    p: np.ndarray,
    n: int,
    h: int,
    dealer: int,
    deck_size: int,
    dealt: int,
    face: int,
    face_last_of_dealer: bool,
    face_separate: bool,
    face_dead_by_dealer: bool,
    bin_size: np.ndarray,
    bin_off: np.ndarray,
    pin_cards: np.ndarray,
    pin_card_start: np.ndarray,
    pin_bins: np.ndarray,
    pin_bin_start: np.ndarray,
    type_cards: np.ndarray,
    type_start: np.ndarray,
    caps: np.ndarray,
    allowed: np.ndarray,
    sub_groups: np.ndarray,
    sub_start: np.ndarray,
    group_caps: np.ndarray,
    group_bins: np.ndarray,
    group_start: np.ndarray,
    forced: np.ndarray,
    forced_start: np.ndarray,
    use_dp: bool,
    keys: np.ndarray,
    weights: np.ndarray,
    starts: np.ndarray,
    stride: np.ndarray,
    below: np.ndarray,
    stage_final: np.ndarray,
    stage_final_start: np.ndarray,
    pf_bins: np.ndarray,
    pf_start: np.ndarray,
    card_pf_bin: np.ndarray,
    order_bins: np.ndarray,
    order_start: np.ndarray,
    init_bins: np.ndarray,
    init_start: np.ndarray,
    disc_bin: np.ndarray,
    ev_kind: np.ndarray,
    ev_seat: np.ndarray,
    ev_arg: np.ndarray,
    pot: int,
    deal_no: int,
    count: int,
    max_attempts: int,
    rng: np.ndarray,
    out: np.ndarray,
    decks: np.ndarray,
    seeds: np.ndarray,
    actions: np.ndarray,
    orders: np.ndarray,
    snap_events: np.ndarray,
    snaps: np.ndarray,
    until: int,
    discards: np.ndarray,
) -> tuple[int, int, int]:
    """Draw ``count`` consistent worlds into ``out``; returns (worlds drawn, proposals made, proposals the
    replay rejected). With ``until >= 0`` the replay stops before event ``until``."""
    ntypes = type_start.shape[0] - 1
    ng = caps.shape[0]
    nbins = bin_size.shape[0]
    nstages = order_start.shape[0] - 1
    counts = np.zeros(max(ntypes, 1), dtype=np.int64)
    for t in range(ntypes):
        counts[t] = type_start[t + 1] - type_start[t]
    split = np.zeros((max(ntypes, 1), max(ng, 1)), dtype=np.int64)
    content = np.zeros(bin_off[nbins], dtype=np.int64)
    fill = np.zeros(nbins, dtype=np.int64)
    tcards = type_cards.copy()
    gcards = np.zeros(NUM_CARDS, dtype=np.int64)
    hand_pool = np.zeros(NUM_CARDS, dtype=np.int64)
    places = np.zeros(NUM_CARDS + 1, dtype=np.int64)
    gpos = np.zeros(max(ng, 1) + 1, dtype=np.int64)
    hand_cards = np.zeros(MAX_HAND_SIZE + 1, dtype=np.int64)
    deck = np.zeros(deck_size, dtype=np.int64)
    stage_cards = np.zeros(NUM_CARDS, dtype=np.int64)
    desired = np.zeros(NUM_CARDS, dtype=np.int64)
    order_len = np.zeros(max(nstages, 1), dtype=np.int64)
    disc_mask = np.zeros(MAX_PLAYERS, dtype=np.int64)
    s = np.zeros(core.STATE_SIZE, dtype=np.int64)
    x = np.zeros(core.SCRATCH_SIZE, dtype=np.int64)  # the cinch memo of the world being replayed
    made = 0
    tries = 0
    refused = 0
    while made < count and tries < max_attempts:
        tries += 1
        fill[:] = 0
        # the observer's cards, its discards and the turned card, each spread at random over the free places of
        # the bins that hold them
        for j in range(pin_card_start.shape[0] - 1):
            lo = pin_card_start[j]
            hi = pin_card_start[j + 1]
            m = 0
            for bi in range(pin_bin_start[j], pin_bin_start[j + 1]):
                b = pin_bins[bi]
                for _ in range(bin_size[b] - fill[b]):
                    places[m] = b
                    m += 1
            _shuffle(places, 0, m, rng)
            for k in range(hi - lo):
                b = places[k]
                content[bin_off[b] + fill[b]] = pin_cards[lo + k]
                fill[b] += 1
        # the other cards: how many of each type go to each group, then which ones, then which bin
        if ntypes > 0:
            ok = (
                _dp_assign(counts, caps, allowed, keys, weights, starts, stride, split, rng)
                if use_dp
                else _rejection_assign(counts, caps, allowed, below, split, rng)
            )
            if not ok:
                continue
        # each counting group's free cards, shuffled, shared among its groups; each group adds its forced cards
        gpos[0] = 0
        for g in range(ng):
            gpos[g + 1] = gpos[g]
            for t in range(ntypes):
                gpos[g + 1] += split[t, g]
        for t in range(ntypes):
            _shuffle(tcards, type_start[t], type_start[t + 1], rng)
        cursor = gpos[:ng].copy()
        for t in range(ntypes):
            k = type_start[t]
            for g in range(ng):
                for _ in range(split[t, g]):
                    gcards[cursor[g]] = tcards[k]
                    cursor[g] += 1
                    k += 1
        for g in range(ng):
            _shuffle(gcards, gpos[g], gpos[g + 1], rng)
            k = gpos[g]
            for si in range(sub_start[g], sub_start[g + 1]):
                sg = sub_groups[si]
                m = 0
                for i in range(forced_start[sg], forced_start[sg + 1]):
                    hand_pool[m] = forced[i]
                    m += 1
                for _ in range(group_caps[sg]):
                    hand_pool[m] = gcards[k]
                    m += 1
                    k += 1
                _shuffle(hand_pool, 0, m, rng)
                m = 0
                for bi in range(group_start[sg], group_start[sg + 1]):
                    b = group_bins[bi]
                    for _ in range(bin_size[b]):
                        content[bin_off[b] + fill[b]] = hand_pool[m]
                        fill[b] += 1
                        m += 1
        # reshuffled cards back where they lay before the reshuffle: pinned ones first, the rest at random
        for r in range(pf_start.shape[0] - 1):
            m = 0
            for bi in range(stage_final_start[r], stage_final_start[r + 1]):
                b = stage_final[bi]
                for i in range(bin_size[b]):
                    c = content[bin_off[b] + i]
                    if card_pf_bin[c] >= 0:
                        pb = card_pf_bin[c]
                        content[bin_off[pb] + fill[pb]] = c
                        fill[pb] += 1
                    else:
                        stage_cards[m] = c
                        m += 1
            _shuffle(stage_cards, 0, m, rng)
            k = 0
            for bi in range(pf_start[r], pf_start[r + 1]):
                b = pf_bins[bi]
                while fill[b] < bin_size[b]:
                    content[bin_off[b] + fill[b]] = stage_cards[k]
                    fill[b] += 1
                    k += 1
        # the deck: each seat's dealt hand in dealing order (the turned card last for the dealer), then the stock
        for q in range(n):
            m = 0
            for bi in range(init_start[q], init_start[q + 1]):
                b = init_bins[bi]
                for i in range(bin_size[b]):
                    hand_cards[m] = content[bin_off[b] + i]
                    m += 1
            _shuffle(hand_cards, 0, m, rng)
            if face_last_of_dealer and q == dealer:
                hand_cards[m] = face
                m += 1
            k = (q - dealer - 1) % n
            for j in range(h):
                deck[k + j * n] = hand_cards[j]
        pos = n * h
        if face_separate:
            deck[pos] = face
            pos += 1
        ol = 0
        for r in range(nstages):
            order_len[r] = 0
            for bi in range(order_start[r], order_start[r + 1]):
                b = order_bins[bi]
                lo = bin_off[b]
                _shuffle(content, lo, lo + bin_size[b], rng)
                for i in range(bin_size[b]):
                    if r == 0:
                        deck[pos] = content[lo + i]
                        pos += 1
                    else:
                        orders[made, ol] = content[lo + i]
                        ol += 1
                        order_len[r] += 1
        for q in range(n):
            disc_mask[q] = 0
            b = disc_bin[q]
            if b >= 0:
                for i in range(bin_size[b]):
                    disc_mask[q] |= np.int64(1) << content[bin_off[b] + i]
        if face_dead_by_dealer:
            disc_mask[dealer] |= np.int64(1) << face
        for q in range(n):
            discards[made, q] = disc_mask[q]
        # replay the public record through the rules
        seed = core.splitmix64(rng)
        core.start_episode(s, p, deck, dealer, 0, seed)
        x[:] = 0
        s[core.S_DEAL_NO] = deal_no
        good = True
        ol = 0
        js = 0
        for e in range(ev_kind.shape[0]):
            if e == until:
                break
            if js < snap_events.shape[0] and snap_events[js] == e:
                snaps[made, js, :] = s
                js += 1
            q = ev_seat[e]
            kind = ev_kind[e]
            if kind == EV_ACTION:
                a = ev_arg[e]
            elif kind == EV_HIDDEN:
                a = core.PASS if _below(rng, 2) == 0 else core.DECLARE_PLAY
            else:
                hand = s[core.S_HAND + q]
                a = core.STAY_BASE + core.cards_to_positions(hand, disc_mask[q])
                surplus = core.surplus_position(s, p, q)
                draws = core.popcount(disc_mask[q]) - (1 if surplus != 0 else 0)
                if s[core.S_STOCK_POS] + draws > s[core.S_STOCK_LEN]:
                    r = s[core.S_RESHUFFLES] + 1
                    k = s[core.S_PILE_LEN]
                    if r >= nstages or k != order_len[r]:
                        good = False
                        break
                    for i in range(k):
                        desired[i] = orders[made, ol + i]
                    ol += k
                    _order_pile(s, p, desired)
            actions[made, e] = a
            if not core.step_with(s, p, a, x):
                good = False
                break
        if not good:
            refused += 1
            continue
        s[core.S_POT] = pot
        out[made, :] = s
        decks[made, :] = deck
        seeds[made] = seed
        made += 1
    return made, tries, refused
