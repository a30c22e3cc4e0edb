"""Fashion-MNIST, offline first, held in memory once, served as shuffled minibatches.

Introduced in notebook 00 and used by every training notebook (02, 05, 06, 07, 08).

Where the four original files are looked for, in order:

1. an explicit directory: the ``root`` argument, else the environment variable ``FASHION_MNIST_DIR``
   (when given, it must hold all four files: nothing else is tried);
2. the Debian package ``dataset-fashion-mnist`` (``/usr/share/datasets/fashion-mnist``);
3. MXNet's cache, ``$MXNET_HOME/datasets/fashion-mnist`` (``MXNET_HOME`` defaults to ``~/.mxnet``);
4. a download from the upstream mirrors into that cache (only if ``download=True``).

Each file may be gzipped (``*.gz``) or not. Its *decompressed* bytes are checked against the
SHA-256 sums below: Debian recompresses the ``.gz`` files, so checksums of the compressed files
(MXNet keeps SHA-1 sums of those) do not match them, while the content is the same. A file that
fails the check is never replaced silently: the error names it and says how to fix it.

Batches are cut from arrays already in memory (float32 images scaled to [0, 1], shape
``(N, 1, 28, 28)``, int32 labels), with no per-example Python transform: one epoch of the 60,000
training images is a few hundred NumPy slices and copies.
"""
import functools
import gzip
import hashlib
import os
import threading
import urllib.request

import numpy as np
import mxnet as mx

from helpers import checks

__all__ = ['TEXT_LABELS', 'get_fashion_mnist_labels', 'find_data_dir', 'load_arrays',
           'ArrayLoader', 'load_data_fashion_mnist', 'as_dataset',
           'DataNotFoundError', 'ChecksumError']

ENV_VAR = 'FASHION_MNIST_DIR'
DEBIAN_DIR = '/usr/share/datasets/fashion-mnist'
# Mirrors tried in order by the last-resort download: MXNet's own, then Zalando's.
MIRRORS = (
    'https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/gluon/dataset/fashion-mnist/',
    'http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/',
)
DOWNLOAD_TIMEOUT = 10.0  # seconds per file and mirror, DNS included

# name -> (sha256 of the decompressed file, decompressed size in bytes)
FILES = {
    'train-images-idx3-ubyte': ('c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888', 47040016),
    'train-labels-idx1-ubyte': ('bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9', 60008),
    't10k-images-idx3-ubyte': ('5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b', 7840016),
    't10k-labels-idx1-ubyte': ('0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34', 10008),
}

TEXT_LABELS = ['t-shirt', 'trouser', 'pullover', 'dress', 'coat',
               'sandal', 'shirt', 'sneaker', 'bag', 'ankle boot']

HOW_TO_GET = (
    'Ways to get Fashion-MNIST: `apt-get install dataset-fashion-mnist` (Debian/Ubuntu, offline '
    f'mirror friendly; `make setup` does this as root), or copy the four files into a directory and '
    f'set {ENV_VAR}=that/directory, or run once with network access so they are downloaded into '
    "MXNet's cache.")


class DataNotFoundError(FileNotFoundError):
    """Fashion-MNIST files could not be found (or downloaded) (notebook 00)."""


class ChecksumError(ValueError):
    """A Fashion-MNIST file exists but its content is not the expected one (notebook 00)."""


def get_fashion_mnist_labels(labels):
    """Text names of numeric Fashion-MNIST labels, as ``d2l.get_fashion_mnist_labels`` (notebook 00)."""
    return [TEXT_LABELS[i] for i in checks.class_ids(labels, len(TEXT_LABELS))]


def mxnet_cache_dir():
    """``$MXNET_HOME/datasets/fashion-mnist``, where Gluon's own FashionMNIST dataset keeps its files."""
    home = os.environ.get('MXNET_HOME', os.path.join(os.path.expanduser('~'), '.mxnet'))
    return os.path.join(home, 'datasets', 'fashion-mnist')


def _file_in(directory, name):
    """Path of ``name`` or ``name.gz`` in ``directory``, or None."""
    for candidate in (name, name + '.gz'):
        path = os.path.join(directory, candidate)
        if os.path.isfile(path):
            return path
    return None


def _missing(directory):
    return [name for name in FILES if _file_in(directory, name) is None]


def _download(name, directory, mirrors, timeout):
    """Fetch ``name.gz`` from the first mirror that answers; return the list of failures."""
    os.makedirs(directory, exist_ok=True)
    errors = []
    for base in mirrors:
        url = base + name + '.gz'
        result = {}

        def fetch():
            try:
                with urllib.request.urlopen(url, timeout=timeout) as response:
                    result['data'] = response.read()
            except Exception as exc:  # noqa: BLE001 -- reported below, with the URL
                result['error'] = exc

        # urlopen's timeout does not cover name resolution; a thread with a deadline does.
        worker = threading.Thread(target=fetch, daemon=True)
        worker.start()
        worker.join(timeout)
        if 'data' in result:
            tmp = os.path.join(directory, name + '.gz.part')
            with open(tmp, 'wb') as f:
                f.write(result['data'])
            os.replace(tmp, os.path.join(directory, name + '.gz'))
            return []
        errors.append(f'{url}: {result.get("error", f"no answer within {timeout:g} s")}')
    return errors


def find_data_dir(root=None, download=True, mirrors=MIRRORS, timeout=DOWNLOAD_TIMEOUT):
    """Return ``(directory, source)`` of a directory holding all four Fashion-MNIST files (notebook 00).

    ``source`` is one of ``'argument'``, ``'environment'``, ``'debian'``, ``'mxnet-cache'``,
    ``'download'``. Raises :class:`DataNotFoundError` naming what is missing and where it looked.
    """
    root = None if root is None else checks.path(root, 'root')
    checks.flag(download, 'download')
    mirrors, timeout = checks.strings(mirrors, 'mirrors', empty=True), checks.seconds(timeout, 'timeout')
    explicit, source = (root, 'argument') if root is not None else (os.environ.get(ENV_VAR), 'environment')
    if explicit:
        missing = _missing(explicit)
        if missing:
            where = 'the directory given' if source == 'argument' else f'${ENV_VAR}'
            raise DataNotFoundError(
                f'{where} {explicit!r} has no {missing[0]}(.gz)'
                + (f' (also missing: {", ".join(missing[1:])})' if missing[1:] else '')
                + f'. {HOW_TO_GET}')
        return explicit, source

    tried = []
    for directory, source in ((DEBIAN_DIR, 'debian'), (mxnet_cache_dir(), 'mxnet-cache')):
        missing = _missing(directory)
        if not missing:
            return directory, source
        tried.append(f'{directory} ({source}): ' + ('not there' if len(missing) == len(FILES)
                                                    else f'missing {", ".join(missing)}'))
    if download:
        cache = mxnet_cache_dir()
        for name in _missing(cache):
            errors = _download(name, cache, mirrors, timeout)
            if errors:
                tried.append('download: ' + '; '.join(errors))
                break
        else:
            return cache, 'download'
    else:
        tried.append('download: not attempted (download=False)')
    raise DataNotFoundError('Fashion-MNIST not found. Looked in:\n  ' + '\n  '.join(tried)
                            + f'\n{HOW_TO_GET}')


def _read_verified(path, name):
    opener = gzip.open if path.endswith('.gz') else open
    try:
        with opener(path, 'rb') as f:
            raw = f.read()
    except (OSError, EOFError) as exc:  # truncated or not a gzip file
        raise ChecksumError(f'{path} is unreadable ({exc}); delete it and get it again. '
                            f'{HOW_TO_GET}') from exc
    sha, size = FILES[name]
    digest = hashlib.sha256(raw).hexdigest()
    if digest != sha:
        raise ChecksumError(
            f'{path} does not have the expected content ({len(raw)} bytes decompressed, expected '
            f'{size}; sha256 {digest[:12]}..., expected {sha[:12]}...). It was not replaced: delete '
            f'it (or reinstall dataset-fashion-mnist) and run again. {HOW_TO_GET}')
    return raw


def _parse_idx(raw, name):
    """Parse an IDX file (big-endian header: magic, dims) into a uint8 array."""
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], 'big') for i in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


@functools.lru_cache(maxsize=4)
def _load_dir(directory):
    out = {}
    for name in FILES:
        out[name] = _parse_idx(_read_verified(_file_in(directory, name), name), name)
    return out


def load_arrays(train=True, root=None, download=True):
    """``(images, labels)`` as NumPy arrays: float32 ``(N, 1, 28, 28)`` in [0, 1] and int32 ``(N,)``
    (notebook 00).

    Files are read, verified and decoded once per process; later calls return the same arrays. The
    decoded arrays are kept in a cache on disk (``$MXDP_DATA_CACHE``, default
    ``~/.cache/mxdp/fashion-mnist``) that later processes map read-only, as long as the files they
    came from are unchanged.
    """
    train = checks.flag(train, 'train')
    directory, _ = find_data_dir(root, download)
    return _as_float(os.path.abspath(directory), train)


@functools.lru_cache(maxsize=4)
def _as_float(directory, train):
    prefix = 'train' if train else 't10k'
    key = _cache_key(directory, prefix)
    found = _from_cache(key, prefix)
    if found is not None:
        return found
    raw = _load_dir(directory)
    images = raw[f'{prefix}-images-idx3-ubyte']
    labels = raw[f'{prefix}-labels-idx1-ubyte']
    images = (images.astype(np.float32) / 255.0)[:, None, :, :]
    images.setflags(write=False)
    labels = labels.astype(np.int32)
    labels.setflags(write=False)
    _to_cache(key, prefix, images, labels)
    return images, labels


# The decoded arrays, kept on disk for the next process (every kernel, every worker of a distributed
# job): decompressing, verifying and converting the training set takes 1.5-2 s of CPU in each process
# that reads it, some hundred times in a test run; mapping the cached float32 array takes milliseconds,
# and the processes share its pages. A cache file is named after the source files as they are now
# (path, size, modification time, inode): a source file that changes (replaced, damaged) is read and
# verified again, and fails as before. It is written whole and renamed into place, so a reader never
# sees half of one; one that cannot be read or written is skipped (decoded as before). At most
# CACHE_KEEP entries per set are kept (the newest): files read from elsewhere once (a test's copy)
# do not pile up.
CACHE_ENV, CACHE_KEEP = 'MXDP_DATA_CACHE', 2


def _cache_dir():
    home = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    return os.environ.get(CACHE_ENV) or os.path.join(home, 'mxdp', 'fashion-mnist')


def _cache_key(directory, prefix):
    parts = []
    for name in (f'{prefix}-images-idx3-ubyte', f'{prefix}-labels-idx1-ubyte'):
        path = _file_in(directory, name)
        st = os.stat(path) if path else None
        parts.append((os.path.realpath(path), st.st_size, st.st_mtime_ns, st.st_ino, FILES[name][0]) if st else name)
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:20]


def _cache_paths(key, prefix):
    base = os.path.join(_cache_dir(), f'{prefix}-{key}')
    return base + '-images.npy', base + '-labels.npy'


def _from_cache(key, prefix):
    """``(images, labels)`` mapped read-only from the cache, or None (not there, or not whole)."""
    n = (FILES[f'{prefix}-labels-idx1-ubyte'][1] - 8)
    try:
        images, labels = (np.load(p, mmap_mode='r') for p in _cache_paths(key, prefix))
    except (OSError, ValueError):
        return None
    if (images.shape, images.dtype, labels.shape, labels.dtype) != ((n, 1, 28, 28), np.float32, (n,), np.int32):
        return None
    return images, labels


def _to_cache(key, prefix, images, labels):
    import tempfile
    try:
        os.makedirs(_cache_dir(), exist_ok=True)
        for path, array in zip(_cache_paths(key, prefix)[::-1], (labels, images)):    # the images last
            fd, tmp = tempfile.mkstemp(dir=_cache_dir(), suffix='.tmp')
            try:
                with os.fdopen(fd, 'wb') as f:
                    np.save(f, array)
                os.replace(tmp, path)
            finally:
                if os.path.exists(tmp):
                    os.remove(tmp)
        entries = {}
        for name in os.listdir(_cache_dir()):
            if name.startswith(f'{prefix}-') and name.endswith('-images.npy'):
                entries[name[:-len('-images.npy')]] = os.path.getmtime(os.path.join(_cache_dir(), name))
        for stale in sorted(entries, key=entries.get, reverse=True)[CACHE_KEEP:]:
            for suffix in ('-images.npy', '-labels.npy'):
                os.remove(os.path.join(_cache_dir(), stale + suffix))
    except OSError:
        pass


def as_dataset(train=True, root=None):
    """The same data as a ``gluon.data.ArrayDataset``, for ``gluon.data.DataLoader`` (notebook 00; the
    tutorial-style loop of ``benchmarks/train_epoch.py``)."""
    images, labels = load_arrays(train, root)
    return mx.gluon.data.ArrayDataset(images, labels)


class ArrayLoader:
    """Minibatches ``(X, y)`` of in-memory arrays as NDArrays, like a ``gluon.data.DataLoader``
    (notebook 00; used by every training notebook).

    ``shuffle=True`` draws a new permutation every epoch from its own generator seeded with ``seed``,
    so two loaders with the same seed yield the same batches in the same order. ``last_batch`` is
    ``'keep'`` (a smaller final batch) or ``'discard'``, as in Gluon. Batches are created on
    ``ctx`` (the CPU by default: the training loop decides where they go next).
    """

    def __init__(self, X, y, batch_size, shuffle=False, seed=None, last_batch='keep', ctx=None):
        batch_size = checks.whole(batch_size, 'batch_size', 1)
        checks.labels(X, y)
        checks.choice(last_batch, 'last_batch', ('keep', 'discard'))
        shuffle, seed = checks.flag(shuffle, 'shuffle'), None if seed is None else checks.whole(seed, 'seed')
        ctx = None if ctx is None else checks.context(ctx, 'ctx')
        if len(X) == 0:
            raise ValueError('cannot load batches from an empty dataset')
        self.X, self.y = X, y
        self.batch_size = int(batch_size)
        self.shuffle, self.last_batch = shuffle, last_batch
        self.ctx = ctx or mx.cpu()
        self._rng = np.random.default_rng(seed)

    def __len__(self):
        n, b = len(self.X), self.batch_size
        return n // b if self.last_batch == 'discard' else -(-n // b)

    def __iter__(self):
        n, b = len(self.X), self.batch_size
        order = self._rng.permutation(n) if self.shuffle else None
        for i in range(len(self)):
            if order is None:
                X, y = self.X[i * b:(i + 1) * b], self.y[i * b:(i + 1) * b]
            else:
                idx = np.sort(order[i * b:(i + 1) * b])  # sorted: faster gather, same batch content
                X, y = self.X[idx], self.y[idx]
            yield mx.nd.array(X, ctx=self.ctx, dtype=X.dtype), mx.nd.array(y, ctx=self.ctx, dtype=y.dtype)


def load_data_fashion_mnist(batch_size, n_train=None, n_test=None, seed=0, root=None):
    """``(train_iter, test_iter)`` over Fashion-MNIST, as ``d2l.load_data_fashion_mnist`` returns
    (notebook 00; used by every training notebook).

    The training iterator reshuffles every epoch (reproducibly, from ``seed``); the test iterator
    does not. ``n_train`` / ``n_test`` keep only the first examples, for quick runs on CPUs.
    """
    seed = None if seed is None else checks.whole(seed, 'seed')
    X, y = load_arrays(True, root)
    Xt, yt = load_arrays(False, root)
    for n, name, total in ((n_train, 'n_train', len(X)), (n_test, 'n_test', len(Xt))):
        if n is not None and checks.whole(n, name, 1) > total:
            raise ValueError(f'{name} must be at most {total}, got {n}')
    X, y = X[:n_train], y[:n_train]
    Xt, yt = Xt[:n_test], yt[:n_test]
    return (ArrayLoader(X, y, batch_size, shuffle=True, seed=seed),
            ArrayLoader(Xt, yt, batch_size, shuffle=False))
