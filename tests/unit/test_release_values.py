"""A release's visible values are stale for a real change, not for another CPU's last bits
(``course.release.visible_checks_agree``). (The released values replayed on this CPU, and
exercise 06's trained accuracy: tests/book/test_numerics.py.)"""

from __future__ import annotations

import json


def test_a_release_is_not_stale_for_last_bits_but_is_for_a_real_change():
    from course.release import visible_checks_agree

    def text(value, like=0.25, atol=1e-5, kind="close"):
        check = {"test": "t", "key": "k", "kind": kind, "name": "k", "atol": atol, "rtol": 1e-4}
        check |= {"expected": {"list": [value, 1.0]}, "like": {"no scaling": {"list": [like]}}}
        return json.dumps({"format": 1, "checks": [check]})

    stored = text(0.30000001)
    assert visible_checks_agree(stored, text(0.30000004))  # another CPU's last bits
    assert visible_checks_agree(stored, text(0.30000001, like=0.25000003))
    assert not visible_checks_agree(stored, text(0.31))  # the solution changed
    assert not visible_checks_agree(stored, text(0.30000001, like=0.26))
    assert not visible_checks_agree(stored, text(0.30000004, atol=1e-3))  # a changed option
    assert not visible_checks_agree(stored, text(0.30000004, kind="equal"))
    assert not visible_checks_agree(stored, "{ damaged")
