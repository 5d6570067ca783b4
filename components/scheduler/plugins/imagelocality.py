"""ImageLocality (Score): prefer nodes that already hold the pod's images, weighted
by image size and by how many nodes have it (spread), clamped between 23 MiB and
1000 MiB per container. Source: pkg/scheduler/framework/plugins/imagelocality/image_locality.go."""

from __future__ import annotations

from components.scheduler.cache import normalize_image
from components.scheduler.framework import MAX_NODE_SCORE, SKIP, Status

NAME = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB
_KEY = "ImageLocality.pre"
_SIZES = "ImageLocality.sizes"


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """Map a size sum to 0..100 between the thresholds."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    sum_scores = min(max(sum_scores, MIN_THRESHOLD), max_threshold)
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


class ImageLocality:
    """The ImageLocality PreScore/Score plugin (see the module docstring)."""

    name = NAME

    def __init__(self, args: dict | None = None, handle=None) -> None:
        pass

    def pre_score(self, state, pod, nodes, snapshot) -> Status | None:
        spec = pod.pod.get("spec") or {}
        images = [normalize_image(c.get("image") or "")
                  for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])]
        have = snapshot.image_node_counts
        counts = {i: have.get(i, 0) for i in images}
        if not any(counts.values()):
            return Status(SKIP)  # every node would score 0
        state[_KEY] = (images, counts, len(snapshot.nodes))
        state[_SIZES] = snapshot.image_sizes
        return None

    def score_nodes(self, state, pod, nodes) -> list[int]:
        """:meth:`score` for many nodes: each image's spread (ImageStateSummary NumNodes
        over the snapshot's nodes, scaledImageScore) is taken once per pod, and each
        distinct size sum (one size per node for a one-container pod) is mapped to its
        priority once; when every node holds a one-container pod's image at one size
        (the snapshot's sizes per image), the nodes are not read at all
        (image_locality.go Score, sumImageScores, calculatePriority)."""
        images, counts, total = state[_KEY]
        n = len(images)
        if not total:
            return [calculate_priority(0, n)] * len(nodes)
        spreads = [(i, counts[i] / total) for i in images]
        if n == 1:
            image, spread = spreads[0]
            held = state[_SIZES].get(image)
            if counts[image] == total and held is not None and len(held) == 1:
                # every node holds the image, at one size: one score for all
                return [calculate_priority(int(next(iter(held)) * spread), 1)] * len(nodes)
            sizes = [node.images.get(image) for node in nodes]
            prio = {size: calculate_priority(0 if size is None else int(size * spread), 1)
                    for size in set(sizes)}
            return list(map(prio.__getitem__, sizes))
        sums = []
        for node in nodes:
            have = node.images
            s = 0
            for i, spread in spreads:
                size = have.get(i)
                if size is not None:
                    s += int(size * spread)
            sums.append(s)
        prio = {s: calculate_priority(s, n) for s in set(sums)}
        return list(map(prio.__getitem__, sums))

    def score(self, state, pod, node) -> int:
        images, counts, total = state[_KEY]
        s = 0
        for i in images:
            size = node.images.get(i)
            if size is not None and total:
                s += int(size * (counts[i] / total))
        return calculate_priority(s, len(images))
