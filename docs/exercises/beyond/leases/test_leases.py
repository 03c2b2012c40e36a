"""Leases, with the time passed in: every check is exact, and instant."""

from types import ModuleType

LEASE = 30.0


def test_each_url_is_handed_out_once(exercise: ModuleType) -> None:
    frontier = exercise.Frontier(LEASE)
    frontier.add("a")
    frontier.add("b")
    taken = [frontier.take(now=0), frontier.take(now=1), frontier.take(now=2)]
    assert taken == ["a", "b", None], taken


def test_an_unfinished_url_comes_back_when_its_lease_ends(
    exercise: ModuleType,
) -> None:
    frontier = exercise.Frontier(LEASE)
    frontier.add("a")
    assert frontier.take(now=0) == "a"
    early = frontier.take(now=LEASE - 1)
    assert early is None, (
        f"a was taken at 0 s and handed out again at {LEASE - 1} s, before "
        f"its lease of {LEASE} s ended"
    )
    again = frontier.take(now=LEASE)
    assert again == "a", (
        f"a was taken at 0 s and never reported done; at {LEASE} s its "
        f"lease has ended (its crawler may be dead), so take() should hand "
        f"it out again, not {again!r}: note when each lease ends, and look "
        f"for the ended ones in take()"
    )


def test_a_url_done_never_comes_back(exercise: ModuleType) -> None:
    frontier = exercise.Frontier(LEASE)
    frontier.add("a")
    assert frontier.take(now=0) == "a"
    frontier.done("a")
    later = frontier.take(now=10 * LEASE)
    assert later is None, (
        f"a was reported done, and take() handed it out again: {later!r}"
    )
