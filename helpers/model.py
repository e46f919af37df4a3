"""The whole encoder-decoder (chapters 6–7): embeddings, encoder, decoder, output projection."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from torch import Tensor, nn

from .attention import padding_mask, target_mask
from .decoder import Decoder, DecoderCache
from .layers import Encoder
from .multi_head import MultiHeadAttention
from .positional import LearnedPositionalEncoding, PositionalEncoding, TokenEmbedding

__all__ = ["Transformer", "TransformerConfig"]


@dataclass
class TransformerConfig:
    """Sizes of a Transformer; the defaults are the paper's base model (Table 3)."""

    src_vocab_size: int = 37000
    tgt_vocab_size: int = 37000
    d_model: int = 512
    num_heads: int = 8
    d_ff: int = 2048
    num_encoder_layers: int = 6
    num_decoder_layers: int = 6
    dropout: float = 0.1
    max_len: int = 5000
    norm_first: bool = False
    tie_embeddings: bool = True
    pad_id: int = 0
    learned_positions: bool = False

    def __post_init__(self) -> None:
        if self.d_model % self.num_heads != 0:
            raise ValueError(
                f"d_model ({self.d_model}) must be divisible by num_heads ({self.num_heads})"
            )
        if self.tie_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            raise ValueError(
                "tie_embeddings=True shares one embedding between source and target, so "
                f"src_vocab_size ({self.src_vocab_size}) must equal tgt_vocab_size "
                f"({self.tgt_vocab_size}); use one shared vocabulary or tie_embeddings=False"
            )

    @classmethod
    def big(cls, **overrides: Any) -> TransformerConfig:
        """The paper's big model: d_model 1024, d_ff 4096, 16 heads, dropout 0.3."""
        return cls(**{"d_model": 1024, "d_ff": 4096, "num_heads": 16, "dropout": 0.3, **overrides})


class Transformer(nn.Module):
    """Encoder-decoder Transformer; ``forward(src, tgt)`` → logits ``(batch, tgt_len, tgt_vocab)``.

    With ``tie_embeddings`` the source embedding, the target embedding and the output
    projection share one matrix, as in the paper (section 3.4).
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.config = config
        c = config
        self.src_embed = TokenEmbedding(c.src_vocab_size, c.d_model)
        self.tgt_embed = (
            self.src_embed if c.tie_embeddings else TokenEmbedding(c.tgt_vocab_size, c.d_model)
        )
        positional = LearnedPositionalEncoding if c.learned_positions else PositionalEncoding
        self.positional = positional(c.d_model, c.max_len, c.dropout)
        self.encoder = Encoder(
            c.d_model, c.num_heads, c.d_ff, c.num_encoder_layers, c.dropout, c.norm_first
        )
        self.decoder = Decoder(
            c.d_model, c.num_heads, c.d_ff, c.num_decoder_layers, c.dropout, c.norm_first
        )
        self.generator = nn.Linear(c.d_model, c.tgt_vocab_size)
        for name, p in self.named_parameters():
            if p.dim() > 1 and "embed" not in name and "positional" not in name:
                nn.init.xavier_uniform_(p)
        if c.tie_embeddings:
            self.generator.weight = self.tgt_embed.embedding.weight

    def encode(self, src: Tensor, src_mask: Tensor | None = None) -> Tensor:
        """Source ids ``(batch, src_len)`` → memory ``(batch, src_len, d_model)``."""
        return self.encoder(self.positional(self.src_embed(src)), src_mask)

    def decode(
        self,
        tgt: Tensor,
        memory: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        cache: list[DecoderCache] | None = None,
    ) -> Tensor:
        """Target ids ``(batch, tgt_len)`` and memory ``(batch, src_len, d_model)`` → logits
        ``(batch, tgt_len, tgt_vocab)``: raw scores, no softmax (as ``decode`` in exercise 06).

        With ``cache`` (from ``self.decoder.new_cache()``), ``tgt`` holds only the new tokens;
        their positions continue after the cached ones.
        """
        start = cache[0].length if cache else 0
        states = self.decoder(
            self.positional(self.tgt_embed(tgt), start), memory, src_mask, tgt_mask, cache
        )
        return self.generator(states)

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
    ) -> Tensor:
        """Teacher-forced pass: ``src (batch, src_len)``, ``tgt (batch, tgt_len)`` → logits
        ``(batch, tgt_len, tgt_vocab)``.

        Masks are boolean (``True`` = may attend); ``None`` means no masking, as in
        ``torch.nn.Transformer``. ``make_masks`` builds the usual padding and causal masks.
        """
        return self.decode(tgt, self.encode(src, src_mask), src_mask, tgt_mask)

    def make_masks(self, src: Tensor, tgt: Tensor) -> tuple[Tensor, Tensor]:
        """``(src_mask (batch, 1, 1, src_len), tgt_mask (batch, 1, tgt_len, tgt_len))``."""
        return padding_mask(src, self.config.pad_id), target_mask(tgt, self.config.pad_id)

    def record_attention(self, on: bool = True) -> None:
        """Make every attention module keep its last weights (``.last_weights``) for plots."""
        for module in self.modules():
            if isinstance(module, MultiHeadAttention):
                module.record_weights = on
                if not on:
                    module.last_weights = None

    def num_parameters(self) -> int:
        """Number of distinct trainable parameters (a tied matrix counts once)."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)

    def checkpoint(self) -> dict[str, Any]:
        """A dict with the config and the weights, for ``torch.save``."""
        return {"config": asdict(self.config), "state_dict": self.state_dict()}

    @classmethod
    def from_checkpoint(cls, checkpoint: dict[str, Any]) -> Transformer:
        """Rebuild a model saved with ``checkpoint()``."""
        model = cls(TransformerConfig(**checkpoint["config"]))
        model.load_state_dict({k: v.float() for k, v in checkpoint["state_dict"].items()})
        return model
