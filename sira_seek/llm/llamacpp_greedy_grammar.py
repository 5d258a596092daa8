"""Greedy grammar-constrained decoding for llama.cpp in process: the argmax is checked first.

llama-cpp-python's sampler chain applies a JSON-schema grammar to every vocabulary entry at
every step before it samples: Gemma 3's 262k tokens, which cost 80-100 ms per generated token
here against about 25 ms for the model itself. For greedy decoding the same token comes out when
the grammar is first asked about the unconstrained argmax alone and applied to the whole
vocabulary only when it rejects that token: the argmax of the allowed tokens is the
unconstrained argmax whenever that one is allowed (llama.cpp's own ``common_sampler`` does the
same). Sampled decoding (temperature > 0) keeps llama-cpp-python's order: checking a sampled
token first would change the distribution it is drawn from.

The grammar sampler is llama.cpp's own (``llama_sampler_init_grammar``); only the order of the
calls changes, through the custom-sampler interface of llama.cpp's sampler chain.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import llama_cpp
import numpy as np
from llama_cpp import Llama
from llama_cpp import _internals as internals
from llama_cpp.llama_grammar import LlamaGrammar


class ArgmaxFirstGrammar:
    """A sampler for a llama.cpp chain: keeps the candidates untouched when the grammar allows
    their argmax, else masks them all with the grammar; advances the grammar on accept."""

    def __init__(self, vocab: Any, grammar: LlamaGrammar) -> None:
        self.grammar = llama_cpp.llama_sampler_init_grammar(
            vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
        )
        if not self.grammar:
            raise ValueError("llama.cpp refused the grammar")
        self.full_masks = 0  # steps where the argmax was not allowed (for tests and logs)
        iface = llama_cpp.llama_sampler_i()
        # The callbacks must outlive the chain's use of them: kept on self.
        self._apply = llama_cpp.llama_sampler_i_apply(self._apply_cb)
        self._accept = llama_cpp.llama_sampler_i_accept(self._accept_cb)
        self._reset = llama_cpp.llama_sampler_i_reset(self._reset_cb)
        iface.apply, iface.accept, iface.reset = self._apply, self._accept, self._reset
        iface.name = llama_cpp.llama_sampler_i_name(0)
        iface.clone = llama_cpp.llama_sampler_i_clone(0)
        iface.free = llama_cpp.llama_sampler_i_free(0)
        self._iface = iface
        self.sampler = llama_cpp.llama_sampler()
        self.sampler.iface = ctypes.pointer(iface)
        self.sampler.ctx = None

    def _apply_cb(self, _sampler: Any, cur_p: Any) -> None:
        array = cur_p.contents
        data = np.ctypeslib.as_array(array.data, shape=(array.size,))
        best = int(np.argmax(data["logit"]))
        single = llama_cpp.llama_token_data(int(data["id"][best]), float(data["logit"][best]), 0.0)
        one = llama_cpp.llama_token_data_array(
            data=ctypes.pointer(single), size=1, selected=-1, sorted=False
        )
        llama_cpp.llama_sampler_apply(self.grammar, ctypes.byref(one))
        if math.isinf(single.logit):
            self.full_masks += 1
            llama_cpp.llama_sampler_apply(self.grammar, cur_p)

    def _accept_cb(self, _sampler: Any, token: int) -> None:
        llama_cpp.llama_sampler_accept(self.grammar, token)

    def _reset_cb(self, _sampler: Any) -> None:
        llama_cpp.llama_sampler_reset(self.grammar)

    def __del__(self) -> None:
        if getattr(self, "grammar", None):
            llama_cpp.llama_sampler_free(self.grammar)
            self.grammar = None


class GreedyGrammarLlama(Llama):  # type: ignore[misc]
    """``llama_cpp.Llama`` whose greedy grammar-constrained calls check the argmax first."""

    last_grammar_sampler: ArgmaxFirstGrammar | None = None

    def _init_sampler(self, *args: Any, **kwargs: Any) -> Any:
        grammar = kwargs.get("grammar")
        if args or grammar is None or kwargs.get("temp") != 0.0 or kwargs.get("logits_processor"):
            return super()._init_sampler(*args, **kwargs)
        sampler = internals.LlamaSampler()
        sampler.add_penalties(
            n_vocab=self._n_vocab,
            penalty_last_n=self.last_n_tokens_size,
            penalty_repeat=kwargs.get("repeat_penalty", 1.0),
            penalty_freq=kwargs.get("frequency_penalty", 0.0),
            penalty_present=kwargs.get("presence_penalty", 0.0),
        )
        checker = ArgmaxFirstGrammar(self._model.vocab, grammar)
        llama_cpp.llama_sampler_chain_add(sampler.sampler, ctypes.pointer(checker.sampler))
        # LlamaSampler removes its custom samplers from the chain before freeing it (the chain
        # would otherwise free memory Python owns) and keeps them alive until then.
        index = llama_cpp.llama_sampler_chain_n(sampler.sampler) - 1
        sampler.custom_samplers.append((index, checker))  # type: ignore[arg-type]  # duck-typed
        sampler.add_greedy()
        self.last_grammar_sampler = checker
        return sampler
