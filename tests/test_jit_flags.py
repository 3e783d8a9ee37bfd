"""The cheap comparison of numba's compile options (``sim.engine._jit._quick_flag_compare``) gives numba's answers."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("numba")


def _numba_equal(a, b) -> bool:
    return a.values() == b.values()


def test_flag_equality_and_hash_are_numbas_on_random_option_sets() -> None:
    from numba.core.compiler import Flags

    from sim.engine._jit import _quick_flag_compare

    _quick_flag_compare()
    opts = sorted(Flags.options)
    rng = random.Random(7)
    seen = {True: 0, False: 0}
    for _ in range(2000):
        a, b = Flags(), Flags()
        for f in (a, b):
            for k in rng.sample(opts, 3):
                o = Flags.options[k]
                if isinstance(o.default, bool):
                    # set to the default half the time: equal to an option left unset
                    setattr(f, k, o.default if rng.random() < 0.5 else not o.default)
        want = _numba_equal(a, b)
        assert (a == b) is want
        assert hash(a) == hash(tuple(sorted(a.values())))  # numba's hash: the option names
        seen[want] += 1
    assert seen[True] > 50 and seen[False] > 50  # both answers were asked for


def test_options_set_to_their_defaults_equal_options_left_unset() -> None:
    from numba.core.compiler import Flags

    from sim.engine._jit import _quick_flag_compare

    _quick_flag_compare()
    a, b = Flags(), Flags()
    a.nrt = Flags.options["nrt"].default
    assert a == b and hash(a) == hash(b)
    b.nrt = not Flags.options["nrt"].default
    assert a != b
    assert {a: 1}.get(Flags()) == 1  # a dict keyed by options finds an equal set
