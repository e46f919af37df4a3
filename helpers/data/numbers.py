"""Number words: English words and Chinese numerals for 0 … 99 999 999, their tokens and word
lists, and the checks of integer arguments that the tasks share.

Conventions of the number translation
-------------------------------------
English (:func:`number_to_words`), British style, one token per word:

* tens and units are separate words: 42 → ``"forty two"`` (no hyphen);
* inside each group of three digits, ``"and"`` joins the hundreds to a non-zero rest:
  115 → ``"one hundred and fifteen"``;
* the last group, when it is below 100 and a higher group exists, is preceded by
  ``"and"``: 3005 → ``"three thousand and five"``, 1000005 → ``"one million and five"``;
  no other ``"and"``: 1005000 → ``"one million five thousand"``.

Chinese (:func:`number_to_chinese`), the usual rules, with 二 (never 两):

* the number is split into a 万 group (n // 10000) and a lower group (n % 10000);
* inside a group, one 零 stands for any run of zero digits between non-zero digits;
  zeros at the end of a group are not read: 1005 → 一千零五, 1010 → 一千零一十;
* across 万, a 零 is read when the lower group is non-zero but below 1000:
  10000100 → 一千万零一百, but 10001000 → 一千万一千;
* 十 alone (not 一十) only when it is the first digit of the whole number:
  15 → 十五, 110000 → 十一万, but 110 → 一百一十, 10010 → 一万零一十.
"""

from __future__ import annotations

from numbers import Integral

MAX_NUMBER = 99_999_999

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_CHINESE_DIGITS = "零一二三四五六七八九"
_CHINESE_UNITS = ((1000, "千"), (100, "百"), (10, "十"), (1, ""))


def check_number(n: object, name: str = "number") -> int:
    """``n`` as an ``int`` if it is an integer in ``[0, MAX_NUMBER]``; ``ValueError`` otherwise."""
    if isinstance(n, bool) or not isinstance(n, Integral):
        raise ValueError(
            f"{name} must be an integer; got {n!r} of type {type(n).__name__}. "
            "Convert it with int(...) first."
        )
    if not 0 <= int(n) <= MAX_NUMBER:
        raise ValueError(f"{name} {n} is out of range; only 0 <= n <= {MAX_NUMBER:_} is supported")
    return int(n)


def _words_below_100(n: int) -> list[str]:
    if n < 20:
        return [_ONES[n]]
    return [_TENS[n // 10]] + ([_ONES[n % 10]] if n % 10 else [])


def _words_below_1000(n: int) -> list[str]:
    """Words for 1 <= n <= 999, with "and" between the hundreds and the rest."""
    words = [_ONES[n // 100], "hundred"] if n >= 100 else []
    if n % 100:
        words += (["and"] if n >= 100 else []) + _words_below_100(n % 100)
    return words


def number_to_words(n: int) -> str:
    """English words for ``0 <= n <= 99_999_999``, e.g. 3005 → "three thousand and five".

    Words are separated by single spaces (see the module docstring for the "and" rule).
    """
    n = check_number(n)
    if n == 0:
        return "zero"
    millions, thousands, units = n // 1_000_000, n // 1000 % 1000, n % 1000
    words: list[str] = []
    if millions:
        words += _words_below_1000(millions) + ["million"]
    if thousands:
        words += _words_below_1000(thousands) + ["thousand"]
    if units:
        if units < 100 and n >= 1000:
            words.append("and")
        words += _words_below_1000(units)
    return " ".join(words)


def _chinese_group(g: int) -> str:
    """Chinese for 1 <= g <= 9999, always with the digit before 十 (一十)."""
    out: list[str] = []
    zero_pending = False
    for power, unit in _CHINESE_UNITS:
        digit = g // power % 10
        if digit == 0:
            zero_pending = bool(out)  # a zero only counts once something precedes it
            continue
        if zero_pending:
            out.append("零")
            zero_pending = False
        out.append(_CHINESE_DIGITS[digit] + unit)
    return "".join(out)


def number_to_chinese(n: int) -> str:
    """Chinese numerals for ``0 <= n <= 99_999_999``.

    E.g. 3005 → "三千零五", 10010 → "一万零一十", 110000 → "十一万" (rules: module docstring).
    """
    n = check_number(n)
    if n == 0:
        return "零"
    high, low = divmod(n, 10_000)
    text = _chinese_group(high) + "万" if high else ""
    if low:
        if high and low < 1000:
            text += "零"
        text += _chinese_group(low)
    # Only the leading digit may drop its 一 before 十 (十五, 十一万; but 一百一十).
    return text[1:] if text.startswith("一十") else text


def english_tokens(text: str) -> list[str]:
    """Split an English sentence into word tokens on whitespace."""
    return text.split()


def chinese_tokens(text: str) -> list[str]:
    """Split a Chinese numeral into one token per character."""
    return list(text)


def english_number_vocabulary() -> list[str]:
    """Every word :func:`number_to_words` can produce, in a fixed order."""
    return _ONES + [t for t in _TENS if t] + ["hundred", "thousand", "million", "and"]


def chinese_number_vocabulary() -> list[str]:
    """Every character :func:`number_to_chinese` can produce, in a fixed order."""
    return list(_CHINESE_DIGITS + "十百千万")


def check_count(name: str, value: object, minimum: int = 1) -> int:
    """``value`` as an ``int`` if it is an integer ``>= minimum`` (a size, a count)."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)
