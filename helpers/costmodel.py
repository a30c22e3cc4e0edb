"""What an allreduce costs: bytes per device and the alpha-beta-gamma time model (notebook 04;
used again in notebook 09).

One message of ``m`` bytes costs ``alpha + m * beta`` (``alpha``: latency, ``beta``: seconds per
byte = 1 / bandwidth); adding ``m`` bytes of received values costs ``m * gamma``. For ``k``
devices summing an array of ``N`` bytes (notation and the binomial-tree and Rabenseifner costs:
Thakur, Rabenseifner & Gropp, "Optimization of collective communication operations in MPICH",
IJHPCA 19(1), 2005; the ring is a ring reduce-scatter followed by a ring all-gather, whose step
count Goyal et al. 2017, section 4.1, also give; the naive algorithm is the reduce-to-one +
broadcast of the classic tutorials):

=================  =====================  ======================  =================
algorithm          latency terms          bandwidth term          additions
=================  =====================  ======================  =================
naive              2 (k-1) alpha          2 (k-1) N beta          (k-1) N gamma
ring               2 (k-1) alpha          2 (k-1)/k N beta        (k-1)/k N gamma
binomial tree      2 ceil(log2 k) alpha   2 ceil(log2 k) N beta   ceil(log2 k) N gamma
Rabenseifner       2 log2 k alpha         2 (k-1)/k N beta        (k-1)/k N gamma
=================  =====================  ======================  =================

The ring's and Rabenseifner's bandwidth term is the lower bound, which is a bound on the *busiest*
device: in any allreduce some device sends at least ``2 (k-1)/k N`` bytes (Patarasuk & Yuan,
"Bandwidth optimal all-reduce algorithms for clusters of workstations", JPDC 69(2), 2009; NVIDIA's
nccl-tests, doc/PERFORMANCE.md, uses the same factor). Not every device must: in the naive
algorithm each device but device 0 sends only ``N`` (less than the bound for ``k > 2``), while
device 0 sends ``(k-1) N``; the ring sends exactly the bound from every device at once.
The tree here is the textbook binomial tree that passes whole arrays at every level, not NCCL's
double binary trees, in which two trees each carry half of the data (NVIDIA, "Massively Scale Your
Deep Learning Training with NCCL 2.4", 2019). Rabenseifner's algorithm (recursive halving, then
recursive doubling) is given for ``k`` a power of two.

Every function takes ``k`` as a number or a NumPy array (for plotting against ``k``).
"""
import numpy as np

from helpers import checks

__all__ = ['naive_bytes_per_device', 'ring_bytes_per_device', 'ring_lower_bound', 'cost_naive',
           'cost_ring', 'cost_tree', 'cost_rabenseifner', 'LINKS', 'LINK_SOURCES', 'link']


def naive_bytes_per_device(k, size, itemsize=4):
    """Bytes each device sends in the naive allreduce of ``size`` elements of ``itemsize`` bytes
    (notebook 04): device 0 sends the sum to the ``k-1`` others, every other device sends its array
    once: ``[(k-1) N, N, ..., N]`` with ``N = size * itemsize``."""
    k, size, itemsize = checks.bytes_per_device(k, size, itemsize)
    nbytes = size * itemsize
    return [(k - 1) * nbytes] + [nbytes] * (k - 1)


def ring_bytes_per_device(k, size, itemsize=4):
    """Bytes each device sends in the ring allreduce of ``size`` elements of ``itemsize`` bytes
    (notebook 04; in elements, because chunks are cut between elements): every chunk but two, i.e.
    exactly ``2 (k-1)/k N`` when ``k`` divides ``size``."""
    from helpers.split import shard_sizes
    k, size, itemsize = checks.bytes_per_device(k, size, itemsize)
    if k == 1:
        return [0]
    chunk = [n * itemsize for n in shard_sizes(size, k)]
    return [2 * size * itemsize - chunk[(i + 1) % k] - chunk[(i + 2) % k] for i in range(k)]


def ring_lower_bound(k, nbytes):
    """``2 (k-1)/k N``: the fewest bytes the *busiest* device can send in an allreduce of ``N``
    bytes over ``k`` devices -- in any allreduce some device sends at least this much; other
    devices may send less (Patarasuk & Yuan 2009; notebook 04)."""
    checks.devices_and_bytes(k, nbytes)
    k = np.asarray(k, dtype=float)
    return 2 * (k - 1) / k * nbytes


def cost_naive(k, nbytes, alpha, bandwidth, gamma=0.0):
    """Seconds of reduce-to-device-0 + broadcast (notebook 04): device 0 receives and adds ``k-1``
    whole arrays one after the other, then sends ``k-1``."""
    checks.cost_model(k, nbytes, alpha, bandwidth, gamma)
    k, beta = np.asarray(k, dtype=float), 1 / bandwidth
    return 2 * (k - 1) * (alpha + nbytes * beta) + (k - 1) * nbytes * gamma


def cost_ring(k, nbytes, alpha, bandwidth, gamma=0.0):
    """Seconds of the ring allreduce (notebook 04): ``2 (k-1)`` steps of one ``N/k`` chunk on every
    link at once; in the reduce-scatter half every device adds ``k-1`` chunks."""
    checks.cost_model(k, nbytes, alpha, bandwidth, gamma)
    k, beta = np.asarray(k, dtype=float), 1 / bandwidth
    return 2 * (k - 1) * (alpha + nbytes / k * beta) + (k - 1) / k * nbytes * gamma


def cost_tree(k, nbytes, alpha, bandwidth, gamma=0.0):
    """Seconds of an unpipelined binomial-tree reduce + broadcast (notebook 04): ``ceil(log2 k)``
    levels each way, each passing whole arrays."""
    checks.cost_model(k, nbytes, alpha, bandwidth, gamma)
    levels, beta = np.ceil(np.log2(np.asarray(k, dtype=float))), 1 / bandwidth
    return 2 * levels * (alpha + nbytes * beta) + levels * nbytes * gamma


def cost_rabenseifner(k, nbytes, alpha, bandwidth, gamma=0.0):
    """Seconds of Rabenseifner's allreduce (notebook 04): reduce-scatter by recursive halving, then
    all-gather by recursive doubling; ``k`` a power of two."""
    checks.cost_model(k, nbytes, alpha, bandwidth, gamma)
    k, beta = np.asarray(k, dtype=float), 1 / bandwidth
    return 2 * np.log2(k) * alpha + 2 * (k - 1) / k * nbytes * beta + (k - 1) / k * nbytes * gamma


# Links between devices, for the model's plots (notebooks 04 and 09): per-GPU bandwidth in bytes/s,
# *per direction*, from the vendors' published peak figures (LINK_SOURCES); `alpha`: seconds per
# message, an ASSUMED round order of magnitude, not a measurement (no vendor publishes one; NCCL's own
# tuning constants, NVIDIA/nccl src/graph/tuning.cc, are a few microseconds per step on NVLink and
# PCIe); `k_max`: how many devices one such link plausibly connects (a PCIe host or an NVLink/NVSwitch
# board holds 8 GPUs; Ethernet joins machines). Real transfers reach less than the peak.
LINKS = {
    'PCIe 3.0 x16': dict(bandwidth=15.75e9, alpha=10e-6, k_max=8),
    'PCIe 4.0 x16': dict(bandwidth=31.5e9, alpha=10e-6, k_max=8),
    'NVLink 2 (V100)': dict(bandwidth=50e9, alpha=5e-6, k_max=8),
    'NVLink 3 + NVSwitch (A100)': dict(bandwidth=300e9, alpha=5e-6, k_max=8),
    '10 GbE': dict(bandwidth=1.25e9, alpha=50e-6, k_max=1024),
    '25 GbE': dict(bandwidth=3.125e9, alpha=50e-6, k_max=1024),
    '100 GbE': dict(bandwidth=12.5e9, alpha=50e-6, k_max=1024),
}
LINK_SOURCES = {
    'PCIe 3.0 x16': 'PCI-SIG: 8 GT/s per lane, 128b/130b encoding; x16 = 15.75 GB/s per direction (derived; '
                    'vendors quote raw, both-direction figures)',
    'PCIe 4.0 x16': 'PCI-SIG: 16 GT/s per lane, 128b/130b encoding; x16 = 31.5 GB/s per direction (derived)',
    'NVLink 2 (V100)': 'NVIDIA Tesla V100 architecture whitepaper (2017) and NVLink product page: 6 links of '
                       '25 GB/s per direction, "300 GB/sec" total per GPU. The model uses one pair\'s 50 GB/s '
                       '(two links, NV2 in notebook 00\'s DGX-1 matrix); all 150 GB/s per direction need '
                       'all six links busy at once',
    'NVLink 3 + NVSwitch (A100)': 'NVIDIA A100 Tensor Core GPU architecture whitepaper (2020): 12 third-'
                                  'generation NVLink links per GPU, 600 GB/s in total (25 GB/s per link per '
                                  'direction). Every pair of GPUs gets all 300 GB/s per direction only through '
                                  'NVSwitch (HGX / DGX A100 boards); PCIe A100s bridged in pairs get it only '
                                  'within a pair',
    '10 GbE': 'IEEE 802.3ae-2002: 10 Gb/s MAC data rate = 1.25 GB/s per direction (line rate: the payload of '
              'TCP over 1500-byte frames is about 94 % of it)',
    '25 GbE': 'IEEE 802.3by-2016: 25 Gb/s MAC data rate = 3.125 GB/s per direction (line rate)',
    '100 GbE': 'IEEE 802.3ba-2010: 100 Gb/s MAC data rate = 12.5 GB/s per direction (line rate)',
}


def link(name):
    """``dict(alpha=..., bandwidth=..., k_max=...)`` of a link in :data:`LINKS` (notebooks 04, 09)."""
    return LINKS[checks.choice(name, 'link name', tuple(LINKS))]
