"""The live dashboard: nodes, pods and the 13-step flow as a sequence diagram, in a browser.

:mod:`controlplane.dashboard.server` is a small aiohttp app that list-watches the
apiserver (nodes, pods, events) and follows ``/debug/controlplane/trace``, and pushes
every change to the page with server-sent events; the page is plain HTML/JS/CSS
under ``static/`` (package data, no build step, nothing fetched from elsewhere).
:mod:`controlplane.dashboard.sequence` renders the same sequence diagram as one
static page for a recorded flow (``controlplane trace -o html``).
"""
