"""``Kept``: values made once per key, the oldest dropped past the size (checks/core.py)."""
from autograder.checks.core import Kept


def test_made_once_per_key_and_bounded():
    made = []
    kept = Kept(size=2)

    def make(key):
        return lambda: made.append(key) or key * 10
    assert [kept.get(k, make(k)) for k in (1, 2, 1, 2)] == [10, 20, 10, 20]
    assert made == [1, 2]
    kept.get(3, make(3))  # drops 1, the oldest
    assert len(kept.values) == 2 and kept.get(1, make(1)) == 10 and made == [1, 2, 3, 1]
