"""Data for the course's toy tasks, one module per idea:

- :mod:`~helpers.data.numbers`: English number words and Chinese numerals, their tokens;
- :mod:`~helpers.data.vocab`: :class:`Vocab` (tokens ↔ ids) and the special ids;
- :mod:`~helpers.data.tasks`: number translation and copy/reverse, disjoint train and held-out;
- :mod:`~helpers.data.batching`: padded teacher-forcing batches from ``(src, tgt)`` id pairs.

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
)
from .numbers import (
    MAX_NUMBER,
    chinese_number_vocabulary,
    chinese_tokens,
    english_number_vocabulary,
    english_tokens,
    number_to_chinese,
    number_to_words,
)
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
    "BOS_ID",
    "EOS_ID",
    "FIRST_COPY_TOKEN",
    "MAX_NUMBER",
    "PAD_ID",
    "UNK_ID",
    "NumberTranslationData",
    "Pair",
    "Seq2SeqBatch",
    "Vocab",
    "as_pairs",
    "batches",
    "chinese_number_vocabulary",
    "chinese_tokens",
    "endless_batches",
    "english_number_vocabulary",
    "english_tokens",
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
]
