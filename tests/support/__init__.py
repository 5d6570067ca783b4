"""Helpers shared by tests and benches (no tests here): etcd subprocesses, fakes."""
