"""helpers.data: the look-up order, checksums, clear errors, and fast in-memory batches.

The error tests build their own small directories; the loading tests use the real data set from
wherever `find_data_dir` finds it (make setup installs the Debian package)."""
import gzip
import os
import shutil
import socket
import time

import numpy as np
import pytest

from helpers import data


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """No data anywhere: explicit dir unset, Debian dir and MXNet cache pointed at empty places."""
    monkeypatch.delenv(data.ENV_VAR, raising=False)
    monkeypatch.setattr(data, 'DEBIAN_DIR', str(tmp_path / 'no-debian'))
    monkeypatch.setenv('MXNET_HOME', str(tmp_path / 'mxnet-home'))
    monkeypatch.setenv(data.CACHE_ENV, str(tmp_path / 'decoded'))
    return tmp_path


@pytest.fixture(scope='module')
def real_dir():
    directory, _ = data.find_data_dir(download=False)
    return directory


def _copy_all(src, dst):
    os.makedirs(dst, exist_ok=True)
    for name in data.FILES:
        shutil.copy(data._file_in(src, name), dst)


def test_explicit_dir_missing_a_file_names_it_and_the_fixes(isolated, real_dir):
    d = isolated / 'fm'
    _copy_all(real_dir, d)
    os.remove(data._file_in(str(d), 't10k-labels-idx1-ubyte'))
    with pytest.raises(data.DataNotFoundError) as e:
        data.find_data_dir(root=str(d))
    msg = str(e.value)
    assert 't10k-labels-idx1-ubyte' in msg
    assert 'apt-get install dataset-fashion-mnist' in msg and data.ENV_VAR in msg


def test_env_var_dir_is_used_and_checked(isolated, real_dir, monkeypatch):
    monkeypatch.setenv(data.ENV_VAR, str(isolated / 'nowhere'))
    with pytest.raises(data.DataNotFoundError, match=r'\$FASHION_MNIST_DIR'):
        data.find_data_dir()
    monkeypatch.setenv(data.ENV_VAR, real_dir)
    assert data.find_data_dir() == (real_dir, 'environment')


def test_lookup_order_debian_then_mxnet_cache(isolated, real_dir, monkeypatch):
    cache = data.mxnet_cache_dir()
    _copy_all(real_dir, cache)
    assert data.find_data_dir(download=False) == (cache, 'mxnet-cache')
    monkeypatch.setattr(data, 'DEBIAN_DIR', real_dir)
    assert data.find_data_dir(download=False) == (real_dir, 'debian')


@pytest.mark.parametrize('damage', ['truncate', 'alter', 'not-gzip'])
def test_corrupt_file_is_a_checksum_error_naming_it_and_is_not_replaced(isolated, real_dir, damage):
    d = isolated / 'fm'
    _copy_all(real_dir, d)
    victim = data._file_in(str(d), 'train-labels-idx1-ubyte')
    raw = gzip.open(victim).read() if victim.endswith('.gz') else open(victim, 'rb').read()
    if damage == 'truncate':
        blob = open(victim, 'rb').read()
        open(victim, 'wb').write(blob[: len(blob) // 2])
    elif damage == 'alter':
        altered = bytearray(raw)
        altered[100] ^= 0xFF
        with (gzip.open if victim.endswith('.gz') else open)(victim, 'wb') as f:
            f.write(bytes(altered))
    else:
        open(victim, 'wb').write(b'this is not the file you are looking for')
    before = open(victim, 'rb').read()
    with pytest.raises(data.ChecksumError) as e:
        data.load_arrays(root=str(d))
    assert victim in str(e.value)
    assert open(victim, 'rb').read() == before, 'a corrupt file must not be replaced silently'


def test_uncompressed_files_are_accepted(isolated, real_dir):
    d = isolated / 'raw'
    os.makedirs(d)
    for name in data.FILES:
        src = data._file_in(real_dir, name)
        raw = gzip.open(src).read() if src.endswith('.gz') else open(src, 'rb').read()
        (d / name).write_bytes(raw)
    images, labels = data.load_arrays(train=False, root=str(d))
    assert images.shape == (10000, 1, 28, 28) and labels.shape == (10000,)


def test_no_data_and_no_network_fails_fast_listing_every_place(isolated):
    # A closed localhost port stands in for "no network": the connection is refused at once.
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    start = time.perf_counter()
    with pytest.raises(data.DataNotFoundError) as e:
        data.find_data_dir(mirrors=(f'http://127.0.0.1:{port}/',), timeout=5)
    assert time.perf_counter() - start < 10
    msg = str(e.value)
    assert 'no-debian' in msg and data.mxnet_cache_dir() in msg and f'127.0.0.1:{port}' in msg
    assert not os.listdir(data.mxnet_cache_dir()), 'a failed download must leave no partial file'


def test_real_mirrors_unreachable_offline_still_fail_within_seconds(isolated):
    """With the real mirror URLs: on this offline machine, one clear error well within a minute."""
    start = time.perf_counter()
    try:
        data.find_data_dir(timeout=5)
    except data.DataNotFoundError as e:
        assert 'download:' in str(e)
    else:  # a machine with network access downloaded and verified it: also fine
        data.load_arrays(root=data.mxnet_cache_dir())
    assert time.perf_counter() - start < 30


def _load_in_a_process(root, cache):
    """What a fresh process's load_arrays(train=False, root) gives: (type, images sum, labels sum), or the error."""
    import subprocess
    import sys
    code = ('from helpers import data\n'
            'try:\n'
            f'    X, y = data.load_arrays(train=False, root={str(root)!r})\n'
            '    print(type(X).__name__, float(X.sum(dtype="float64")), int(y.sum()))\n'
            'except data.ChecksumError as e:\n'
            '    print("ChecksumError", e)\n')
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, data.CACHE_ENV: str(cache)})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().split(' ', 2)


def test_decoded_arrays_are_kept_for_the_next_process_while_their_files_are_unchanged(isolated, real_dir):
    """The first process decodes and verifies, and leaves the arrays in the cache; the next one maps them
    (read-only, the same values); a source file damaged afterwards is read, verified and refused again."""
    d, cache = isolated / 'fm', isolated / 'decoded'
    _copy_all(real_dir, d)
    first = _load_in_a_process(d, cache)
    assert first[0] == 'ndarray' and len(os.listdir(cache)) == 2        # the test set: images and labels
    assert _load_in_a_process(d, cache) == ['memmap'] + first[1:]
    victim = data._file_in(str(d), 't10k-images-idx3-ubyte')
    blob = open(victim, 'rb').read()
    open(victim, 'wb').write(blob[: len(blob) // 2])
    assert _load_in_a_process(d, cache)[0] == 'ChecksumError'


def test_the_cache_keeps_a_few_entries_and_is_skipped_where_it_cannot_be_written(isolated, real_dir):
    cache = isolated / 'decoded'
    for i in range(data.CACHE_KEEP + 2):                  # copies elsewhere: each its own entry
        _copy_all(real_dir, isolated / f'copy{i}')
        assert _load_in_a_process(isolated / f'copy{i}', cache)[0] == 'ndarray'
    assert len(os.listdir(cache)) == 2 * data.CACHE_KEEP
    assert _load_in_a_process(isolated / 'copy0', '/proc/no-cache-here')[0] == 'ndarray'


def test_real_data_shapes_ranges_and_class_balance():
    X, y = data.load_arrays(train=True)
    Xt, yt = data.load_arrays(train=False)
    assert X.shape == (60000, 1, 28, 28) and Xt.shape == (10000, 1, 28, 28)
    assert X.dtype == np.float32 and y.dtype == np.int32
    assert 0.0 == X.min() and X.max() == 1.0
    assert np.bincount(y).tolist() == [6000] * 10 and np.bincount(yt).tolist() == [1000] * 10
    assert data.load_arrays(train=True)[0] is X, 'loaded once per process'
    assert data.get_fashion_mnist_labels([0, 9]) == ['t-shirt', 'ankle boot']


def test_loader_covers_every_example_once_per_epoch_and_is_reproducible():
    X = np.arange(10, dtype=np.float32).reshape(10, 1)
    y = np.arange(10, dtype=np.int32)
    loader = data.ArrayLoader(X, y, batch_size=4, shuffle=True, seed=3)
    assert len(loader) == 3
    epoch1 = [(Xb.asnumpy(), yb.asnumpy()) for Xb, yb in loader]
    assert [len(b[1]) for b in epoch1] == [4, 4, 2]
    seen = np.concatenate([b[1] for b in epoch1])
    assert sorted(seen.tolist()) == list(range(10))
    for Xb, yb in epoch1:
        assert (Xb[:, 0] == yb).all(), 'images and labels stay paired'
    epoch2 = [yb.asnumpy() for _, yb in loader]
    assert not all((a[1] == b).all() for a, b in zip(epoch1, epoch2)), 'reshuffled each epoch'
    again = data.ArrayLoader(X, y, batch_size=4, shuffle=True, seed=3)
    assert all((a[1] == b.asnumpy()).all() for a, (_, b) in zip(epoch1, again))
    assert len(data.ArrayLoader(X, y, 4, last_batch='discard')) == 2


@pytest.mark.parametrize('kwargs, error, match', [
    (dict(batch_size=0), ValueError, 'batch_size'), (dict(batch_size=2.5), TypeError, 'batch_size'),
    (dict(batch_size=2, last_batch='rollover'), ValueError, 'last_batch'),
])
def test_loader_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        data.ArrayLoader(np.zeros((4, 1)), np.zeros(4), **kwargs)
    with pytest.raises(ValueError, match='same first dimension'):
        data.ArrayLoader(np.zeros((4, 1)), np.zeros(3), 2)


def test_load_data_subset_and_bad_subset():
    train_iter, test_iter = data.load_data_fashion_mnist(100, n_train=1000, n_test=500)
    assert len(train_iter) == 10 and len(test_iter) == 5
    X, y = next(iter(train_iter))
    assert X.shape == (100, 1, 28, 28) and str(X.dtype.__name__) == 'float32'
    with pytest.raises(ValueError, match='n_train'):
        data.load_data_fashion_mnist(100, n_train=0)


def test_as_dataset_is_a_gluon_dataset():
    ds = data.as_dataset(train=False)
    x, label = ds[0]
    assert len(ds) == 10000 and x.shape == (1, 28, 28)
