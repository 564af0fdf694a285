"""The 1,000-feature bag of words of the IMDB experiment, as a sparse (CSR) count matrix.

Metelli et al. used the first 1,000 columns of aclImdb's ``labeledBow.feat`` files: raw counts of
the 1,000 most frequent words of the aclImdb vocabulary. From raw review texts we rebuild that
with this rule (version ``bow-v1``):

1. tokens: the text is lower-cased, ``<br />`` tags become spaces, and tokens are runs of
   letters joined by inner apostrophes or hyphens (``don't``, ``sci-fi``) plus the marks ``!``
   and ``?``; digits and other punctuation separate tokens and are dropped; a final ``'s``
   is removed (``it's`` -> ``it``, ``film's`` -> ``film``);
2. vocabulary: the 1,000 tokens with the highest total count over all reviews of the corpus
   (ties: code-point order of the token); column j is the j-th most frequent token;
3. features: the count of each vocabulary token in the review (floats, not normalised).

On the npm reviews this vocabulary shares 984 of its 1,000 words with the first 1,000 lines of
aclImdb's ``imdb.vocab`` (the 16 others rank 797th to 1,000th in either list), and it reproduces
the shared LR and OGD learning curves (see the tests).
"""

from __future__ import annotations

import hashlib
import re
import zipfile
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from risingbandits.outputs import atomic_write
from risingbandits.user_cache import private_dir

RULE = "bow-v1"
N_FEATURES = 1000
_TOKEN = re.compile(r"[^\W\d_]+(?:['\-][^\W\d_]+)*|[!?]")
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


def tokenize(text: str) -> list[str]:
    """The tokens of one review (rule ``bow-v1``, steps 1)."""
    words = _TOKEN.findall(_BREAK.sub(" ", text.lower()))
    return [w[:-2] if w.endswith("'s") else w for w in words]


def corpus_digest(texts: Sequence[str], labels: np.ndarray) -> str:
    """sha256 of a labelled corpus (labels, then texts), the key of its cached features."""
    digest = hashlib.sha256(np.asarray(labels, np.int8).tobytes())
    for text in texts:
        digest.update(text.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


@dataclass(frozen=True, eq=False)
class BagOfWords:
    """Reviews as a CSR count matrix: row j has columns ``indices[indptr[j]:indptr[j+1]]``."""

    indptr: np.ndarray
    indices: np.ndarray
    counts: np.ndarray
    labels: np.ndarray
    vocabulary: tuple[str, ...]
    digest: str

    @property
    def n_docs(self) -> int:
        return int(self.labels.shape[0])

    @property
    def n_features(self) -> int:
        return len(self.vocabulary)

    def dense(self, rows: Sequence[int] | np.ndarray) -> np.ndarray:
        """The given rows as a dense float matrix (for scikit-learn and tests)."""
        rows = np.asarray(rows, np.int64)
        out = np.zeros((rows.shape[0], self.n_features))
        for r, j in enumerate(rows):
            lo, hi = self.indptr[j], self.indptr[j + 1]
            out[r, self.indices[lo:hi]] = self.counts[lo:hi]
        return out

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(indptr, indices, counts, labels): the arguments of the compiled learners."""
        return self.indptr, self.indices, self.counts, self.labels


def bag_of_words(
    texts: Sequence[str], labels: Sequence[int] | np.ndarray, n_features: int = N_FEATURES
) -> BagOfWords:
    """Featurise a labelled corpus with rule ``bow-v1`` (vocabulary from this corpus)."""
    label_array = np.asarray(labels, np.int8)
    if label_array.shape != (len(texts),) or not np.isin(label_array, (0, 1)).all():
        raise ValueError("labels must be one 0 or 1 per review")
    docs = [tokenize(t) for t in texts]
    totals: Counter[str] = Counter()
    for doc in docs:
        totals.update(doc)
    ranked = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))[:n_features]
    vocabulary = tuple(word for word, _ in ranked)
    column = {word: j for j, word in enumerate(vocabulary)}
    indptr = np.zeros(len(docs) + 1, np.int64)
    indices: list[int] = []
    counts: list[int] = []
    for r, doc in enumerate(docs):
        row = Counter(column[w] for w in doc if w in column)
        for j in sorted(row):
            indices.append(j)
            counts.append(row[j])
        indptr[r + 1] = len(indices)
    return BagOfWords(
        indptr,
        np.asarray(indices, np.int32),
        np.asarray(counts, np.float64),
        label_array,
        vocabulary,
        corpus_digest(texts, label_array),
    )


def _cache_file(cache_dir: Path, digest: str, n_features: int) -> Path:
    return cache_dir / f"{RULE}-{n_features}-{digest[:16]}.npz"


def _checked_cache(
    data: Mapping[str, np.ndarray], labels: np.ndarray, n_features: int, digest: str
) -> BagOfWords:
    """The features of an opened cache file, every field checked first: the compiled learners
    index their weights by ``indices``, row by row from ``indptr``, without bounds checks, so a
    damaged file must not reach them. Raises ValueError naming the first field that fails."""
    indptr, indices, counts, cached, vocabulary = (
        data[k] for k in ("indptr", "indices", "counts", "labels", "vocabulary")
    )
    n_docs = labels.shape[0]
    for field, array, dtype, shape in (
        ("indptr", indptr, np.int64, (n_docs + 1,)),
        ("indices", indices, np.int32, (indices.size,)),
        ("counts", counts, np.float64, (indices.size,)),
        ("labels", cached, np.int8, (n_docs,)),
    ):
        if array.dtype != dtype or array.shape != shape:
            raise ValueError(
                f"{field} is {array.dtype} of shape {array.shape}, not {np.dtype(dtype)} of shape "
                f"{shape}"
            )
    words = vocabulary.dtype.kind == "U" or vocabulary.size == 0  # () is saved as float64
    if vocabulary.ndim != 1 or vocabulary.size > n_features or not words:
        raise ValueError(
            f"vocabulary is {vocabulary.dtype} of shape {vocabulary.shape}, not at most "
            f"{n_features} words"
        )
    if indptr[0] != 0 or indptr[-1] != indices.size or (np.diff(indptr) < 0).any():
        raise ValueError(
            f"indptr runs {indptr[0]} .. {indptr[-1]}: not non-decreasing from 0 to the "
            f"{indices.size} indices"
        )
    outside = (indices < 0) | (indices >= vocabulary.size)
    if outside.any():
        raise ValueError(
            f"indices holds {indices[outside][0]}: not within [0, {vocabulary.size}) "
            "(the vocabulary)"
        )
    not_counts = ~(np.isfinite(counts) & (counts > 0))
    if not_counts.any():
        raise ValueError(f"counts holds {counts[not_counts][0]}: not a positive finite count")
    if not np.array_equal(cached, labels):
        first = int(np.flatnonzero(cached != labels)[0])
        raise ValueError(
            f"labels[{first}] is {cached[first]}, not {labels[first]} (the corpus' label)"
        )
    return BagOfWords(indptr, indices, counts, cached, tuple(str(w) for w in vocabulary), digest)


def cached_bag_of_words(
    texts: Sequence[str],
    labels: Sequence[int] | np.ndarray,
    cache_dir: str | Path,
    n_features: int = N_FEATURES,
    notify: Callable[[str], None] | None = None,
) -> BagOfWords:
    """:func:`bag_of_words`, stored in ``cache_dir`` under the corpus digest and reused;
    ``notify(message)`` is told when the features must be built, and why when a cached file
    cannot be read (truncated, not an ``.npz``, arrays missing): it is then built again and
    replaced. A ``cache_dir`` that another user could write
    (:func:`~risingbandits.user_cache.private_dir`) is not used: the features are built in
    memory."""
    label_array = np.asarray(labels, np.int8)
    digest = corpus_digest(texts, label_array)
    path = _cache_file(Path(cache_dir), digest, n_features)
    say = notify or (lambda message: None)
    try:  # a folder another user could write is neither read nor written
        path = private_dir(path.parent) / path.name  # by its real path
    except OSError as exc:
        say(f"the bag of words is not cached ({exc}): building it in memory ...")
        return bag_of_words(texts, label_array, n_features)
    if path.is_file():
        try:
            with np.load(path, allow_pickle=False) as data:
                return _checked_cache(data, label_array, n_features, digest)
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            say(f"the cached features {path} cannot be read ({reason}): building them again")
    say(f"building the bag of words of {len(texts):,} reviews (once per corpus) ...")
    bow = bag_of_words(texts, label_array, n_features)
    save = partial(
        np.savez,
        indptr=bow.indptr,
        indices=bow.indices,
        counts=bow.counts,
        labels=bow.labels,
        vocabulary=np.asarray(bow.vocabulary),
    )
    atomic_write(path, save)
    return bow
