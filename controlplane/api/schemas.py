"""OpenAPI v3 schemas of the served kinds' main fields, generated from one table.

Enough for ``kubectl explain pods`` / ``kubectl explain pod.spec.containers`` (which walk
``/openapi/v3/<gv>`` ``components.schemas``) — hand-written, short descriptions of the
fields as the Kubernetes API reference defines them (``api/openapi-spec/v3/`` in
kubernetes/kubernetes has the full ones). :data:`TYPES` holds named object types,
:data:`KINDS` each kind's description and its ``spec``/``status``/other top-level fields.

Field notation: ``(type, description)`` where type is ``string``, ``integer``,
``boolean``, ``object``, ``Quantity``, ``Time``, ``map[string]``, ``map[Quantity]``,
``[]string`` or a :data:`TYPES` name / ``[]Name``. Lists of objects carry the
strategic-merge keys of :mod:`controlplane.api.patch` (``x-kubernetes-patch-merge-key``).
"""

from __future__ import annotations

from typing import Any

Fields = dict[str, tuple[str, str]]

#: list field → patch merge key (the same keys the server's strategic merge uses)
MERGE_KEYS = {"containers": "name", "initContainers": "name", "ephemeralContainers": "name", "env": "name",
              "volumes": "name", "volumeMounts": "mountPath", "ports": "containerPort",
              "conditions": "type", "ownerReferences": "uid", "imagePullSecrets": "name"}

TYPES: dict[str, tuple[str, Fields]] = {
    "ObjectMeta": ("Standard object metadata: name, namespace, labels, ownership and bookkeeping the server keeps.", {
        "name": ("string", "Name of the object, unique within its namespace; required when creating."),
        "generateName": ("string", "Prefix the server uses to generate a unique name when name is not set."),
        "namespace": ("string", "Namespace of the object; empty for cluster-scoped objects."),
        "uid": ("string", "Unique id of this object, set by the server; never reused."),
        "resourceVersion": ("string", "Opaque version of this object, changing on every write; used for "
                                      "optimistic concurrency and watches."),
        "generation": ("integer", "Sequence number of changes to the desired state (spec)."),
        "creationTimestamp": ("Time", "When the object was created, set by the server."),
        "deletionTimestamp": ("Time", "When the object will be deleted; set when a graceful deletion is requested."),
        "deletionGracePeriodSeconds": ("integer", "Seconds the object has to terminate gracefully."),
        "labels": ("map[string]", "Key/value pairs to organize and select objects (label selectors)."),
        "annotations": ("map[string]", "Key/value pairs of non-identifying metadata for tools and people."),
        "ownerReferences": ("[]OwnerReference", "Objects this object depends on; the garbage collector deletes "
                                                "it when they are gone."),
        "finalizers": ("[]string", "Must be empty before the object is deleted from storage."),
    }),
    "OwnerReference": ("A reference to an owning object.", {
        "apiVersion": ("string", "API version of the owner."), "kind": ("string", "Kind of the owner."),
        "name": ("string", "Name of the owner."), "uid": ("string", "UID of the owner."),
        "controller": ("boolean", "True for the managing controller (at most one)."),
        "blockOwnerDeletion": ("boolean", "Foreground deletion of the owner waits for this object."),
    }),
    "LabelSelector": ("A label query over a set of objects.", {
        "matchLabels": ("map[string]", "Labels that must all match (key=value)."),
        "matchExpressions": ("[]object", "Set-based requirements (In, NotIn, Exists, DoesNotExist)."),
    }),
    "PodTemplateSpec": ("The pods a controller creates: their metadata and spec.", {
        "metadata": ("ObjectMeta", "Metadata of the created pods (labels must match the selector)."),
        "spec": ("PodSpec", "Specification of the created pods."),
    }),
    "PodSpec": ("The desired state of a pod: its containers and how and where they run.", {
        "containers": ("[]Container", "Containers of the pod; at least one. Cannot be updated."),
        "initContainers": ("[]Container", "Containers run to completion, in order, before the others start."),
        "nodeName": ("string", "Node the pod is bound to; set by the scheduler through a Binding, or directly "
                               "to skip scheduling."),
        "nodeSelector": ("map[string]", "Labels a node must have for the pod to be scheduled there."),
        "affinity": ("object", "Node and pod (anti-)affinity scheduling constraints."),
        "tolerations": ("[]Toleration", "Taints of nodes this pod tolerates."),
        "schedulerName": ("string", "Scheduler that places the pod (default-scheduler)."),
        "priority": ("integer", "Priority value, from priorityClassName."),
        "priorityClassName": ("string", "Name of the PriorityClass of the pod."),
        "restartPolicy": ("string", "Always, OnFailure or Never: restart policy of the containers."),
        "terminationGracePeriodSeconds": ("integer", "Seconds between the termination signal and the kill (30)."),
        "activeDeadlineSeconds": ("integer", "Seconds the pod may be active before the kubelet fails it."),
        "serviceAccountName": ("string", "ServiceAccount the pod runs as."),
        "hostNetwork": ("boolean", "Use the node's network namespace."),
        "dnsPolicy": ("string", "DNS policy of the pod (ClusterFirst)."),
        "volumes": ("[]Volume", "Volumes containers of the pod can mount."),
        "topologySpreadConstraints": ("[]object", "How pods spread across topology domains."),
    }),
    "Container": ("A single application container of a pod.", {
        "name": ("string", "Name of the container, unique in the pod (DNS label)."),
        "image": ("string", "Container image name."),
        "imagePullPolicy": ("string", "Always, Never or IfNotPresent."),
        "command": ("[]string", "Entrypoint array; the image's ENTRYPOINT if not given."),
        "args": ("[]string", "Arguments to the entrypoint; the image's CMD if not given."),
        "env": ("[]EnvVar", "Environment variables to set in the container."),
        "ports": ("[]ContainerPort", "Ports the container exposes (informational)."),
        "resources": ("ResourceRequirements", "Compute resources requested and limited."),
        "volumeMounts": ("[]VolumeMount", "Volumes mounted into the container's filesystem."),
        "livenessProbe": ("object", "Probe of container liveness; failing restarts the container."),
        "readinessProbe": ("object", "Probe of readiness for traffic."),
        "workingDir": ("string", "Working directory of the entrypoint."),
    }),
    "EnvVar": ("An environment variable of a container.", {
        "name": ("string", "Name of the variable."), "value": ("string", "Value of the variable."),
        "valueFrom": ("object", "Source of the value (field, resource, ConfigMap or Secret key)."),
    }),
    "ContainerPort": ("A network port of a container.", {
        "containerPort": ("integer", "Port number on the pod's IP address."),
        "name": ("string", "Name of the port (IANA_SVC_NAME), referable from services."),
        "protocol": ("string", "TCP, UDP or SCTP (TCP)."),
        "hostPort": ("integer", "Port number on the host."),
    }),
    "ResourceRequirements": ("Compute resource requests and limits.", {
        "requests": ("map[Quantity]", "Minimum resources required; what the scheduler reserves on a node."),
        "limits": ("map[Quantity]", "Maximum resources allowed."),
    }),
    "VolumeMount": ("A volume mounted into a container.", {
        "name": ("string", "Name of the volume."), "mountPath": ("string", "Path in the container."),
        "readOnly": ("boolean", "Mount read-only."),
    }),
    "Volume": ("A named volume of a pod.", {
        "name": ("string", "Name of the volume (DNS label)."),
        "emptyDir": ("object", "A temporary directory sharing the pod's lifetime."),
        "configMap": ("object", "A ConfigMap's keys as files."), "secret": ("object", "A Secret's keys as files."),
        "hostPath": ("object", "A path on the node."),
    }),
    "Toleration": ("Lets a pod be scheduled on (or stay on) nodes with a matching taint.", {
        "key": ("string", "Taint key; empty with operator Exists matches all."),
        "operator": ("string", "Exists or Equal (default)."), "value": ("string", "Taint value for Equal."),
        "effect": ("string", "NoSchedule, PreferNoSchedule or NoExecute; empty matches all."),
        "tolerationSeconds": ("integer", "For NoExecute: how long the pod stays bound after the taint appears."),
    }),
    "PodStatus": ("The observed state of a pod, reported by the kubelet.", {
        "phase": ("string", "Pending, Running, Succeeded, Failed or Unknown."),
        "conditions": ("[]Condition", "PodScheduled, Initialized, ContainersReady, Ready."),
        "hostIP": ("string", "IP address of the node."), "podIP": ("string", "IP address of the pod."),
        "startTime": ("Time", "When the kubelet accepted the pod."),
        "containerStatuses": ("[]ContainerStatus", "One entry per container."),
        "nominatedNodeName": ("string", "Node where the pod may run after preemption."),
        "reason": ("string", "Why the pod is in this state (e.g. Evicted)."),
        "message": ("string", "Human-readable detail of the state."),
    }),
    "ContainerStatus": ("The state of one container.", {
        "name": ("string", "Container name."), "ready": ("boolean", "Passed its readiness probe."),
        "restartCount": ("integer", "Number of restarts."), "image": ("string", "Image running."),
        "imageID": ("string", "Image ID."), "containerID": ("string", "Container ID (<runtime>://<id>)."),
        "started": ("boolean", "Passed its startup probe."),
        "state": ("object", "waiting, running or terminated, with details."),
        "lastState": ("object", "The state of the previous instance."),
    }),
    "Condition": ("One aspect of an object's state.", {
        "type": ("string", "Type of the condition."), "status": ("string", "True, False or Unknown."),
        "lastTransitionTime": ("Time", "Last change of status."), "reason": ("string", "CamelCase reason."),
        "message": ("string", "Human-readable detail."),
    }),
    "DeploymentSpec": ("The desired state of a Deployment.", {
        "replicas": ("integer", "Number of desired pods (1)."),
        "selector": ("LabelSelector", "Selects the pods of this deployment; must match the template's labels."),
        "template": ("PodTemplateSpec", "The pods to create."),
        "strategy": ("object", "RollingUpdate (maxUnavailable, maxSurge) or Recreate."),
        "minReadySeconds": ("integer", "Seconds a new pod must be ready to count as available."),
        "revisionHistoryLimit": ("integer", "Old ReplicaSets kept for rollback (10)."),
        "paused": ("boolean", "Pause rollouts."),
        "progressDeadlineSeconds": ("integer", "Seconds before a stalled rollout is reported (600)."),
    }),
    "DeploymentStatus": ("The observed state of a Deployment.", {
        "replicas": ("integer", "Pods targeted by this deployment."),
        "updatedReplicas": ("integer", "Pods with the current template."),
        "readyReplicas": ("integer", "Ready pods."), "availableReplicas": ("integer", "Available pods."),
        "unavailableReplicas": ("integer", "Pods still needed to reach 100% availability."),
        "observedGeneration": ("integer", "The generation last acted on."),
        "conditions": ("[]Condition", "Available, Progressing, ReplicaFailure."),
    }),
    "ReplicaSetSpec": ("The desired state of a ReplicaSet.", {
        "replicas": ("integer", "Number of desired pods (1)."),
        "selector": ("LabelSelector", "Selects the pods counted against replicas."),
        "template": ("PodTemplateSpec", "The pods to create when too few exist."),
        "minReadySeconds": ("integer", "Seconds a new pod must be ready to count as available."),
    }),
    "ReplicaSetStatus": ("The observed state of a ReplicaSet.", {
        "replicas": ("integer", "Pods currently matching."), "readyReplicas": ("integer", "Ready pods."),
        "availableReplicas": ("integer", "Available pods."),
        "fullyLabeledReplicas": ("integer", "Pods whose labels match the template's."),
        "observedGeneration": ("integer", "The generation last acted on."),
    }),
    "ServiceSpec": ("The desired state of a Service.", {
        "type": ("string", "ClusterIP (default), NodePort, LoadBalancer or ExternalName."),
        "selector": ("map[string]", "Routes traffic to pods with these labels."),
        "ports": ("[]ServicePort", "Ports the service exposes."),
        "clusterIP": ("string", "Virtual IP, allocated from the service CIDR; None for a headless service."),
        "clusterIPs": ("[]string", "The cluster IPs (one per IP family)."),
        "sessionAffinity": ("string", "ClientIP or None."),
        "externalName": ("string", "DNS name returned for an ExternalName service."),
    }),
    "ServicePort": ("A port of a Service.", {
        "name": ("string", "Name of the port (required with several ports)."),
        "port": ("integer", "Port the service exposes."),
        "targetPort": ("string", "Number or name of the port on the pods (defaults to port)."),
        "nodePort": ("integer", "Port on every node for NodePort/LoadBalancer, allocated from the node port range."),
        "protocol": ("string", "TCP, UDP or SCTP (TCP)."),
    }),
    "NodeSpec": ("The configuration of a node.", {
        "unschedulable": ("boolean", "Keep new pods off the node (cordon)."),
        "taints": ("[]object", "Taints repelling pods that do not tolerate them."),
        "podCIDR": ("string", "Pod IP range of the node."), "providerID": ("string", "Cloud provider id."),
    }),
    "NodeStatus": ("The observed state of a node, reported by its kubelet.", {
        "capacity": ("map[Quantity]", "Total resources of the node."),
        "allocatable": ("map[Quantity]", "Resources available to pods."),
        "conditions": ("[]Condition", "Ready, MemoryPressure, DiskPressure, PIDPressure..."),
        "addresses": ("[]object", "InternalIP, Hostname..."), "nodeInfo": ("object", "Versions, OS, architecture."),
    }),
}

#: kind → (description, top-level fields besides apiVersion/kind/metadata)
KINDS: dict[str, tuple[str, Fields]] = {
    "Pod": ("Pod is a group of containers scheduled together on one node; the smallest deployable unit.", {
        "spec": ("PodSpec", "Desired state of the pod."), "status": ("PodStatus", "Observed state of the pod (read-only).")}),
    "Deployment": ("Deployment declares a replicated application; it manages ReplicaSets to roll out changes.", {
        "spec": ("DeploymentSpec", "Desired state."), "status": ("DeploymentStatus", "Observed state.")}),
    "ReplicaSet": ("ReplicaSet keeps a number of identical pods running.", {
        "spec": ("ReplicaSetSpec", "Desired state."), "status": ("ReplicaSetStatus", "Observed state.")}),
    "Service": ("Service is a stable virtual IP and ports in front of a set of pods.", {
        "spec": ("ServiceSpec", "Desired state."), "status": ("object", "Load balancer status.")}),
    "Node": ("Node is a worker machine; its kubelet registers it and reports its status.", {
        "spec": ("NodeSpec", "Configuration."), "status": ("NodeStatus", "Observed state.")}),
    "Namespace": ("Namespace scopes names; deleting it deletes everything in it.", {
        "spec": ("object", "finalizers to clear before the namespace is removed."),
        "status": ("object", "phase: Active or Terminating.")}),
    "ConfigMap": ("ConfigMap holds non-confidential configuration as key/value pairs.", {
        "data": ("map[string]", "UTF-8 values."), "binaryData": ("map[string]", "Base64 binary values.")}),
    "Secret": ("Secret holds confidential data such as passwords or tokens.", {
        "data": ("map[string]", "Base64-encoded values."), "stringData": ("map[string]", "Write-only plain values."),
        "type": ("string", "Type of the secret (Opaque).")}),
}


def _prop(field: str, typ: str, desc: str, prefix: str) -> dict[str, Any]:
    if typ.startswith("[]"):
        items = _prop(field, typ[2:], "", prefix)
        items.pop("description", None)
        out: dict[str, Any] = {"type": "array", "items": items, "description": desc}
        if typ[2:] in TYPES and field in MERGE_KEYS:
            out["x-kubernetes-patch-merge-key"] = MERGE_KEYS[field]
            out["x-kubernetes-patch-strategy"] = "merge"
        return out
    if typ.startswith("map["):
        val = {"type": "string"} if typ == "map[string]" else {"type": "string", "format": "quantity"}
        return {"type": "object", "additionalProperties": val, "description": desc}
    if typ == "Time":
        return {"type": "string", "format": "date-time", "description": desc}
    if typ == "Quantity":
        return {"type": "string", "format": "quantity", "description": desc}
    if typ in TYPES:
        return {"allOf": [{"$ref": f"#/components/schemas/{prefix}{typ}"}], "default": {}, "description": desc}
    return {"type": typ, "description": desc}


def component_schemas(prefix: str = "io.k8s.controlplane.") -> dict[str, dict]:
    """The named types as OpenAPI v3 ``components.schemas`` (``prefix`` + type name)."""
    return {prefix + name: {"type": "object", "description": desc,
                            "properties": {f: _prop(f, t, d, prefix) for f, (t, d) in fields.items()}}
            for name, (desc, fields) in TYPES.items()}


def kind_schema(kind: str, api_version: str, prefix: str = "io.k8s.controlplane.") -> dict:
    """The top-level schema of ``kind`` (its description and fields, referring to the named types)."""
    desc, fields = KINDS.get(kind, ("", {}))
    props = {"apiVersion": {"type": "string", "description": "Versioned schema of this representation "
                                                             f"of an object ({api_version})."},
             "kind": {"type": "string", "description": f"REST resource this object represents ({kind})."},
             "metadata": _prop("metadata", "ObjectMeta", "Standard object's metadata.", prefix)}
    props.update({f: _prop(f, t, d, prefix) for f, (t, d) in fields.items()})
    out: dict[str, Any] = {"type": "object", "properties": props}
    if desc:
        out["description"] = desc
    return out
