"""Tests of helpers.data: number words, Chinese numerals, Vocab, toy tasks, batching (one
module each in the package; the names are imported from the package, as the chapters do)."""

import random

import pytest
import torch

from helpers.data import (
    BOS_ID,
    EOS_ID,
    FIRST_COPY_TOKEN,
    PAD_ID,
    Vocab,
    as_pairs,
    batches,
    chinese_number_vocabulary,
    chinese_tokens,
    english_number_vocabulary,
    english_tokens,
    make_batch,
    make_copy_task,
    make_disjoint_copy_splits,
    make_number_translation,
    number_to_chinese,
    number_to_words,
    pad_batch,
    pairs_to_batch,
)

# Expected strings written by hand, not computed.
CASES = [
    (0, "zero", "零"),
    (7, "seven", "七"),
    (10, "ten", "十"),
    (15, "fifteen", "十五"),
    (42, "forty two", "四十二"),
    (100, "one hundred", "一百"),
    (101, "one hundred and one", "一百零一"),
    (110, "one hundred and ten", "一百一十"),
    (115, "one hundred and fifteen", "一百一十五"),
    (1005, "one thousand and five", "一千零五"),
    (1010, "one thousand and ten", "一千零一十"),
    (3005, "three thousand and five", "三千零五"),
    (10010, "ten thousand and ten", "一万零一十"),
    (20000, "twenty thousand", "二万"),
    (100000, "one hundred thousand", "十万"),
    (100010, "one hundred thousand and ten", "十万零一十"),
    (110000, "one hundred and ten thousand", "十一万"),
    (1000000, "one million", "一百万"),
    (1000005, "one million and five", "一百万零五"),
    (1005000, "one million five thousand", "一百万五千"),
    (1010000, "one million ten thousand", "一百零一万"),
    (2000100, "two million one hundred", "二百万零一百"),
    (10000001, "ten million and one", "一千万零一"),
    (10000100, "ten million one hundred", "一千万零一百"),
    (10001000, "ten million one thousand", "一千万一千"),
    (10100000, "ten million one hundred thousand", "一千零一十万"),
    (
        99999999,
        "ninety nine million nine hundred and ninety nine thousand nine hundred and ninety nine",
        "九千九百九十九万九千九百九十九",
    ),
]


@pytest.mark.parametrize("n, words, chinese", CASES)
def test_hand_written_cases(n, words, chinese):
    assert number_to_words(n) == words
    assert number_to_chinese(n) == chinese


@pytest.mark.parametrize("bad", [-1, 100_000_000, 3.0, "12", True, None])
def test_bad_numbers_raise(bad):
    for convert in (number_to_words, number_to_chinese):
        with pytest.raises(ValueError):
            convert(bad)


# --------------------------------------------------------------------------- parsers
# Independent, strict parsers: they compute the value and also reject strings that break
# the course's conventions, so a wrong 零/十/and rule in the generator fails the round trip.

_CN_DIGIT = {c: i for i, c in enumerate("零一二三四五六七八九")}
_CN_UNIT = {"十": 1, "百": 2, "千": 3}


def _parse_chinese_section(text):
    """[(digit, exponent, zero_before, bare_ten)] for a 0..9999 section."""
    items, zero_before, i = [], False, 0
    while i < len(text):
        ch = text[i]
        if ch == "零":
            assert not zero_before, f"double 零 in {text!r}"
            zero_before, i = True, i + 1
            continue
        if ch == "十":
            items.append((1, 1, zero_before, True))
            i += 1
        elif ch in _CN_DIGIT:
            exponent = _CN_UNIT.get(text[i + 1], 0) if i + 1 < len(text) else 0
            items.append((_CN_DIGIT[ch], exponent, zero_before, False))
            i += 2 if exponent else 1
        else:
            raise AssertionError(f"unexpected character {ch!r} in {text!r}")
        zero_before = False
    assert not zero_before, f"trailing 零 in {text!r}"
    return items


def parse_chinese(text):
    if text == "零":
        return 0
    assert "两" not in text and text.count("万") <= 1 and not text.startswith("万")
    high_text, _, low_text = text.rpartition("万") if "万" in text else ("", "", text)
    high = [(d, e + 4, z, b) for d, e, z, b in _parse_chinese_section(high_text)]
    low = _parse_chinese_section(low_text)
    items = high + low
    assert items and not items[0][2], f"leading 零 in {text!r}"
    for index, (digit, exponent, zero_before, bare) in enumerate(items):
        assert 1 <= digit <= 9
        assert not bare or index == 0, f"bare 十 not at the start of {text!r}"
        if index == 0 and exponent % 4 == 1 and digit == 1:
            assert bare, f"leading 一十 should be 十 in {text!r}"
        if index == 0:
            continue
        previous = items[index - 1][1]
        assert exponent < previous, f"digits out of order in {text!r}"
        if high and low and index == len(high):  # first item below 万
            assert zero_before == (exponent < 3), f"wrong 零 after 万 in {text!r}"
        else:
            assert zero_before == (previous - exponent > 1), f"wrong 零 in {text!r}"
    return sum(digit * 10**exponent for digit, exponent, _, _ in items)


_EN_VALUE = {w: i for i, w in enumerate(english_number_vocabulary()[:20])}
_EN_VALUE.update({w: 10 * (i + 2) for i, w in enumerate(english_number_vocabulary()[20:28])})


def parse_words(text):
    words = text.split()
    assert " ".join(words) == text and "-" not in text
    total = current = 0
    for word in words:
        if word in _EN_VALUE:
            current += _EN_VALUE[word]
        elif word == "hundred":
            current *= 100
        elif word in ("thousand", "million"):
            total += current * (1000 if word == "thousand" else 1_000_000)
            current = 0
        else:
            assert word == "and", f"unexpected word {word!r}"
    return total + current


def _round_trip_numbers():
    rng = random.Random(1234)
    lengths = [rng.randint(1, 8) for _ in range(3000)]
    return list(range(2000)) + [rng.randint(10 ** (d - 1), 10**d - 1) for d in lengths]


def test_chinese_round_trip():
    for n in _round_trip_numbers():
        text = number_to_chinese(n)
        assert parse_chinese(text) == n, f"{n} -> {text!r}"


def test_words_round_trip_and_and_rule():
    for n in _round_trip_numbers():
        text = number_to_words(n)
        assert parse_words(text) == n, f"{n} -> {text!r}"
        # One "and" per group "X hundred and Y", plus one before a last group below 100.
        groups = [n // 1_000_000, n // 1000 % 1000, n % 1000]
        expected = sum(g >= 100 and g % 100 != 0 for g in groups)
        expected += n >= 1000 and 0 < n % 1000 < 100
        words = text.split()
        assert words.count("and") == expected, f"{n} -> {text!r}"
        for i, word in enumerate(words):
            if word == "and":
                assert words[i - 1] in ("hundred", "thousand", "million"), text


def test_parser_rejects_broken_rules():
    for wrong in ["一千五", "一十五", "一百十", "一千零零五", "一千万零一千", "一百零", "两百"]:
        with pytest.raises(AssertionError):
            parse_chinese(wrong)


# --------------------------------------------------------------------------- Vocab


def test_vocab_specials_and_round_trip():
    vocab = Vocab(["b", "a", "b", "<eos>"])
    assert (Vocab.PAD, Vocab.BOS, Vocab.EOS, Vocab.UNK) == (0, 1, 2, 3)
    assert vocab.itos == ["<pad>", "<bos>", "<eos>", "<unk>", "b", "a"]
    assert len(vocab) == 6 and "a" in vocab and "c" not in vocab
    assert all(vocab.stoi[t] == i for i, t in enumerate(vocab.itos))
    ids = vocab.encode(["a", "b"], add_bos=True)
    assert ids == [BOS_ID, 5, 4, EOS_ID]
    assert vocab.decode(ids + [PAD_ID, 4]) == ["a", "b"]
    assert vocab.decode(torch.tensor(ids)) == ["a", "b"]
    assert vocab.decode(ids, strip_special=False) == ["<bos>", "a", "b", "<eos>"]


def test_vocab_unknown_token():
    vocab = Vocab(["a"])
    with pytest.raises(ValueError, match="'zz'"):
        vocab.encode(["a", "zz"])
    assert vocab.encode(["zz"], unk_ok=True) == [Vocab.UNK, EOS_ID]
    with pytest.raises(ValueError):
        vocab.encode("a")  # a string, not a list of tokens
    with pytest.raises(ValueError):
        vocab.decode([99])


def test_tokenizers_and_vocabularies_cover_everything():
    assert english_tokens("three thousand and five") == ["three", "thousand", "and", "five"]
    assert chinese_tokens("三千零五") == ["三", "千", "零", "五"]
    src_words, tgt_chars = set(english_number_vocabulary()), set(chinese_number_vocabulary())
    for n in _round_trip_numbers()[::7]:
        assert set(number_to_words(n).split()) <= src_words
        assert set(number_to_chinese(n)) <= tgt_chars


# --------------------------------------------------------------------------- translation data


def test_number_translation_is_disjoint_and_decodes():
    data = make_number_translation(num_train=3000, num_heldout=300, seed=3)
    assert len(data.train_pairs) == 3000 and len(data.heldout_pairs) == 300
    assert len(set(data.train_numbers)) == 3000
    assert not set(data.train_numbers) & set(data.heldout_numbers)
    for n, (src, tgt) in zip(data.heldout_numbers, data.heldout_pairs, strict=True):
        assert src[-1] == EOS_ID and tgt[-1] == EOS_ID and Vocab.UNK not in src + tgt
        assert " ".join(data.src_vocab.decode(src)) == number_to_words(n)
        assert "".join(data.tgt_vocab.decode(tgt)) == number_to_chinese(n)
    digit_counts = {len(str(n)) for n in data.train_numbers}
    assert digit_counts == set(range(1, 9)), "every length 1..8 digits should occur"
    again = make_number_translation(num_train=3000, num_heldout=300, seed=3)
    assert again.train_numbers == data.train_numbers


def test_number_translation_small_range_and_errors():
    data = make_number_translation(num_train=80, num_heldout=20, max_value=99, seed=0)
    assert sorted(data.train_numbers + data.heldout_numbers) == list(range(100))
    with pytest.raises(ValueError, match="distinct"):
        make_number_translation(num_train=100, num_heldout=1, max_value=99)
    with pytest.raises(ValueError):
        make_number_translation(max_value=10**9)


# --------------------------------------------------------------------------- copy tasks


def test_copy_and_reverse_tasks():
    src, tgt = make_copy_task(64, 10, 11, seed=0)
    assert src.shape == tgt.shape == (64, 10) and src.dtype == torch.long
    assert src.min() >= FIRST_COPY_TOKEN and src.max() < 11
    assert torch.equal(src, tgt)
    rsrc, rtgt = make_copy_task(64, 10, 11, seed=0, reverse=True)
    assert torch.equal(rsrc, src) and torch.equal(rtgt, src.flip(1))
    assert rtgt[5].tolist() == list(reversed(src[5].tolist()))
    with pytest.raises(ValueError):
        make_copy_task(4, 10, 3)  # no regular token left after pad/bos/eos


def test_disjoint_copy_splits():
    (train_src, train_tgt), (test_src, test_tgt) = make_disjoint_copy_splits(
        500, 100, seq_len=4, vocab_size=8, seed=1, reverse=True
    )
    assert train_src.shape == (500, 4) and test_src.shape == (100, 4)
    rows = {tuple(r) for r in train_src.tolist()}
    assert len(rows) == 500 and not rows & {tuple(r) for r in test_src.tolist()}
    assert torch.equal(train_tgt, train_src.flip(1)) and torch.equal(test_tgt, test_src.flip(1))
    assert train_src.min() >= FIRST_COPY_TOKEN and train_src.max() < 8
    # The whole space (5**2 = 25 sequences) can be split; one more cannot.
    (a, _), (b, _) = make_disjoint_copy_splits(20, 5, seq_len=2, vocab_size=8)
    assert len({tuple(r) for r in torch.cat([a, b]).tolist()}) == 25
    with pytest.raises(ValueError, match="distinct"):
        make_disjoint_copy_splits(20, 6, seq_len=2, vocab_size=8)


# --------------------------------------------------------------------------- batching


def test_pad_batch():
    out = pad_batch([[5, 6, 2], [7, 2]])
    assert out.dtype == torch.long
    assert out.tolist() == [[5, 6, 2], [7, 2, PAD_ID]]
    with pytest.raises(ValueError):
        pad_batch([])
    with pytest.raises(ValueError, match="empty"):
        pad_batch([[1], []])


def test_make_batch_shifts_by_bos():
    batch = make_batch([[4, 5, 2], [6, 2]], [[7, 8, 9, 2], [10, 2]])
    assert batch.src.shape == (2, 3)
    assert batch.tgt_in.shape == batch.tgt_out.shape == (2, 4)
    assert batch.tgt_out.tolist() == [[7, 8, 9, 2], [10, 2, 0, 0]]
    assert batch.tgt_in.tolist() == [[BOS_ID, 7, 8, 9], [BOS_ID, 10, 0, 0]]
    real = batch.tgt_out != PAD_ID
    assert torch.equal(real, batch.tgt_in != PAD_ID)
    assert batch.ntokens == 6
    with pytest.raises(ValueError):
        make_batch([[4, 2]], [[7, 2], [8, 2]])


def test_pairs_to_batch_keeps_the_order_of_the_pairs():
    pairs = [([4, 5, 2], [7, 8, 9, 2]), ([6, 2], [10, 2])]
    batch = pairs_to_batch(pairs)
    expected = make_batch([[4, 5, 2], [6, 2]], [[7, 8, 9, 2], [10, 2]])
    for name in ("src", "tgt_in", "tgt_out"):
        assert torch.equal(getattr(batch, name), getattr(expected, name)), name
    flipped = pairs_to_batch(pairs[::-1], pad_id=9, bos_id=8)
    assert flipped.src.tolist() == [[6, 2, 9], [4, 5, 2]]
    assert flipped.tgt_in.tolist() == [[8, 10, 9, 9], [8, 7, 8, 9]]
    with pytest.raises(ValueError, match="no sequences"):
        pairs_to_batch([])


def test_batches_cover_every_pair_once():
    src, tgt = make_copy_task(10, 3, 6, seed=0, reverse=True)
    pairs = as_pairs(src, tgt)
    assert pairs[0][0][-1] == EOS_ID and pairs[0][1] == src[0].flip(0).tolist() + [EOS_ID]
    seen = []
    for batch in batches(pairs, batch_size=4, shuffle=True, seed=2):
        assert batch.src.size(0) <= 4 and batch.tgt_in[:, 0].eq(BOS_ID).all()
        seen += [tuple(row) for row in batch.src.tolist()]
    assert sorted(seen) == sorted(tuple(s) for s, _ in pairs)
    sizes = [b.src.size(0) for b in batches(pairs, 4, shuffle=False, drop_last=True)]
    assert sizes == [4, 4]
    with pytest.raises(ValueError):
        next(batches(pairs, 0))


def test_zero_digit_prob_adds_zeros_and_stays_reproducible_and_disjoint():
    def zero_share(numbers):
        digits = "".join(str(n)[1:] for n in numbers)
        return digits.count("0") / len(digits)

    plain = make_number_translation(num_train=2000, num_heldout=200, seed=1)
    zeros = make_number_translation(num_train=2000, num_heldout=200, seed=1, zero_digit_prob=0.3)
    again = make_number_translation(num_train=2000, num_heldout=200, seed=1, zero_digit_prob=0.3)
    assert zeros.train_numbers == again.train_numbers
    assert not set(zeros.train_numbers) & set(zeros.heldout_numbers)
    assert zero_share(plain.train_numbers) < 0.15 < 0.3 < zero_share(zeros.train_numbers)
    with pytest.raises(ValueError, match="zero_digit_prob"):
        make_number_translation(num_train=10, num_heldout=1, zero_digit_prob=1.0)


def test_endless_batches_runs_epoch_after_epoch_in_new_orders():
    from itertools import islice

    from helpers.data import batches, endless_batches

    pairs = [([i + 3, 2], [i + 3, 2]) for i in range(10)]
    got = [b.src[:, 0].tolist() for b in islice(endless_batches(pairs, 5, seed=7), 6)]
    expected = [
        b.src[:, 0].tolist() for epoch in range(3) for b in batches(pairs, 5, seed=7 * 1000 + epoch)
    ]
    assert got == expected
    epochs = [sorted(got[0] + got[1]), sorted(got[2] + got[3])]
    assert epochs[0] == epochs[1] == list(range(3, 13))  # every pair once per epoch
    assert got[0] + got[1] != got[2] + got[3]  # a new order each epoch
    # With seed 0, epoch e is shuffled with seed e (the order chapters 7 and 9 train in).
    by_hand = [b.src.tolist() for epoch in range(2) for b in batches(pairs, 4, seed=epoch)]
    assert [b.src.tolist() for b in islice(endless_batches(pairs, 4), 6)] == by_hand
