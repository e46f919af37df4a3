"""A release's visible values are stale for a real change, not for another CPU's last bits
(``course.release.values_agree``). (The released values replayed on this CPU, and exercise
06's trained accuracy: tests/book/test_numerics.py.)"""

from __future__ import annotations

from checks import encode, released


def test_a_release_is_not_stale_for_last_bits_but_is_for_a_real_change():
    from course.release import values_agree

    def checks(value, atol=1e-5, kind="close", key="k"):
        check = {"test": "t", "key": key, "kind": kind, "name": key, "atol": atol, "rtol": 1e-4}
        return [check | {"expected": encode([value, 1.0]), "solution_value": True}]

    stored = released.pack("01_x/x.ipynb", "t", {"k": encode([0.30000001, 1.0])})
    assert values_agree(checks(0.30000001), stored)
    assert values_agree(checks(0.30000004), stored)  # another CPU's last bits
    assert not values_agree(checks(0.31), stored)  # the solution changed
    assert not values_agree(checks(0.30000004, kind="equal"), stored)  # exact checks are exact
    assert not values_agree(checks(0.30000001, key="other"), stored)  # another check
    assert not values_agree(checks(0.30000001), "afz1:damaged")
