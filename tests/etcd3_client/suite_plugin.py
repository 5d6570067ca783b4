"""pytest plugin loaded into python-etcd3's own test suite (``-p suite_plugin``).

A few of that suite's fixtures ignore ``PYTHON_ETCD_HTTP_URL`` and open ``etcd3.client()`` on
localhost:2379 — on a shared machine that may be somebody else's etcd (and the alarm and compact
tests write to it). This plugin points the default endpoint at the server under test instead.
"""

import os
from urllib.parse import urlparse

import etcd3

_url = urlparse(os.environ["PYTHON_ETCD_HTTP_URL"])
_orig_init = etcd3.Etcd3Client.__init__


def _init(self, host="localhost", port=2379, *args, **kwargs):
    if (host, port) == ("localhost", 2379):
        host, port = _url.hostname, _url.port
    _orig_init(self, host, port, *args, **kwargs)


etcd3.Etcd3Client.__init__ = _init

# The suite (2020) uses @given on tests with function-scoped fixtures, which current hypothesis
# refuses with a health-check error before running anything — against any server. The suite
# registers its own "default" profile on top of the current default, so silencing that one check
# in the default first carries over.
import hypothesis  # noqa: E402

hypothesis.settings.register_profile(
    "controlplane-suite", suppress_health_check=[hypothesis.HealthCheck.function_scoped_fixture])
hypothesis.settings.load_profile("controlplane-suite")
