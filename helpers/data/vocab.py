"""The vocabulary: tokens ↔ ids, with the special ids every task of the course shares.

``<pad>`` = 0, ``<bos>`` = 1, ``<eos>`` = 2 (and ``<unk>`` = 3 in a :class:`Vocab`). A
:data:`Pair` is one example, ``(src_ids, tgt_ids)``, both ending with EOS and without BOS.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from numbers import Integral

from torch import Tensor


class Vocab:
    """A token ↔ id map whose first ids are the special tokens.

    ``<pad>`` = 0, ``<bos>`` = 1, ``<eos>`` = 2, ``<unk>`` = 3, then the given tokens in the
    order they first appear (duplicates and special names are skipped).
    """

    PAD, BOS, EOS, UNK = 0, 1, 2, 3
    PAD_TOKEN, BOS_TOKEN, EOS_TOKEN, UNK_TOKEN = "<pad>", "<bos>", "<eos>", "<unk>"
    SPECIALS = (PAD_TOKEN, BOS_TOKEN, EOS_TOKEN, UNK_TOKEN)

    def __init__(self, tokens: Iterable[str]) -> None:
        if isinstance(tokens, str):
            raise ValueError(
                "Vocab expects an iterable of tokens, not one string; "
                "pass e.g. english_tokens(text) or list(text)"
            )
        self.itos: list[str] = list(self.SPECIALS)
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(self.itos)}
        for token in tokens:
            if not isinstance(token, str) or not token:
                raise ValueError(f"tokens must be non-empty strings; got {token!r}")
            if token not in self.stoi:
                self.stoi[token] = len(self.itos)
                self.itos.append(token)

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: object) -> bool:
        return token in self.stoi

    def __repr__(self) -> str:
        return f"Vocab(size={len(self)}, tokens={self.itos[len(self.SPECIALS) :][:8]}...)"

    def encode(
        self,
        tokens: Sequence[str],
        add_bos: bool = False,
        add_eos: bool = True,
        unk_ok: bool = False,
    ) -> list[int]:
        """Token strings → ids (length ``len(tokens) + add_bos + add_eos``).

        An unknown token raises ``ValueError`` unless ``unk_ok=True`` maps it to ``<unk>``.
        """
        if isinstance(tokens, str):
            raise ValueError(
                f"encode expects a list of tokens, not the string {tokens!r}; "
                "split it first with english_tokens(...) or chinese_tokens(...)"
            )
        ids = [self.BOS] if add_bos else []
        for position, token in enumerate(tokens):
            if token in self.stoi:
                ids.append(self.stoi[token])
            elif unk_ok:
                ids.append(self.UNK)
            else:
                raise ValueError(
                    f"unknown token {token!r} at position {position}: it is not in this "
                    f"vocabulary of {len(self)} tokens. Build the Vocab from every token you "
                    "will encode, or pass unk_ok=True to map unknown tokens to <unk>."
                )
        if add_eos:
            ids.append(self.EOS)
        return ids

    def decode(self, ids: Iterable[int] | Tensor, strip_special: bool = True) -> list[str]:
        """Ids (a list or a 1-D tensor) → token strings.

        With ``strip_special`` (the default), stop at the first ``<eos>`` and drop ``<pad>``
        and ``<bos>``; ``<unk>`` is kept so that it stays visible.
        """
        if isinstance(ids, Tensor):
            if ids.dim() != 1:
                raise ValueError(
                    f"decode takes one sequence, a 1-D tensor; got shape {tuple(ids.shape)}. "
                    "Decode a batch row by row."
                )
            ids = ids.tolist()
        tokens: list[str] = []
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, Integral):
                raise ValueError(f"token ids must be integers; got {i!r}")
            if not 0 <= int(i) < len(self):
                raise ValueError(f"token id {i} is out of range for a vocabulary of {len(self)}")
            if strip_special:
                if i == self.EOS:
                    break
                if i in (self.PAD, self.BOS):
                    continue
            tokens.append(self.itos[i])
        return tokens


PAD_ID, BOS_ID, EOS_ID, UNK_ID = Vocab.PAD, Vocab.BOS, Vocab.EOS, Vocab.UNK

# One example: (src_ids, tgt_ids), both ending with EOS, without BOS.
Pair = tuple[list[int], list[int]]
