"""Examples run offline: a model hub download, or any connection off this machine, fails.

The real-model examples build Hugging Face models from tiny configs and torchvision models with
``weights=None``. Should one of them ever reach for the network (``from_pretrained``, a weights
enum), the run must fail there, naming what it tried, instead of passing on a machine that happens
to have a network or a filled cache. The tests, the output refresher and the runner of copied code
call ``install()`` first.

Loopback stays open: the browser tests serve the site on 127.0.0.1 and the DDP scripts
rendezvous there (in processes of their own).
"""

from __future__ import annotations

import atexit
import ipaddress
import logging
import os
import shutil
import socket
import tempfile

# Read by huggingface_hub when it is imported: no request is made, and a file that is not in the
# cache raises instead of being fetched. The socket guard below also covers any other library.
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}

# Ultralytics logs once per machine, at its first import, that it created its settings file
# ("Creating new Ultralytics Settings v0.0.8 file ✅", then two lines of help): on a fresh machine
# `make test` failed the example that happened to import it first. The page says so; here the
# line is dropped by a filter on its logger, set before ultralytics makes that logger.
FIRST_RUN_NOTICE = "Creating new Ultralytics Settings"


def _not_a_first_run_notice(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith(FIRST_RUN_NOTICE)


class NetworkAccessError(OSError):
    """An example tried to reach another machine."""


def _is_local(address) -> bool:
    if isinstance(address, (str, bytes)):  # a Unix socket path
        return True
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: resolving it is already a request to the network
        return False


_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex
_getaddrinfo = socket.getaddrinfo


def _refuse_remote(address) -> None:
    if not _is_local(address):
        raise NetworkAccessError(f"the examples run offline; a connection to {address!r} was refused")


def _guarded_connect(self, address):
    _refuse_remote(address)
    return _connect(self, address)


def _guarded_connect_ex(self, address):
    _refuse_remote(address)
    return _connect_ex(self, address)


def _guarded_getaddrinfo(host, *args, **kwargs):
    _refuse_remote((host.decode() if isinstance(host, bytes) else host or "",))
    return _getaddrinfo(host, *args, **kwargs)


def install() -> None:
    """Refuse every connection to another machine from this process, and tell the Hugging Face
    libraries they are offline (also in the processes this one starts). Their caches and torch's
    point at an empty folder, so that weights someone downloaded once cannot stand in either."""
    os.environ.update(OFFLINE_ENV)
    if _not_a_first_run_notice not in logging.getLogger("ultralytics").filters:
        logging.getLogger("ultralytics").addFilter(_not_a_first_run_notice)
    if "GUIDE_EMPTY_CACHE" not in os.environ:
        os.environ["GUIDE_EMPTY_CACHE"] = tempfile.mkdtemp(prefix="guide-empty-cache-")
        atexit.register(shutil.rmtree, os.environ["GUIDE_EMPTY_CACHE"], ignore_errors=True)
    os.environ["HF_HOME"] = os.environ["TORCH_HOME"] = os.environ["GUIDE_EMPTY_CACHE"]
    socket.socket.connect = _guarded_connect
    socket.socket.connect_ex = _guarded_connect_ex
    socket.getaddrinfo = _guarded_getaddrinfo
