"""python-etcd3 (``etcd3`` 0.12.0) compatibility: scripts run by a separate interpreter (see venv.py)."""
