"""The command lines that run a job of notebook 08 on real machines with MXNet's ssh launcher
(notebook 08): :func:`ssh_commands`. Nothing here runs them; the notebook prints them and
``tests/test_dist.py`` runs them against a stand-in ssh.
"""
import os
import shlex
import sys

from helpers import checks
from helpers.launcher import ROOT_URI_ENV

__all__ = ['ssh_commands']

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _host_and_port(entry):
    """A host-file entry read as dmlc_tracker/ssh.py reads it: ``host[:ssh port][ slots=N]``."""
    host, _, port = entry.split('slots=')[0].strip().partition(':')
    return host, port


def ssh_commands(hosts, script_args, num_servers=None, hostfile='hosts', repo=_ROOT, python=None,
                 interface=None, env=None, scheduler=None):
    """Shell commands that run ``python -m helpers.dist_train SCRIPT_ARGS`` on ``hosts`` with MXNet's
    ssh launcher (notebook 08): ``{'hosts': the host file's text, 'check': one command per host,
    'launch': the launcher's command}``. One worker per host; ``num_servers`` servers (default: one
    per host). ``hosts`` are IPv4 addresses, or, with ``interface`` (e.g. ``'eth0'``), any names ssh
    reaches: a host name without ``interface`` raises ValueError.

    WHY: dmlc_tracker/ssh.py sets ``DMLC_NODE_HOST`` to the host's entry in the host file, and ps-lite
    binds a server's or worker's socket to exactly that address; it reads ``DMLC_INTERFACE`` only when
    ``DMLC_NODE_HOST`` is empty (``Van::Start``, ps-lite's src/van.cc). The libzmq MXNet 1.9.1 bundles
    (4.2.2, tools/dependencies/zmq.sh) binds a numeric address or an interface name, never a host name
    (``tcp_address_t::resolve_interface``, src/tcp_address.cpp), so with a name every server and
    worker dies ("bind failed"). With ``interface`` the command unsets ``DMLC_NODE_HOST`` and sets
    ``DMLC_INTERFACE`` itself (``env -u DMLC_NODE_HOST DMLC_INTERFACE=eth0 ...``): ps-lite then binds
    that interface's address on every host (``GetIP``, src/network_utils.h).

    The commands also follow what ssh.py does otherwise: it forwards only ``OMP_NUM_THREADS``,
    ``KMP_AFFINITY``, ``LD_LIBRARY_PATH``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY`` and
    ``DMLC_INTERFACE`` (plus the ``DMLC_*`` roles and addresses it sets), so any other variable
    (``env``, e.g. ``PS_VERBOSE``) is set in the command itself; it runs the command over
    non-interactive ssh, whose ``python`` is not this venv's, so the command names the interpreter by
    its path (``python``, default: this one); it copies nothing but, with ``--sync-dst-dir``, the
    current directory, so the repository, its venv and the data must already be on every host at the
    same path: ``check`` verifies that, host by host. The scheduler runs where the launcher runs, at
    the address of that host's name (or of its default route's interface: ``get_host_ip``,
    dmlc_tracker/tracker.py), or at ``scheduler`` (an IPv4 address of the launcher's host that every
    host reaches), which the launch command pins (``MXDP_DIST_ROOT_URI``, read by
    ``helpers.launcher``): the guess is wrong on a machine whose default route is not the cluster's
    network, and a test on one machine keeps its scheduler on a loopback address of its own.
    """
    import ipaddress
    hosts = [h.strip() for h in checks.strings(hosts, 'hosts')]
    script_args = checks.strings(script_args, 'script_args', empty=True)
    num_servers = None if num_servers is None else checks.whole(num_servers, 'num_servers', 1, checks.MAX_PROCESSES)
    python = sys.executable if python is None else checks.text(python, 'python')
    hostfile, repo = checks.text(hostfile, 'hostfile'), checks.text(repo, 'repo')
    interface = None if interface is None else checks.text(interface, 'interface')
    env = {} if env is None else checks.mapping(env, 'env')
    if scheduler is not None:
        try:
            ipaddress.IPv4Address(checks.text(scheduler, 'scheduler'))
        except ValueError:
            raise ValueError(f'scheduler = {scheduler!r} is not an IPv4 address: the scheduler binds it as '
                             'given (DMLC_PS_ROOT_URI), and libzmq 4.2.2 refuses a host name') from None
    for what, value in [('repo', repo), ('python', python), ('hostfile', hostfile)] + [
            ('interface', interface)] * bool(interface) + [(f'env[{k!r}]', f'{k}={v}') for k, v in dict(env).items()]:
        if shlex.quote(str(value)) != str(value):       # ssh.py would pass its quotes on, broken
            raise ValueError(f'{what} = {value!r} needs shell quoting, which MXNet\'s ssh launcher cannot '
                             "pass on: dmlc_tracker/ssh.py puts the command between single quotes as it "
                             'is, and runs `cd` into the working directory unquoted. Use paths and values '
                             'without spaces or shell characters')
    if interface is None:
        for h in hosts:
            try:
                ipaddress.IPv4Address(_host_and_port(h)[0])
            except ValueError:
                raise ValueError(
                    f'{h!r} is not an IPv4 address: ps-lite would bind it as given (DMLC_NODE_HOST, set '
                    "by dmlc_tracker's ssh launcher), which MXNet's libzmq 4.2.2 refuses for a host "
                    "name. Write IP addresses, or pass interface= (e.g. 'eth0')") from None
    env = {**({'DMLC_INTERFACE': interface} if interface else {}), **dict(env or {})}
    prefix = ((['env'] + (['-u', 'DMLC_NODE_HOST'] if interface else [])
               + [f'{k}={shlex.quote(str(v))}' for k, v in env.items()]) if env else [])
    data_check = ('from helpers.data import find_data_dir; '
                  'print(\\"data:\\", find_data_dir(download=False))')
    check = []
    for h in hosts:
        host, port = _host_and_port(h)
        check.append(f"ssh {'-p ' + port + ' ' if port else ''}{host} 'cd {shlex.quote(repo)} && "
                     + ' '.join(prefix + [shlex.quote(python)]) + f' -c "{data_check}"\'')
    command = prefix + [shlex.quote(python), '-m', 'helpers.dist_train']
    pin = f'{ROOT_URI_ENV}={scheduler} ' if scheduler else ''
    launch = (f'cd {shlex.quote(repo)} && {pin}{shlex.quote(python)} -m helpers.launcher --launcher ssh '
              f'-H {hostfile} -n {len(hosts)} -s {num_servers or len(hosts)} '
              + ' '.join(command + [shlex.quote(a) for a in script_args]))
    return {'hosts': '\n'.join(hosts), 'check': check, 'launch': launch}
