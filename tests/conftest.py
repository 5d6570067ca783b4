"""The whole suite: ``pytester`` for tests/plugin (the pytest plugin run in a sub-pytest);
``pytest_plugins`` may only be set in a top-level conftest."""

pytest_plugins = ["pytester"]
