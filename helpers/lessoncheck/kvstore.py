"""The laws and checks of :mod:`helpers.kvstore` (notebook 07): where the ``device`` store keeps each
key's merge buffer, largest key first on the least loaded device. ``tests/test_kvstore.py`` calls the
same laws.
"""
import numpy as np

from helpers.lessoncheck.machinery import Broken, Law, _n, _refuses, lesson

__all__ = ['check_merge_buffer_owners', 'law_merge_owners_greedy', 'law_merge_owners_balanced', 'MERGE_CASES',
           'BALANCE_CASES', 'law_merge_owners_refuses_bad_input']


def _greedy_owners(sizes, k):
    """Notebook 07's rule, step by step: ``[(key, loads before it is placed, device)]``, largest key first
    (among equal sizes the lower key first), each on the least loaded device (ties: the lowest)."""
    load, placed = [0] * k, []
    for key in sorted(range(len(sizes)), key=lambda i: (-sizes[i], i)):
        device = min(range(k), key=lambda d: (load[d], d))
        placed.append((key, list(load), device))
        load[device] += sizes[key]
    return placed


def _owners_of(placed, n):
    owners = [None] * n
    for key, _, device in placed:
        owners[key] = device
    return owners


def law_merge_owners_greedy(merge_buffer_owners, sizes, k):
    """Notebook 07: where the ``device`` store keeps each key's merge buffer, for keys of distinct
    sizes (MXNet sorts with ``std::sort``, whose order among equal sizes is unspecified): the largest
    key first, each on the device that holds the fewest elements so far, ties to the lowest device."""
    placed = _greedy_owners(sizes, k)
    want, got = _owners_of(placed, len(sizes)), merge_buffer_owners(list(sizes), k)
    got = list(got) if isinstance(got, (list, tuple, np.ndarray)) else got
    if got == want:
        return
    why = None
    if not isinstance(got, list) or len(got) != len(sizes):
        why = f'one device per key, in the order of the keys: a list of {_n(len(sizes), "device")}'
    elif _rule_of(merge_buffer_owners):
        why = _rule_of(merge_buffer_owners)
    else:
        for rank, (key, load, device) in enumerate(placed):
            if got[key] != device:
                why = (f'key {key} ({sizes[key]} elements) is the {_ordinal(rank + 1)} largest; when it is placed '
                       f'the devices hold {load} elements, so it goes to device {device}, the least loaded '
                       '(ties: the lowest device)')
                break
    raise Broken(f'merge_buffer_owners({list(sizes)}, {k})', expected=str(want), got=str(got), why=why)


def _fewest_keys(sizes, k):
    """Largest key first, each on the device that holds the fewest *keys* so far."""
    count, placed = [0] * k, []
    for key in sorted(range(len(sizes)), key=lambda i: (-sizes[i], i)):
        device = min(range(k), key=lambda d: (count[d], d))
        placed.append((key, None, device))
        count[device] += 1
    return placed


def _smallest_first(sizes, k):
    load, placed = [0] * k, []
    for key in sorted(range(len(sizes)), key=lambda i: (sizes[i], i)):
        device = min(range(k), key=lambda d: (load[d], d))
        placed.append((key, None, device))
        load[device] += sizes[key]
    return placed


_LARGEST_FIRST = ('place the largest key first (sort by size, largest first), each on the device that holds the '
                  'fewest elements so far')
_WRONG_RULES = (
    ('the keys were dealt out in turn (round robin); ' + _LARGEST_FIRST,
     lambda sizes, k: [(i, None, i % k) for i in range(len(sizes))]),
    ('each key went to the device that holds the fewest keys: the rule counts elements, not keys (load[device] += '
     'the key\'s size)', _fewest_keys),
    ('the keys were placed in key order; ' + _LARGEST_FIRST, lambda sizes, k: _in_key_order(sizes, k)),
    ('the smallest key was placed first; ' + _LARGEST_FIRST, _smallest_first))


def _rule_of(merge_buffer_owners):
    """Why ``merge_buffer_owners`` is wrong, when it follows one wrong rule on every case of MERGE_CASES
    (one case can fit several), or None."""
    for words, rule in _WRONG_RULES:
        try:
            if all(list(merge_buffer_owners(list(c['sizes']), c['k'])) == _owners_of(rule(c['sizes'], c['k']),
                                                                                    len(c['sizes']))
                   for c in MERGE_CASES):
                return words
        except Exception:
            return None
    return None


def _in_key_order(sizes, k):
    load, placed = [0] * k, []
    for key in range(len(sizes)):
        device = min(range(k), key=lambda d: (load[d], d))
        placed.append((key, list(load), device))
        load[device] += sizes[key]
    return placed


def _ordinal(n):
    return f'{n}{"th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")}'


def law_merge_owners_balanced(merge_buffer_owners, sizes, k):
    """Notebook 07: for any sizes (equal ones too), one device 0 ... k-1 per key, the largest key on
    device 0, and the loads never more than one key apart (the greedy rule's promise)."""
    owners = list(merge_buffer_owners(list(sizes), k))
    load = [sum(s for s, o in zip(sizes, owners) if o == d) for d in range(k)]
    if len(owners) != len(sizes) or not all(isinstance(o, (int, np.integer)) and 0 <= o < k for o in owners):
        raise Broken(f'merge_buffer_owners({list(sizes)}, {k})', expected=f'one device 0 ... {k - 1} per key',
                     got=str(owners))
    if owners[int(np.argmax(sizes))] != 0:
        raise Broken(f'merge_buffer_owners({list(sizes)}, {k}): the largest key must go to device 0',
                     got=str(owners), why='the largest key is placed first, when every device holds nothing')
    if max(load) - min(load) > max(sizes):
        raise Broken(f'merge_buffer_owners({list(sizes)}, {k}): the devices\' loads are {load}, more than the '
                     f'largest key ({max(sizes)}) apart', got=str(owners),
                     why='each key goes to the device that holds the fewest elements so far')


MERGE_CASES = [dict(sizes=s, k=k) for s, k in (
    ([5], 1), ([5], 3), ([3, 9], 2), ([1, 2, 3], 2), ([4, 10, 7], 3), ([10, 9, 8, 1], 2), ([6, 5, 4, 3, 2, 1], 3),
    ([120, 7, 84, 10, 16, 6], 2), ([120, 7, 84, 10, 16, 6], 4), ([30, 2, 900, 11, 75, 48, 3, 600], 5),
    ([102_760_448, 16_777_216, 4_096_000, 4096, 1000, 64], 4), (list(range(1, 17)), 8))]


BALANCE_CASES = [dict(sizes=s, k=k) for s, k in (
    ([7, 7], 2), ([4, 4, 4], 2), ([10, 10, 1, 1], 3), ([102_760_448, 16_777_216, 4_096_000] + [4096] * 10, 4),
    ([64] * 9, 8), ([5, 3, 5, 3, 5, 3], 4))]


def law_merge_owners_refuses_bad_input(merge_buffer_owners, bad):
    """Notebook 07: a key size that is not a whole number (TypeError) or below 1, or fewer than one
    device (ValueError), is refused."""
    sizes, k, error = {'a fractional size': ([10, 2.5], 2, TypeError), 'a size of 0': ([10, 0], 2, ValueError),
                       'no device': ([10], 0, ValueError)}[bad]
    if not _refuses(lambda: merge_buffer_owners(sizes, k), error):
        raise Broken(f'merge_buffer_owners({sizes}, {k}) must be refused with a {error.__name__}',
                     expected=error.__name__, got='another outcome',
                     why="keep the guard line `k, sizes = checks.whole(k, 'k', 1), [...]`")


@lesson('helpers.kvstore.merge_buffer_owners',
        hint='largest key first, each to the device holding the fewest elements so far (ties: lowest)')
def check_merge_buffer_owners():
    """Check your ``merge_buffer_owners(sizes, k)`` (notebook 07): MXNet's greedy placement, balanced."""
    return [
        Law('for keys of distinct sizes, the devices of the greedy rule: largest key first, each on the least '
            'loaded device, ties to the lowest', law_merge_owners_greedy, MERGE_CASES,
            lambda sizes, k: f'keys of {sizes} elements on {k} device{"s" * (k > 1)}'),
        Law('for any sizes, equal ones too: one device per key, the largest on device 0, loads at most one key '
            'apart', law_merge_owners_balanced, BALANCE_CASES,
            lambda sizes, k: f'keys of {sizes} elements on {k} devices'),
        Law('bad input refused', law_merge_owners_refuses_bad_input,
            [dict(bad=b) for b in ('a fractional size', 'a size of 0', 'no device')], lambda bad: bad),
    ]
