"""The model's output layer as the prefix-shared passes use it: logprobs of chosen tokens after
hidden states, never holding a whole vocabulary of logits per position (:class:`OutputLayer`)."""

from __future__ import annotations

from typing import cast

import torch

from syntaxgym_helm.clients.local import cpu_kernels


class OutputLayer:
    """The linear layer from final hidden states to vocabulary logits (``model.get_output_
    embeddings()``), applied a block of the vocabulary at a time.

    A position's logprob of a token is the token's logit (one dot product with the layer's row
    for it) less the log of the softmax's normaliser over the vocabulary; the normaliser is
    summed over blocks of ``VOCABULARY_BLOCK`` rows, so the logits never fill memory, and it is
    returned so that a stored prefix can later score any token with one dot product. On CPU in
    float32 the blocks may run on oneDNN-packed weights (:meth:`pack_for_onednn`).
    """

    VOCABULARY_BLOCK = 4096  # output-layer rows turned into logits at once

    def __init__(self, head: torch.nn.Module) -> None:
        if not isinstance(getattr(head, "weight", None), torch.Tensor):
            raise ValueError("no separate linear output layer")
        self.head = head
        self.packed_blocks: list[torch.Tensor] = []  # oneDNN-packed blocks of ``weight``

    @property
    def weight(self) -> torch.Tensor:
        return cast(torch.Tensor, self.head.weight)  # a Tensor: checked in __init__

    @property
    def bias(self) -> torch.Tensor | None:
        return getattr(self.head, "bias", None)

    def pack_for_onednn(self, batch_hint: int, *, release_originals: bool = False) -> None:
        """Pack each vocabulary block's weights for oneDNN (``batch_hint``: the usual number of
        positions in a pass); raises when oneDNN cannot. ``release_originals``: hand back each
        block's file pages as soon as its packed copy exists
        (:func:`.cpu_kernels.release_file_pages`), so that the table (Gemma-3's: 671 MB) is never
        in memory twice."""
        weight = self.weight
        self.packed_blocks = []  # a failure below leaves none: the default kernels
        mappings = cpu_kernels.file_mappings() if release_originals else []
        blocks = []
        for start in range(0, weight.shape[0], self.VOCABULARY_BLOCK):
            rows = weight[start: start + self.VOCABULARY_BLOCK]
            blocks.append(cpu_kernels.pack_weight(rows, batch_hint))
            if release_originals:
                cpu_kernels.release_file_pages([rows], mappings)
        self.packed_blocks = blocks

    def logprobs(self, hidden: torch.Tensor, sources: list[int], targets: list[int],
                 packed: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        """Logprob of ``targets[k]`` after the hidden state ``hidden[sources[k]]`` (on CPU), and
        each row of ``hidden``'s log normaliser (float32, on its device)."""
        weight = self.weight
        bias = self.bias
        parts = []
        for k, start in enumerate(range(0, weight.shape[0], self.VOCABULARY_BLOCK)):
            rows = weight[start: start + self.VOCABULARY_BLOCK]
            block_bias = None if bias is None else bias[start: start + self.VOCABULARY_BLOCK]
            if packed and self.packed_blocks:
                block = cpu_kernels.packed_linear(hidden, self.packed_blocks[k], block_bias,
                                                  rows.shape[0])
            else:
                block = torch.nn.functional.linear(hidden, rows, block_bias)
            parts.append(_log_normaliser(block.float()))
        normalisers = torch.logsumexp(torch.stack(parts, dim=-1), dim=-1)
        source = torch.tensor(sources, device=hidden.device)
        target = torch.tensor(targets, device=hidden.device)
        return self.target_logprobs(hidden[source], normalisers[source], target), normalisers

    def target_logprobs(self, hidden: torch.Tensor, normalisers: torch.Tensor,
                        targets: torch.Tensor) -> torch.Tensor:
        """Logprob of ``targets[k]`` after the hidden state ``hidden[k]`` whose log normaliser is
        ``normalisers[k]`` (on CPU): one dot product each."""
        logits = (hidden.float() * self.weight[targets].float()).sum(-1)
        bias = self.bias
        if bias is not None:
            logits = logits + bias[targets].float()
        return (logits - normalisers).cpu()


def _log_normaliser(logits: torch.Tensor) -> torch.Tensor:
    """Each row's log-sum-exp, as ``torch.logsumexp`` computes it (the same operations, so the
    same float32 result), but in place: ``logits`` is overwritten. ``torch.logsumexp`` allocates
    a copy of the block for ``logits - max``; with blocks of thousands of logits per position
    that copy cost about 5% of the output layer's time."""
    top = logits.amax(dim=-1, keepdim=True)
    top.masked_fill_(top.abs() == float("inf"), 0.0)  # as torch.logsumexp: no inf - inf
    return logits.sub_(top).exp_().sum(dim=-1).log_().add_(top.squeeze(-1))
