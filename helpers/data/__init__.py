"""Data for the course's tasks, toy and real, one module per idea:

- :mod:`~helpers.data.numbers`: English number words and Chinese numerals, their tokens;
- :mod:`~helpers.data.vocab`: :class:`Vocab` (tokens ↔ ids) and the special ids;
- :mod:`~helpers.data.tasks`: number translation and copy/reverse, disjoint train and held-out;
- :mod:`~helpers.data.batching`: padded teacher-forcing batches from ``(src, tgt)`` id pairs;
- :mod:`~helpers.data.parallel`: a real language pair, Spanish–English Bible verses, split by book;
- :mod:`~helpers.data.bpe`: byte-pair encoding: subword pieces learned from text, encode, decode.

Special token ids are the same for every task: ``<pad>`` = 0, ``<bos>`` = 1, ``<eos>`` = 2
(and ``<unk>`` = 3 in a :class:`Vocab`). Sequences handed to :func:`make_batch` already end
with EOS; the batch adds BOS to the decoder input itself.
"""

from .batching import (
    Seq2SeqBatch,
    batches,
    endless_batches,
    make_batch,
    pad_batch,
    pairs_to_batch,
    token_batches,
)
from .bpe import BPE, pretokenize, train_bpe
from .numbers import (
    MAX_NUMBER,
    chinese_number_vocabulary,
    chinese_tokens,
    english_number_vocabulary,
    english_tokens,
    number_to_chinese,
    number_to_words,
)
from .parallel import SPLITS, VersePair, load_verse_pairs
from .tasks import (
    FIRST_COPY_TOKEN,
    NumberTranslationData,
    as_pairs,
    make_copy_task,
    make_disjoint_copy_splits,
    make_number_translation,
    number_pair,
    number_translation_vocabs,
)
from .vocab import BOS_ID, EOS_ID, PAD_ID, UNK_ID, Pair, Vocab

__all__ = [
    "BPE",
    "BOS_ID",
    "EOS_ID",
    "FIRST_COPY_TOKEN",
    "MAX_NUMBER",
    "PAD_ID",
    "SPLITS",
    "UNK_ID",
    "NumberTranslationData",
    "Pair",
    "Seq2SeqBatch",
    "VersePair",
    "Vocab",
    "as_pairs",
    "batches",
    "chinese_number_vocabulary",
    "chinese_tokens",
    "endless_batches",
    "english_number_vocabulary",
    "english_tokens",
    "load_verse_pairs",
    "make_batch",
    "make_copy_task",
    "make_disjoint_copy_splits",
    "make_number_translation",
    "number_pair",
    "number_to_chinese",
    "number_to_words",
    "number_translation_vocabs",
    "pad_batch",
    "pairs_to_batch",
    "pretokenize",
    "token_batches",
    "train_bpe",
]
