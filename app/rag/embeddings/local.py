"""The `local` provider: all-MiniLM-L6-v2 on the CPU through onnxruntime, from the model files
committed beside this module (`minilm/`: an int8 ONNX graph with pooling inside, and its
tokenizer; `scripts/export_local_model.py` rebuilds them, ADR 0010). Nothing is downloaded,
ever, and neither torch nor transformers is needed to run it.
"""

from __future__ import annotations

import asyncio
import os
import threading
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from app.config import PROVIDER_DEFAULTS
from app.rag.embeddings.base import (
    EmbeddingError,
    SpanCounter,
    Vectors,
    in_batches,
    only_row,
    unit_rows,
)

MODEL, DIM, FLOOR = PROVIDER_DEFAULTS["local"]
MODEL_DIR = Path(__file__).parent / "minilm"
# Word pieces the model reads, [CLS] and [SEP] included (tokenizer.json truncates there).
WINDOW = 256
# Passages per forward pass, and so the longest a query waits behind an ingest (the lock is
# taken per batch): 16 passages of ~200 words take about a quarter of a second on two cores.
BATCH_SIZE = 16


@dataclass(frozen=True, slots=True)
class Model:
    """The ONNX session and its tokenizer. onnxruntime's `run` is safe to call from threads."""

    session: Any  # onnxruntime.InferenceSession: the package ships no type information
    tokenizer: Any  # tokenizers.Tokenizer, likewise

    def encode(self, texts: list[str]) -> Vectors:
        """The texts' vectors, each text run through the graph alone.

        The graph quantises its activations to int8 with one scale per input tensor
        (DynamicQuantizeLinear), so in a batch a text's vector followed its neighbours and
        their padding: cosine down to 0.988 on SciFact's chunks, and two ingests of one
        collection scored differently. Alone, a text's vector is a function of the text (ADR
        0028). It costs 3-15% more CPU than batches of 16 on SciFact's chunks, and pads
        nothing.
        """
        rows = []
        for encoding in self.tokenizer.encode_batch(texts):
            # The batch's padding is cut off again: the text is read at its own length.
            length = sum(encoding.attention_mask)
            ids = np.array([encoding.ids[:length]], dtype=np.int64)
            feed = {
                "input_ids": ids,
                "attention_mask": np.ones_like(ids),
                "token_type_ids": np.zeros_like(ids),
            }
            rows.append(self.session.run(["embedding"], feed)[0])
        vectors: Vectors = np.concatenate(rows) if rows else np.zeros((0, DIM), np.float32)
        return vectors

    def encode_taking(self, texts: Sequence[str], out: Vectors, turns: Turns) -> None:
        """Encode the texts `turns` hands this thread, one at a time, each into its row of
        `out`, until none is left (`LocalEmbedder._encode` runs one per thread)."""
        while (index := turns.take()) is not None:
            out[index] = self.encode([texts[index]])[0]


class Turns:
    """The indexes 0..count-1, each handed to one taker: the threads of a pass take the next
    text as each finishes its last."""

    def __init__(self, count: int) -> None:
        self._next = 0
        self._count = count
        self._lock = threading.Lock()

    def take(self) -> int | None:
        with self._lock:
            if self._next == self._count:
                return None
            self._next += 1
            return self._next - 1


@cache
def counting_tokenizer() -> Any:
    """The model's tokenizer without its cut at WINDOW and its padding, for counting: loaded
    once per process (about 50 ms), apart from the model, so chunking never waits for it.

    Raises:
        EmbeddingError: the file is missing, or tokenizers is not installed.
    """
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise EmbeddingError(f"the local embedder needs {exc.name}; run `make setup`") from exc
    vocabulary = MODEL_DIR / "tokenizer.json"
    if not vocabulary.is_file():
        raise EmbeddingError(f"the local embedder's {vocabulary.name} is missing from {MODEL_DIR}")
    tokenizer = Tokenizer.from_file(str(vocabulary))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def count_tokens(texts: Sequence[str]) -> list[int]:
    """The word pieces the model makes of each text, [CLS] and [SEP] included, uncut.

    Raises:
        EmbeddingError: the tokenizer cannot be loaded.
    """
    if not texts:
        return []
    tokenizer = counting_tokenizer()
    if len(texts) == 1:  # a batch's worker threads cost more than one short text
        return [len(tokenizer.encode(texts[0]).ids)]
    # The fast batch skips the offsets, which counting does not need.
    return [len(encoding.ids) for encoding in tokenizer.encode_batch_fast(list(texts))]


class Spans:
    """A document's word pieces, counted once, and the pieces of any slice of it read off them.

    The tokenizer lowercases and strips accents character by character, then cuts words at
    whitespace and punctuation (each punctuation mark and each CJK ideograph a word of its own)
    and each word into pieces on its own. So a slice whose ends lie between words is, to the
    tokenizer, the document's words inside it: its count is the pieces that start inside it.
    An end inside a word (a long word cut in slices) gets None, and its text is counted.
    """

    __slots__ = ("_offsets", "_starts", "_words")

    def __init__(self, document: str) -> None:
        encoding = counting_tokenizer().encode(document, add_special_tokens=False)
        self._offsets: list[tuple[int, int]] = encoding.offsets
        self._starts: list[int] = [start for start, _ in self._offsets]
        self._words: list[int] = encoding.word_ids

    def __call__(self, start: int, end: int) -> int | None:
        """The word pieces of document[start:end] without [CLS] and [SEP], or None where an end
        lies inside a word."""
        first = bisect_left(self._starts, start)
        if self._inside(start, first):
            return None
        after = bisect_left(self._starts, end, first)
        if self._inside(end, after):
            return None
        return after - first

    def _inside(self, position: int, following: int) -> bool:
        # `following`: the first piece that starts at or after `position`. The position lies
        # inside a word when the piece before it runs past it, or when that piece and the next
        # are of one word (a piece that starts there is the word's continuation, or the gap
        # between them holds what the tokenizer drops, such as a control character).
        if following == 0:
            return False
        if self._offsets[following - 1][1] > position:
            return True
        return following < len(self._starts) and (
            self._words[following - 1] == self._words[following]
        )


def span_counts(document: str) -> Spans:
    """The counter of `document`'s slices (`Spans`), from one pass of the tokenizer over it.

    Raises:
        EmbeddingError: the tokenizer cannot be loaded.
    """
    return Spans(document)


def load_model() -> Model:
    """The model from the committed files, on the CPU.

    Raises:
        EmbeddingError: a file is missing, or onnxruntime or tokenizers is not installed.
    """
    try:
        import onnxruntime
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise EmbeddingError(f"the local embedder needs {exc.name}; run `make setup`") from exc
    graph, vocabulary = MODEL_DIR / "model.onnx", MODEL_DIR / "tokenizer.json"
    for path in (graph, vocabulary):
        if not path.is_file():
            raise EmbeddingError(f"the local embedder's {path.name} is missing from {MODEL_DIR}")
    options = onnxruntime.SessionOptions()
    # One thread per run: a pass runs its texts on as many threads as there are cores instead
    # (`LocalEmbedder._encode`). A text runs alone (ADR 0028), and its small matrices split over
    # two threads left each waiting for the other; when an ingest's other work took a core, the
    # run waited for the thread that lost it. Alone the model ran 8% faster this way, with the
    # same vectors to the bit and the same time for a query (docs/BENCHMARKS.md, issue #33).
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    # Its threads wait for work by sleeping, not spinning: spinning doubled the CPU a pass
    # burns on two cores (2.8 s against 1.4-1.5 s for 40 SciFact abstracts) for no gain in
    # wall time on a shared machine, and took the cores an ingest's conversion, lexing and
    # writing overlap the model with (docs/BENCHMARKS.md, issue #33).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3  # warnings about unused initialisers are noise here
    session = onnxruntime.InferenceSession(
        str(graph), sess_options=options, providers=["CPUExecutionProvider"]
    )
    # The file cuts at MAX_TOKENS and pads to the longest text of a batch (the export sets it).
    return Model(session=session, tokenizer=Tokenizer.from_file(str(vocabulary)))


class LocalEmbedder:
    """MiniLM has no query or passage prefixes: both are embedded alike.

    The model loads once, in a thread: at start-up when the app warms it (`warm`), else on
    first use. Passes run one at a time under a lock, in worker threads: a query waits for at
    most one batch of an ingest, never for the whole of it, and the queries that arrive while a
    pass runs share the next one. A pass runs its texts on a thread per core, each taking the
    next text as it finishes its last (`Model.encode_taking`), every text alone, so a text's
    vector does not depend on the others of its pass.
    """

    provider = "local"

    def __init__(self, *, batch_size: int = BATCH_SIZE, threads: int | None = None) -> None:
        self.model = MODEL
        self.dim = DIM
        self.default_floor = FLOOR
        self.window: int | None = WINDOW
        self._batch_size = batch_size
        # Threads a pass runs on, one text at a time each (`load_model` gives a run one thread).
        self._threads = max(1, min(threads if threads is not None else os.cpu_count() or 1, 8))
        self._lock = asyncio.Lock()
        self._model: Model | None = None
        self._waiting: list[tuple[str, asyncio.Future[Vectors]]] = []
        self._gathering: asyncio.Task[None] | None = None

    @property
    def ready(self) -> bool:
        """Whether the model is loaded: a search now pays no start-up cost."""
        return self._model is not None

    async def warm(self) -> None:
        """Load the model now rather than on the first search."""
        async with self._lock:
            await self._loaded()

    async def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return await in_batches(texts, self._batch_size, self.dim, self._encode)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return count_tokens(texts)

    def span_counts(self, document: str) -> SpanCounter:
        return span_counts(document)

    async def embed_query(self, text: str) -> Vectors:
        answer: asyncio.Future[Vectors] = asyncio.get_running_loop().create_future()
        self._waiting.append((text, answer))
        if self._gathering is None or self._gathering.done():
            self._gathering = asyncio.create_task(self._encode_waiting())
        return await answer

    async def _encode_waiting(self) -> None:
        # No waiting for company: a query that finds the model idle goes at once (a fixed 2 ms
        # window cost one client 2 of its 5.6 ms), and the queries that arrive while a pass
        # runs share the next one, so eight clients still cost a pass of eight texts, not
        # eight passes (docs/BENCHMARKS.md).
        while self._waiting:
            batch = self._waiting[: self._batch_size]
            del self._waiting[: len(batch)]
            try:
                vectors = await self._encode([text for text, _ in batch])
            except Exception as exc:  # every waiting query gets the provider's error
                for _, answer in batch:
                    if not answer.done():
                        answer.set_exception(exc)
                continue
            for row, (_, answer) in enumerate(batch):
                if not answer.done():  # its caller may have gone (a cancelled request)
                    answer.set_result(only_row(vectors[row : row + 1]))

    async def _loaded(self) -> Model:
        if self._model is None:
            self._model = await asyncio.to_thread(load_model)
        return self._model

    async def _encode(self, texts: Sequence[str]) -> Vectors:
        # A thread per core takes the pass's next text as it finishes its last. Dealt out in
        # equal shares, the pass waited for the thread whose share ran longest: its texts were
        # longer, or an ingest's other work took its core for a while (a core stood idle for 7
        # of an ingest's 46 seconds, 4 of the model's 37 alone; issue #33). Each text still runs
        # alone, so its vector is the same whichever thread takes it.
        vectors: Vectors = np.zeros((len(texts), self.dim), np.float32)
        turns = Turns(len(texts))
        threads = max(1, min(self._threads, len(texts)))
        async with self._lock:
            model = await self._loaded()
            await asyncio.gather(
                *(
                    asyncio.to_thread(model.encode_taking, texts, vectors, turns)
                    for _ in range(threads)
                )
            )
        return unit_rows(vectors, len(texts), self.dim, self.provider)

    async def aclose(self) -> None:
        if self._gathering is not None:
            await asyncio.gather(self._gathering, return_exceptions=True)
        async with self._lock:
            self._model = None
