"""The model's output layer as the prefix-shared passes use it: logprobs of chosen tokens after
hidden states, never holding a whole vocabulary of logits per position (:class:`OutputLayer`)."""

from __future__ import annotations

from typing import cast

import torch

BOUNDARY = -1
"""A target that asks for the log probability that the next token begins a word (the sum over
the tokens of :attr:`OutputLayer.boundary_mask`) instead of a token's logprob."""


class OutputLayer:
    """The linear layer from final hidden states to vocabulary logits (``model.get_output_
    embeddings()``), applied a block of the vocabulary at a time.

    A position's logprob of a token is the token's logit (one dot product with the layer's row
    for it) less the log of the softmax's normaliser over the vocabulary; the normaliser is
    summed over blocks of ``VOCABULARY_BLOCK`` rows, so the logits never fill memory, and it is
    returned so that a stored prefix can later score any token with one dot product.

    With a ``boundary_mask`` (a boolean vector over the vocabulary: the tokens that begin a word),
    each position's log normaliser of those tokens alone is summed in the same pass over the
    blocks, and a target :data:`BOUNDARY` gives log P(next token begins a word).
    """

    VOCABULARY_BLOCK = 4096  # output-layer rows turned into logits at once

    def __init__(self, head: torch.nn.Module) -> None:
        if not isinstance(getattr(head, "weight", None), torch.Tensor):
            raise ValueError("no separate linear output layer")
        self.head = head
        self.boundary_mask: torch.Tensor | None = None
        self._mask_blocks: list[torch.Tensor] = []

    def set_boundary_mask(self, mask: torch.Tensor | None) -> None:
        """Score :data:`BOUNDARY` targets with ``mask`` (None: not at all)."""
        self.boundary_mask = mask
        self._mask_blocks = [] if mask is None else [
            mask[start: start + self.VOCABULARY_BLOCK].to(self.weight.device, torch.float32)
            for start in range(0, self.weight.shape[0], self.VOCABULARY_BLOCK)]

    @property
    def weight(self) -> torch.Tensor:
        return cast(torch.Tensor, self.head.weight)  # a Tensor: checked in __init__

    @property
    def bias(self) -> torch.Tensor | None:
        return getattr(self.head, "bias", None)

    def logprobs(self, hidden: torch.Tensor, sources: list[int], targets: list[int]
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Logprob of ``targets[k]`` after the hidden state ``hidden[sources[k]]`` (on CPU), and
        each row of ``hidden``'s log normaliser and, with a boundary mask, its log normaliser of
        the word-beginning tokens (float32, on its device; else None)."""
        weight = self.weight
        bias = self.bias
        parts = []
        boundary_parts = []
        for k, start in enumerate(range(0, weight.shape[0], self.VOCABULARY_BLOCK)):
            rows = weight[start: start + self.VOCABULARY_BLOCK]
            block_bias = None if bias is None else bias[start: start + self.VOCABULARY_BLOCK]
            block = torch.nn.functional.linear(hidden, rows, block_bias)
            if self._mask_blocks:
                normaliser, in_mask = _log_normalisers(block.float(), self._mask_blocks[k])
                parts.append(normaliser)
                boundary_parts.append(in_mask)
            else:
                parts.append(_log_normaliser(block.float()))
        normalisers = torch.logsumexp(torch.stack(parts, dim=-1), dim=-1)
        boundaries = (torch.logsumexp(torch.stack(boundary_parts, dim=-1), dim=-1)
                      if boundary_parts else None)
        source = torch.tensor(sources, device=hidden.device)
        target = torch.tensor(targets, device=hidden.device)
        values = self.target_logprobs(hidden[source], normalisers[source], target,
                                      None if boundaries is None else boundaries[source])
        return values, normalisers, boundaries

    def target_logprobs(self, hidden: torch.Tensor, normalisers: torch.Tensor,
                        targets: torch.Tensor,
                        boundaries: torch.Tensor | None = None) -> torch.Tensor:
        """Logprob of ``targets[k]`` after the hidden state ``hidden[k]`` whose log normaliser is
        ``normalisers[k]`` (on CPU): one dot product each; for a :data:`BOUNDARY` target,
        ``boundaries[k]`` (the log normaliser of the word-beginning tokens) less the normaliser."""
        asks_boundary = targets == BOUNDARY
        rows = targets.clamp(min=0)
        logits = (hidden.float() * self.weight[rows].float()).sum(-1)
        bias = self.bias
        if bias is not None:
            logits = logits + bias[rows].float()
        if boundaries is not None:
            logits = torch.where(asks_boundary, boundaries, logits)
        elif bool(asks_boundary.any()):
            raise ValueError("a word-boundary logprob was asked of an output layer without "
                             "a boundary mask")
        return (logits - normalisers).cpu()


def _log_normaliser(logits: torch.Tensor) -> torch.Tensor:
    """Each row's log-sum-exp, as ``torch.logsumexp`` computes it (the same operations, so the
    same float32 result), but in place: ``logits`` is overwritten. ``torch.logsumexp`` allocates
    a copy of the block for ``logits - max``; with blocks of thousands of logits per position
    that copy cost about 5% of the output layer's time."""
    top = logits.amax(dim=-1, keepdim=True)
    top.masked_fill_(top.abs() == float("inf"), 0.0)  # as torch.logsumexp: no inf - inf
    return logits.sub_(top).exp_().sum(dim=-1).log_().add_(top.squeeze(-1))


def _log_normalisers(logits: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Each row's log-sum-exp over all of ``logits`` and over the columns where ``mask`` (float
    0/1) is 1 (-inf where none), in place as :func:`_log_normaliser`: the second costs one
    matrix-vector product over the exponentials the first computes anyway."""
    top = logits.amax(dim=-1, keepdim=True)
    top.masked_fill_(top.abs() == float("inf"), 0.0)
    exp = logits.sub_(top).exp_()
    shift = top.squeeze(-1)
    return exp.sum(dim=-1).log_().add_(shift), (exp @ mask).log_().add_(shift)
