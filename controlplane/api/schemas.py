"""OpenAPI v3 schemas of the served kinds, and the Go types the apiserver decodes into, from one table.

The table serves two readers:

* ``kubectl explain pods`` / ``kubectl explain pod.spec.containers`` (which walk
  ``/openapi/v3/<gv>`` ``components.schemas``): :func:`component_schemas`, :func:`kind_schema`,
  with short descriptions of the fields as the Kubernetes API reference defines them
  (``api/openapi-spec/v3/`` in kubernetes/kubernetes has the full ones);
* the apiserver's decoding of request bodies into typed objects
  (:mod:`controlplane.api.decoder`): every field's Go type (``int32`` vs ``int64``,
  ``map[string]string``, ``[]byte``...) as in ``staging/src/k8s.io/api/core/v1/types.go``,
  ``apps/v1/types.go``, ``coordination/v1/types.go`` and ``apimachinery/pkg/apis/meta/v1/types.go``
  (Kubernetes v1.32).

:data:`TYPES` holds named struct types (shared by several kinds); each kind's description
and top-level fields besides apiVersion/kind/metadata are its registry entry's
:class:`~controlplane.api.registry.KindSchema` (declared in :mod:`controlplane.api.builtin`;
:func:`kind_fields`), plus :data:`BODY_KINDS` for the subresource and options bodies.
A struct's field list is complete (fields not listed are unknown: dropped, or reported
with ``fieldValidation``) unless its name is in :data:`OPEN_TYPES` (field lists abridged here: other fields are kept as sent).

Field notation: ``(type, description)`` where type is ``string``, ``boolean``, ``int32``,
``int64`` (``integer`` = int64), ``number`` (float64), ``bytes`` (``[]byte``: base64 text),
``Quantity``, ``IntOrString``, ``Time``, ``MicroTime``, ``map[string]`` (map[string]string),
``map[bytes]``, ``map[Quantity]``, ``object:<Go type>`` (a struct not modelled field by field:
any JSON object, kept as sent), a :data:`TYPES` name, or ``[]`` + any of those. Lists carry
the tags :mod:`controlplane.api.listfields` declares for their struct and field — the same
the server's strategic merge and server-side apply use (``x-kubernetes-patch-merge-key``,
``x-kubernetes-patch-strategy``, ``x-kubernetes-list-type``, ``x-kubernetes-list-map-keys``).
"""

from __future__ import annotations

from typing import Any

from controlplane.api import listfields
from controlplane.api.registry import KindKey, KindSchema
from controlplane.api.resources import REGISTRY

Fields = dict[str, tuple[str, str]]

#: struct types whose field list here is abridged: unlisted fields are kept, never reported
OPEN_TYPES = frozenset({"Volume", "PodStatus", "ContainerStatus", "Condition", "DeploymentStatus",
                        "ReplicaSetStatus", "NodeStatus", "NamespaceStatus", "Event"})

_OBJ = "object:"

TYPES: dict[str, tuple[str, Fields]] = {
    "ObjectMeta": ("Standard object metadata: name, namespace, labels, ownership and bookkeeping the server keeps.", {
        "name": ("string", "Name of the object, unique within its namespace; required when creating."),
        "generateName": ("string", "Prefix the server uses to generate a unique name when name is not set."),
        "namespace": ("string", "Namespace of the object; empty for cluster-scoped objects."),
        "selfLink": ("string", "Deprecated; not set by the server."),
        "uid": ("string", "Unique id of this object, set by the server; never reused."),
        "resourceVersion": ("string", "Opaque version of this object, changing on every write; used for "
                                      "optimistic concurrency and watches."),
        "generation": ("int64", "Sequence number of changes to the desired state (spec)."),
        "creationTimestamp": ("Time", "When the object was created, set by the server."),
        "deletionTimestamp": ("Time", "When the object will be deleted; set when a graceful deletion is requested."),
        "deletionGracePeriodSeconds": ("int64", "Seconds the object has to terminate gracefully."),
        "labels": ("map[string]", "Key/value pairs to organize and select objects (label selectors)."),
        "annotations": ("map[string]", "Key/value pairs of non-identifying metadata for tools and people."),
        "ownerReferences": ("[]OwnerReference", "Objects this object depends on; the garbage collector deletes "
                                                "it when they are gone."),
        "finalizers": ("[]string", "Must be empty before the object is deleted from storage."),
        "managedFields": ("[]ManagedFieldsEntry", "Which manager owns which fields (server-side apply)."),
    }),
    "ManagedFieldsEntry": ("The fields one manager owns, and how it set them.", {
        "manager": ("string", "Name of the manager."), "operation": ("string", "Apply or Update."),
        "apiVersion": ("string", "Version of the fields' schema."), "time": ("Time", "Last change by this entry."),
        "fieldsType": ("string", "FieldsV1."), "fieldsV1": ("object:v1.FieldsV1", "The owned fields as a trie."),
        "subresource": ("string", "Subresource the manager wrote through (status, scale...)."),
    }),
    "OwnerReference": ("A reference to an owning object.", {
        "apiVersion": ("string", "API version of the owner."), "kind": ("string", "Kind of the owner."),
        "name": ("string", "Name of the owner."), "uid": ("string", "UID of the owner."),
        "controller": ("boolean", "True for the managing controller (at most one)."),
        "blockOwnerDeletion": ("boolean", "Foreground deletion of the owner waits for this object."),
    }),
    "LabelSelector": ("A label query over a set of objects.", {
        "matchLabels": ("map[string]", "Labels that must all match (key=value)."),
        "matchExpressions": ("[]LabelSelectorRequirement", "Set-based requirements (In, NotIn, Exists, DoesNotExist)."),
    }),
    "LabelSelectorRequirement": ("A set-based label requirement.", {
        "key": ("string", "Label key."), "operator": ("string", "In, NotIn, Exists or DoesNotExist."),
        "values": ("[]string", "Values for In and NotIn."),
    }),
    "LocalObjectReference": ("A reference to an object in the same namespace.", {
        "name": ("string", "Name of the referent."),
    }),
    "PodTemplateSpec": ("The pods a controller creates: their metadata and spec.", {
        "metadata": ("ObjectMeta", "Metadata of the created pods (labels must match the selector)."),
        "spec": ("PodSpec", "Specification of the created pods."),
    }),
    "PodSpec": ("The desired state of a pod: its containers and how and where they run.", {
        "containers": ("[]Container", "Containers of the pod; at least one. Cannot be updated."),
        "initContainers": ("[]Container", "Containers run to completion, in order, before the others start."),
        "ephemeralContainers": ("[]object:v1.EphemeralContainer", "Debugging containers added to a running pod."),
        "nodeName": ("string", "Node the pod is bound to; set by the scheduler through a Binding, or directly "
                               "to skip scheduling."),
        "nodeSelector": ("map[string]", "Labels a node must have for the pod to be scheduled there."),
        "affinity": ("Affinity", "Node and pod (anti-)affinity scheduling constraints."),
        "tolerations": ("[]Toleration", "Taints of nodes this pod tolerates."),
        "schedulerName": ("string", "Scheduler that places the pod (default-scheduler)."),
        "schedulingGates": ("[]object:v1.PodSchedulingGate", "Gates that keep the pod from being scheduled."),
        "priority": ("int32", "Priority value, from priorityClassName."),
        "priorityClassName": ("string", "Name of the PriorityClass of the pod."),
        "preemptionPolicy": ("string", "PreemptLowerPriority (default) or Never."),
        "restartPolicy": ("string", "Always, OnFailure or Never: restart policy of the containers."),
        "terminationGracePeriodSeconds": ("int64", "Seconds between the termination signal and the kill (30)."),
        "activeDeadlineSeconds": ("int64", "Seconds the pod may be active before the kubelet fails it."),
        "serviceAccountName": ("string", "ServiceAccount the pod runs as."),
        "serviceAccount": ("string", "Deprecated alias of serviceAccountName."),
        "automountServiceAccountToken": ("boolean", "Mount the service account token."),
        "hostNetwork": ("boolean", "Use the node's network namespace."),
        "hostPID": ("boolean", "Use the node's PID namespace."),
        "hostIPC": ("boolean", "Use the node's IPC namespace."),
        "hostUsers": ("boolean", "Use the node's user namespace."),
        "shareProcessNamespace": ("boolean", "One PID namespace for all containers of the pod."),
        "hostname": ("string", "Hostname of the pod (the name if unset)."),
        "subdomain": ("string", "Subdomain: the pod's FQDN is hostname.subdomain.namespace.svc."),
        "setHostnameAsFQDN": ("boolean", "Set the FQDN as the hostname."),
        "hostAliases": ("[]object:v1.HostAlias", "Entries added to the pod's /etc/hosts."),
        "dnsPolicy": ("string", "DNS policy of the pod (ClusterFirst)."),
        "dnsConfig": ("object:v1.PodDNSConfig", "DNS parameters added to those of dnsPolicy."),
        "enableServiceLinks": ("boolean", "Inject service environment variables (true)."),
        "imagePullSecrets": ("[]LocalObjectReference", "Secrets used to pull the images."),
        "securityContext": ("PodSecurityContext", "Pod-level security attributes."),
        "runtimeClassName": ("string", "RuntimeClass used to run the pod."),
        "overhead": ("map[Quantity]", "Resource overhead of the pod sandbox."),
        "readinessGates": ("[]object:v1.PodReadinessGate", "Extra conditions for pod readiness."),
        "os": ("object:v1.PodOS", "Operating system of the containers."),
        "resourceClaims": ("[]object:v1.PodResourceClaim", "Dynamic resource claims of the pod."),
        "resources": ("ResourceRequirements", "Pod-level compute resources."),
        "volumes": ("[]Volume", "Volumes containers of the pod can mount."),
        "topologySpreadConstraints": ("[]TopologySpreadConstraint", "How pods spread across topology domains."),
    }),
    "Container": ("A single application container of a pod.", {
        "name": ("string", "Name of the container, unique in the pod (DNS label)."),
        "image": ("string", "Container image name."),
        "imagePullPolicy": ("string", "Always, Never or IfNotPresent."),
        "command": ("[]string", "Entrypoint array; the image's ENTRYPOINT if not given."),
        "args": ("[]string", "Arguments to the entrypoint; the image's CMD if not given."),
        "workingDir": ("string", "Working directory of the entrypoint."),
        "env": ("[]EnvVar", "Environment variables to set in the container."),
        "envFrom": ("[]object:v1.EnvFromSource", "ConfigMaps and Secrets whose keys become variables."),
        "ports": ("[]ContainerPort", "Ports the container exposes (informational)."),
        "resources": ("ResourceRequirements", "Compute resources requested and limited."),
        "resizePolicy": ("[]object:v1.ContainerResizePolicy", "How resources are resized."),
        "restartPolicy": ("string", "Always for a sidecar init container."),
        "volumeMounts": ("[]VolumeMount", "Volumes mounted into the container's filesystem."),
        "volumeDevices": ("[]object:v1.VolumeDevice", "Block devices used by the container."),
        "livenessProbe": ("Probe", "Probe of container liveness; failing restarts the container."),
        "readinessProbe": ("Probe", "Probe of readiness for traffic."),
        "startupProbe": ("Probe", "Probe that the container has started."),
        "lifecycle": ("Lifecycle", "Actions on container start and stop."),
        "terminationMessagePath": ("string", "File the termination message is read from."),
        "terminationMessagePolicy": ("string", "File or FallbackToLogsOnError."),
        "securityContext": ("SecurityContext", "Container-level security attributes."),
        "stdin": ("boolean", "Allocate a buffer for stdin."), "stdinOnce": ("boolean", "Close stdin after one attach."),
        "tty": ("boolean", "Allocate a TTY."),
    }),
    "Probe": ("A health check of a container, and how often it runs.", {
        "exec": ("ExecAction", "Run a command in the container."),
        "httpGet": ("HTTPGetAction", "An HTTP GET against the container."),
        "tcpSocket": ("TCPSocketAction", "A TCP connection to the container."),
        "grpc": ("GRPCAction", "A gRPC health check."),
        "initialDelaySeconds": ("int32", "Seconds after the start before the first probe."),
        "timeoutSeconds": ("int32", "Seconds before the probe times out (1)."),
        "periodSeconds": ("int32", "Seconds between probes (10)."),
        "successThreshold": ("int32", "Consecutive successes to count as passing (1)."),
        "failureThreshold": ("int32", "Consecutive failures to count as failing (3)."),
        "terminationGracePeriodSeconds": ("int64", "Grace period when a liveness probe fails."),
    }),
    "ExecAction": ("A command run in the container.", {"command": ("[]string", "The command and its arguments.")}),
    "HTTPGetAction": ("An HTTP GET request.", {
        "path": ("string", "Path to request."), "port": ("IntOrString", "Port number or name."),
        "host": ("string", "Host (the pod IP by default)."), "scheme": ("string", "HTTP or HTTPS."),
        "httpHeaders": ("[]object:v1.HTTPHeader", "Extra request headers."),
    }),
    "TCPSocketAction": ("A TCP connection.", {
        "port": ("IntOrString", "Port number or name."), "host": ("string", "Host (the pod IP by default)."),
    }),
    "GRPCAction": ("A gRPC health check.", {
        "port": ("int32", "Port number."), "service": ("string", "Service name for the health check."),
    }),
    "Lifecycle": ("Actions on container start and stop.", {
        "postStart": ("LifecycleHandler", "Run right after the container is created."),
        "preStop": ("LifecycleHandler", "Run before the container is stopped."),
    }),
    "LifecycleHandler": ("One lifecycle action.", {
        "exec": ("ExecAction", "Run a command."), "httpGet": ("HTTPGetAction", "An HTTP GET."),
        "tcpSocket": ("TCPSocketAction", "Deprecated."), "sleep": ("SleepAction", "Sleep."),
    }),
    "SleepAction": ("A sleep.", {"seconds": ("int64", "Seconds to sleep.")}),
    "SecurityContext": ("Security attributes of a container.", {
        "runAsUser": ("int64", "UID the entrypoint runs as."), "runAsGroup": ("int64", "GID the entrypoint runs as."),
        "runAsNonRoot": ("boolean", "Refuse to run as root."), "privileged": ("boolean", "Run privileged."),
        "readOnlyRootFilesystem": ("boolean", "Read-only root filesystem."),
        "allowPrivilegeEscalation": ("boolean", "Allow gaining more privileges than the parent."),
        "capabilities": ("object:v1.Capabilities", "Capabilities added and dropped."),
        "procMount": ("string", "Default or Unmasked."),
        "seLinuxOptions": ("object:v1.SELinuxOptions", "SELinux context."),
        "seccompProfile": ("object:v1.SeccompProfile", "Seccomp profile."),
        "appArmorProfile": ("object:v1.AppArmorProfile", "AppArmor profile."),
        "windowsOptions": ("object:v1.WindowsSecurityContextOptions", "Windows-specific settings."),
    }),
    "PodSecurityContext": ("Security attributes of all containers of a pod.", {
        "runAsUser": ("int64", "UID the entrypoints run as."), "runAsGroup": ("int64", "GID the entrypoints run as."),
        "runAsNonRoot": ("boolean", "Refuse to run as root."), "fsGroup": ("int64", "GID owning the volumes."),
        "fsGroupChangePolicy": ("string", "OnRootMismatch or Always."),
        "supplementalGroups": ("[]int64", "Extra GIDs of the first process."),
        "supplementalGroupsPolicy": ("string", "Merge or Strict."),
        "sysctls": ("[]object:v1.Sysctl", "Namespaced sysctls."),
        "seLinuxOptions": ("object:v1.SELinuxOptions", "SELinux context."),
        "seLinuxChangePolicy": ("string", "How SELinux labels are applied to volumes."),
        "seccompProfile": ("object:v1.SeccompProfile", "Seccomp profile."),
        "appArmorProfile": ("object:v1.AppArmorProfile", "AppArmor profile."),
        "windowsOptions": ("object:v1.WindowsSecurityContextOptions", "Windows-specific settings."),
    }),
    "EmptyDirVolumeSource": ("A temporary directory sharing the pod's lifetime.", {
        "medium": ("string", "\"\" (node disk) or Memory."), "sizeLimit": ("Quantity", "Maximum size."),
    }),
    "DaemonSetUpdateStrategy": ("How a DaemonSet replaces its pods.", {
        "type": ("string", "RollingUpdate (default) or OnDelete."),
        "rollingUpdate": ("RollingUpdateDaemonSet", "Parameters of a rolling update."),
    }),
    "RollingUpdateDaemonSet": ("Bounds of a DaemonSet rolling update.", {
        "maxUnavailable": ("IntOrString", "Nodes whose pod may be unavailable (1)."),
        "maxSurge": ("IntOrString", "Nodes that may run an extra pod (0)."),
    }),
    "StatefulSetUpdateStrategy": ("How a StatefulSet replaces its pods.", {
        "type": ("string", "RollingUpdate (default) or OnDelete."),
        "rollingUpdate": ("RollingUpdateStatefulSetStrategy", "Parameters of a rolling update."),
    }),
    "RollingUpdateStatefulSetStrategy": ("Bounds of a StatefulSet rolling update.", {
        "partition": ("int32", "Ordinal at which updates stop."),
        "maxUnavailable": ("IntOrString", "Pods that may be unavailable (1)."),
    }),
    "EnvVar": ("An environment variable of a container.", {
        "name": ("string", "Name of the variable."), "value": ("string", "Value of the variable."),
        "valueFrom": ("object:v1.EnvVarSource", "Source of the value (field, resource, ConfigMap or Secret key)."),
    }),
    "ContainerPort": ("A network port of a container.", {
        "containerPort": ("int32", "Port number on the pod's IP address."),
        "name": ("string", "Name of the port (IANA_SVC_NAME), referable from services."),
        "protocol": ("string", "TCP, UDP or SCTP (TCP)."),
        "hostPort": ("int32", "Port number on the host."),
        "hostIP": ("string", "Host IP the host port binds to."),
    }),
    "ResourceRequirements": ("Compute resource requests and limits.", {
        "requests": ("map[Quantity]", "Minimum resources required; what the scheduler reserves on a node."),
        "limits": ("map[Quantity]", "Maximum resources allowed."),
        "claims": ("[]object:v1.ResourceClaim", "Dynamic resource claims used."),
    }),
    "VolumeMount": ("A volume mounted into a container.", {
        "name": ("string", "Name of the volume."), "mountPath": ("string", "Path in the container."),
        "readOnly": ("boolean", "Mount read-only."), "subPath": ("string", "Path within the volume."),
        "subPathExpr": ("string", "subPath with $(VAR) expansion."),
        "mountPropagation": ("string", "None, HostToContainer or Bidirectional."),
        "recursiveReadOnly": ("string", "Disabled, IfPossible or Enabled."),
    }),
    "Volume": ("A named volume of a pod.", {
        "name": ("string", "Name of the volume (DNS label)."),
        "emptyDir": ("EmptyDirVolumeSource", "A temporary directory sharing the pod's lifetime."),
        "configMap": ("object:v1.ConfigMapVolumeSource", "A ConfigMap's keys as files."),
        "secret": ("object:v1.SecretVolumeSource", "A Secret's keys as files."),
        "hostPath": ("object:v1.HostPathVolumeSource", "A path on the node."),
        "persistentVolumeClaim": ("object:v1.PersistentVolumeClaimVolumeSource", "A PersistentVolumeClaim."),
        "projected": ("object:v1.ProjectedVolumeSource", "Several sources in one directory."),
        "downwardAPI": ("object:v1.DownwardAPIVolumeSource", "Pod fields as files."),
    }),
    "Affinity": ("Scheduling constraints on nodes and on other pods.", {
        "nodeAffinity": ("NodeAffinity", "Node affinity of the pod."),
        "podAffinity": ("PodAffinity", "Co-locate with pods matching these terms."),
        "podAntiAffinity": ("PodAffinity", "Keep away from pods matching these terms."),
    }),
    "NodeAffinity": ("Node affinity: hard and soft node selector terms.", {
        "requiredDuringSchedulingIgnoredDuringExecution": ("NodeSelector", "Terms a node must match."),
        "preferredDuringSchedulingIgnoredDuringExecution": ("[]PreferredSchedulingTerm", "Weighted preferences."),
    }),
    "NodeSelector": ("ORed node selector terms.", {
        "nodeSelectorTerms": ("[]NodeSelectorTerm", "At least one term must match."),
    }),
    "NodeSelectorTerm": ("ANDed requirements on a node's labels and fields.", {
        "matchExpressions": ("[]NodeSelectorRequirement", "Requirements on node labels."),
        "matchFields": ("[]NodeSelectorRequirement", "Requirements on node fields (metadata.name)."),
    }),
    "NodeSelectorRequirement": ("A requirement on a node label or field.", {
        "key": ("string", "Label key or field."), "operator": ("string", "In, NotIn, Exists, DoesNotExist, Gt, Lt."),
        "values": ("[]string", "Values compared with the operator."),
    }),
    "PreferredSchedulingTerm": ("A weighted node selector term.", {
        "weight": ("int32", "Weight 1-100."), "preference": ("NodeSelectorTerm", "The term."),
    }),
    "PodAffinity": ("Hard and soft inter-pod (anti-)affinity terms.", {
        "requiredDuringSchedulingIgnoredDuringExecution": ("[]PodAffinityTerm", "Terms that must hold."),
        "preferredDuringSchedulingIgnoredDuringExecution": ("[]WeightedPodAffinityTerm", "Weighted preferences."),
    }),
    "PodAffinityTerm": ("Pods (by label selector and namespaces) in the same topology domain.", {
        "labelSelector": ("LabelSelector", "Pods this term is about."),
        "namespaceSelector": ("LabelSelector", "Namespaces of those pods."),
        "namespaces": ("[]string", "Namespaces of those pods."),
        "topologyKey": ("string", "Node label defining the topology domain."),
        "matchLabelKeys": ("[]string", "Label keys of the incoming pod added to the selector."),
        "mismatchLabelKeys": ("[]string", "Label keys whose values must differ."),
    }),
    "WeightedPodAffinityTerm": ("A weighted pod affinity term.", {
        "weight": ("int32", "Weight 1-100."), "podAffinityTerm": ("PodAffinityTerm", "The term."),
    }),
    "TopologySpreadConstraint": ("How matching pods spread over a topology.", {
        "maxSkew": ("int32", "Largest allowed difference of matching pods between domains."),
        "topologyKey": ("string", "Node label defining the domains."),
        "whenUnsatisfiable": ("string", "DoNotSchedule or ScheduleAnyway."),
        "labelSelector": ("LabelSelector", "Pods counted."),
        "minDomains": ("int32", "Minimum number of eligible domains."),
        "nodeAffinityPolicy": ("string", "Honor or Ignore the pod's node affinity."),
        "nodeTaintsPolicy": ("string", "Honor or Ignore node taints."),
        "matchLabelKeys": ("[]string", "Label keys of the incoming pod added to the selector."),
    }),
    "Toleration": ("Lets a pod be scheduled on (or stay on) nodes with a matching taint.", {
        "key": ("string", "Taint key; empty with operator Exists matches all."),
        "operator": ("string", "Exists or Equal (default)."), "value": ("string", "Taint value for Equal."),
        "effect": ("string", "NoSchedule, PreferNoSchedule or NoExecute; empty matches all."),
        "tolerationSeconds": ("int64", "For NoExecute: how long the pod stays bound after the taint appears."),
    }),
    "Taint": ("Repels pods that do not tolerate it.", {
        "key": ("string", "Taint key."), "value": ("string", "Taint value."),
        "effect": ("string", "NoSchedule, PreferNoSchedule or NoExecute."),
        "timeAdded": ("Time", "When a NoExecute taint was added."),
    }),
    "PodStatus": ("The observed state of a pod, reported by the kubelet.", {
        "phase": ("string", "Pending, Running, Succeeded, Failed or Unknown."),
        "conditions": ("[]Condition", "PodScheduled, Initialized, ContainersReady, Ready."),
        "hostIP": ("string", "IP address of the node."), "podIP": ("string", "IP address of the pod."),
        "hostIPs": ("[]object:v1.HostIP", "IP addresses of the node."),
        "podIPs": ("[]object:v1.PodIP", "IP addresses of the pod."),
        "startTime": ("Time", "When the kubelet accepted the pod."),
        "containerStatuses": ("[]ContainerStatus", "One entry per container."),
        "initContainerStatuses": ("[]ContainerStatus", "One entry per init container."),
        "nominatedNodeName": ("string", "Node where the pod may run after preemption."),
        "qosClass": ("string", "Guaranteed, Burstable or BestEffort."),
        "reason": ("string", "Why the pod is in this state (e.g. Evicted)."),
        "message": ("string", "Human-readable detail of the state."),
    }),
    "ContainerStatus": ("The state of one container.", {
        "name": ("string", "Container name."), "ready": ("boolean", "Passed its readiness probe."),
        "restartCount": ("int32", "Number of restarts."), "image": ("string", "Image running."),
        "imageID": ("string", "Image ID."), "containerID": ("string", "Container ID (<runtime>://<id>)."),
        "started": ("boolean", "Passed its startup probe."),
        "state": ("object:v1.ContainerState", "waiting, running or terminated, with details."),
        "lastState": ("object:v1.ContainerState", "The state of the previous instance."),
    }),
    "Condition": ("One aspect of an object's state.", {
        "type": ("string", "Type of the condition."), "status": ("string", "True, False or Unknown."),
        "lastTransitionTime": ("Time", "Last change of status."), "reason": ("string", "CamelCase reason."),
        "lastProbeTime": ("Time", "Last probe (pods)."), "lastHeartbeatTime": ("Time", "Last heartbeat (nodes)."),
        "lastUpdateTime": ("Time", "Last update (workloads)."),
        "message": ("string", "Human-readable detail."),
    }),
    "DeploymentSpec": ("The desired state of a Deployment.", {
        "replicas": ("int32", "Number of desired pods (1)."),
        "selector": ("LabelSelector", "Selects the pods of this deployment; must match the template's labels."),
        "template": ("PodTemplateSpec", "The pods to create."),
        "strategy": ("DeploymentStrategy", "RollingUpdate (maxUnavailable, maxSurge) or Recreate."),
        "minReadySeconds": ("int32", "Seconds a new pod must be ready to count as available."),
        "revisionHistoryLimit": ("int32", "Old ReplicaSets kept for rollback (10)."),
        "paused": ("boolean", "Pause rollouts."),
        "progressDeadlineSeconds": ("int32", "Seconds before a stalled rollout is reported (600)."),
    }),
    "DeploymentStrategy": ("How a Deployment replaces old pods by new ones.", {
        "type": ("string", "Recreate or RollingUpdate (default)."),
        "rollingUpdate": ("RollingUpdateDeployment", "Parameters of a rolling update."),
    }),
    "RollingUpdateDeployment": ("Bounds of a rolling update.", {
        "maxUnavailable": ("IntOrString", "Pods that may be unavailable during the update (25%)."),
        "maxSurge": ("IntOrString", "Pods that may be created above the desired number (25%)."),
    }),
    "DeploymentStatus": ("The observed state of a Deployment.", {
        "replicas": ("int32", "Pods targeted by this deployment."),
        "updatedReplicas": ("int32", "Pods with the current template."),
        "readyReplicas": ("int32", "Ready pods."), "availableReplicas": ("int32", "Available pods."),
        "unavailableReplicas": ("int32", "Pods still needed to reach 100% availability."),
        "observedGeneration": ("int64", "The generation last acted on."),
        "collisionCount": ("int32", "Hash collisions of the template."),
        "conditions": ("[]Condition", "Available, Progressing, ReplicaFailure."),
    }),
    "ReplicaSetSpec": ("The desired state of a ReplicaSet.", {
        "replicas": ("int32", "Number of desired pods (1)."),
        "selector": ("LabelSelector", "Selects the pods counted against replicas."),
        "template": ("PodTemplateSpec", "The pods to create when too few exist."),
        "minReadySeconds": ("int32", "Seconds a new pod must be ready to count as available."),
    }),
    "ReplicaSetStatus": ("The observed state of a ReplicaSet.", {
        "replicas": ("int32", "Pods currently matching."), "readyReplicas": ("int32", "Ready pods."),
        "availableReplicas": ("int32", "Available pods."),
        "fullyLabeledReplicas": ("int32", "Pods whose labels match the template's."),
        "observedGeneration": ("int64", "The generation last acted on."),
        "conditions": ("[]Condition", "ReplicaFailure."),
    }),
    "ReplicationControllerSpec": ("The desired state of a ReplicationController.", {
        "replicas": ("int32", "Number of desired pods (1)."),
        "selector": ("map[string]", "Labels of the pods counted against replicas."),
        "template": ("PodTemplateSpec", "The pods to create when too few exist."),
        "minReadySeconds": ("int32", "Seconds a new pod must be ready to count as available."),
    }),
    "DaemonSetSpec": ("The desired state of a DaemonSet.", {
        "selector": ("LabelSelector", "Selects the pods of this daemon set."),
        "template": ("PodTemplateSpec", "The pod run on every eligible node."),
        "updateStrategy": ("DaemonSetUpdateStrategy", "RollingUpdate or OnDelete."),
        "minReadySeconds": ("int32", "Seconds a new pod must be ready to count as available."),
        "revisionHistoryLimit": ("int32", "Old revisions kept (10)."),
    }),
    "StatefulSetSpec": ("The desired state of a StatefulSet.", {
        "replicas": ("int32", "Number of desired pods (1)."),
        "selector": ("LabelSelector", "Selects the pods of this stateful set."),
        "template": ("PodTemplateSpec", "The pods to create."),
        "volumeClaimTemplates": ("[]object:v1.PersistentVolumeClaim", "Claims every pod gets."),
        "serviceName": ("string", "Governing headless service."),
        "podManagementPolicy": ("string", "OrderedReady or Parallel."),
        "updateStrategy": ("StatefulSetUpdateStrategy", "RollingUpdate or OnDelete."),
        "revisionHistoryLimit": ("int32", "Old revisions kept (10)."),
        "minReadySeconds": ("int32", "Seconds a new pod must be ready to count as available."),
        "persistentVolumeClaimRetentionPolicy": ("object:v1.StatefulSetPersistentVolumeClaimRetentionPolicy",
                                                 "What happens to claims on scale-down and deletion."),
        "ordinals": ("object:v1.StatefulSetOrdinals", "Numbering of the replicas."),
    }),
    "ServiceSpec": ("The desired state of a Service.", {
        "type": ("string", "ClusterIP (default), NodePort, LoadBalancer or ExternalName."),
        "selector": ("map[string]", "Routes traffic to pods with these labels."),
        "ports": ("[]ServicePort", "Ports the service exposes."),
        "clusterIP": ("string", "Virtual IP, allocated from the service CIDR; None for a headless service."),
        "clusterIPs": ("[]string", "The cluster IPs (one per IP family)."),
        "externalIPs": ("[]string", "External IPs routed to the service."),
        "sessionAffinity": ("string", "ClientIP or None."),
        "sessionAffinityConfig": ("object:v1.SessionAffinityConfig", "Session affinity parameters."),
        "loadBalancerIP": ("string", "Deprecated: requested load balancer IP."),
        "loadBalancerSourceRanges": ("[]string", "Client CIDRs allowed through the load balancer."),
        "loadBalancerClass": ("string", "Load balancer implementation."),
        "externalName": ("string", "DNS name returned for an ExternalName service."),
        "externalTrafficPolicy": ("string", "Cluster or Local."),
        "internalTrafficPolicy": ("string", "Cluster or Local."),
        "healthCheckNodePort": ("int32", "Health check node port for Local traffic policy."),
        "publishNotReadyAddresses": ("boolean", "Publish addresses of pods that are not ready."),
        "ipFamilies": ("[]string", "IPv4 and/or IPv6."), "ipFamilyPolicy": ("string", "SingleStack, PreferDualStack, RequireDualStack."),
        "allocateLoadBalancerNodePorts": ("boolean", "Allocate node ports for LoadBalancer services."),
        "trafficDistribution": ("string", "PreferClose."),
    }),
    "ServicePort": ("A port of a Service.", {
        "name": ("string", "Name of the port (required with several ports)."),
        "port": ("int32", "Port the service exposes."),
        "targetPort": ("IntOrString", "Number or name of the port on the pods (defaults to port)."),
        "nodePort": ("int32", "Port on every node for NodePort/LoadBalancer, allocated from the node port range."),
        "protocol": ("string", "TCP, UDP or SCTP (TCP)."),
        "appProtocol": ("string", "Application protocol of the port."),
    }),
    "NodeSpec": ("The configuration of a node.", {
        "unschedulable": ("boolean", "Keep new pods off the node (cordon)."),
        "taints": ("[]Taint", "Taints repelling pods that do not tolerate them."),
        "podCIDR": ("string", "Pod IP range of the node."), "podCIDRs": ("[]string", "Pod IP ranges of the node."),
        "providerID": ("string", "Cloud provider id."),
        "configSource": ("object:v1.NodeConfigSource", "Deprecated."), "externalID": ("string", "Deprecated."),
    }),
    "NodeStatus": ("The observed state of a node, reported by its kubelet.", {
        "capacity": ("map[Quantity]", "Total resources of the node."),
        "allocatable": ("map[Quantity]", "Resources available to pods."),
        "phase": ("string", "Deprecated."),
        "conditions": ("[]Condition", "Ready, MemoryPressure, DiskPressure, PIDPressure..."),
        "addresses": ("[]object:v1.NodeAddress", "InternalIP, Hostname..."),
        "nodeInfo": ("object:v1.NodeSystemInfo", "Versions, OS, architecture."),
    }),
    "NamespaceSpec": ("The finalizers of a namespace.", {
        "finalizers": ("[]string", "Finalizers to clear before the namespace is removed."),
    }),
    "NamespaceStatus": ("The observed state of a namespace.", {
        "phase": ("string", "Active or Terminating."),
        "conditions": ("[]Condition", "Why a namespace cannot be removed yet."),
    }),
    "ObjectReference": ("A reference to an object (kind, namespace, name, uid).", {
        "kind": ("string", "Kind of the referent."), "namespace": ("string", "Namespace of the referent."),
        "name": ("string", "Name of the referent."), "uid": ("string", "UID of the referent."),
        "apiVersion": ("string", "API version of the referent."),
        "resourceVersion": ("string", "Resource version of the referent."),
        "fieldPath": ("string", "A field within the referent."),
    }),
    "Preconditions": ("Conditions a delete must meet.", {
        "uid": ("string", "The object's UID must be this."),
        "resourceVersion": ("string", "The object's resourceVersion must be this."),
    }),
    "DeleteOptions": ("Options of a DELETE.", {
        "kind": ("string", "DeleteOptions."), "apiVersion": ("string", "v1 or meta.k8s.io/v1."),
        "gracePeriodSeconds": ("int64", "Seconds before the object is deleted (pods)."),
        "preconditions": ("Preconditions", "Must hold for the deletion to happen."),
        "orphanDependents": ("boolean", "Deprecated: orphan the dependents."),
        "propagationPolicy": ("string", "Orphan, Background or Foreground."),
        "dryRun": ("[]string", "All: check, do not delete."),
        "ignoreStoreReadErrorWithClusterBreakingPotential": ("boolean", "Delete a corrupt object."),
    }),
    "ScaleSpec": ("The desired scale.", {"replicas": ("int32", "Desired number of replicas.")}),
    "ScaleStatus": ("The observed scale.", {
        "replicas": ("int32", "Actual number of replicas."), "selector": ("string", "Label selector of the pods."),
    }),
    "LeaseSpec": ("The holder of a lease and its timing.", {
        "holderIdentity": ("string", "Current holder."),
        "leaseDurationSeconds": ("int32", "Seconds candidates wait before taking the lease over."),
        "acquireTime": ("MicroTime", "When the current holder acquired it."),
        "renewTime": ("MicroTime", "When the holder last renewed it."),
        "leaseTransitions": ("int32", "Number of holder changes."),
        "strategy": ("string", "Coordinated leader election strategy."),
        "preferredHolder": ("string", "Holder the lease should move to."),
    }),
}


#: kinds that are request or response bodies of subresources and options, not served
#: resources (their registry entries carry the served kinds' schemas): Scale
#: (autoscaling/v1, ``*/scale``), Eviction (policy/v1, ``pods/NAME/eviction``) and
#: DeleteOptions (the body of a DELETE)
BODY_KINDS: dict[str, KindSchema] = {
    "Scale": KindSchema("Scale is the scale subresource of a workload (autoscaling/v1).", {
        "spec": ("ScaleSpec", "Desired scale."), "status": ("ScaleStatus", "Observed scale.")}),
    "Eviction": KindSchema("Eviction evicts a pod (policy/v1, pods/NAME/eviction).", {
        "deleteOptions": ("DeleteOptions", "Options of the deletion.")}),
    "DeleteOptions": KindSchema("DeleteOptions are the options of a DELETE.", {
        f: t for f, t in TYPES["DeleteOptions"][1].items() if f not in ("kind", "apiVersion")}),
}


def kind_fields(kind: KindKey) -> KindSchema | None:
    """The schema of ``kind``: its registry entry's (``REGISTRY.of_kind(kind).schema``), else
    one of :data:`BODY_KINDS`; None for a kind with neither (e.g. one added at run time
    without a schema)."""
    r = REGISTRY.of_kind(kind)
    if r is not None and r.schema is not None:
        return r.schema
    return BODY_KINDS.get(kind) if isinstance(kind, str) else None


def list_extensions(owner: str, field: str) -> dict[str, Any]:
    """The OpenAPI extensions of list ``field`` of struct (or kind) ``owner``, from
    :func:`controlplane.api.listfields.declared` (``{}`` when it declares none)."""
    f = listfields.declared(owner, field)
    out: dict[str, Any] = {}
    if f is None:
        return out
    if f.merge_key:
        out["x-kubernetes-patch-merge-key"] = f.merge_key
    if f.strategy:
        out["x-kubernetes-patch-strategy"] = f.strategy
    if f.list_type:
        out["x-kubernetes-list-type"] = f.list_type
    if f.list_type == "map":
        out["x-kubernetes-list-map-keys"] = list(f.map_keys)
    return out


def _prop(field: str, typ: str, desc: str, prefix: str, owner: str = "") -> dict[str, Any]:
    if typ.startswith("[]"):
        items = _prop(field, typ[2:], "", prefix)
        items.pop("description", None)
        out: dict[str, Any] = {"type": "array", "items": items, "description": desc}
        out.update(list_extensions(owner, field))
        return out
    if typ.startswith("map["):
        val = {"map[string]": {"type": "string"}, "map[bytes]": {"type": "string", "format": "byte"}}.get(
            typ, {"type": "string", "format": "quantity"})
        return {"type": "object", "additionalProperties": val, "description": desc}
    if typ in ("Time", "MicroTime"):
        return {"type": "string", "format": "date-time", "description": desc}
    if typ == "Quantity":
        return {"type": "string", "format": "quantity", "description": desc}
    if typ == "IntOrString":
        return {"type": "string", "format": "int-or-string", "x-kubernetes-int-or-string": True, "description": desc}
    if typ in ("int32", "int64", "integer"):
        return {"type": "integer", "format": "int32" if typ == "int32" else "int64", "description": desc}
    if typ == "number":
        return {"type": "number", "format": "double", "description": desc}
    if typ == "bytes":
        return {"type": "string", "format": "byte", "description": desc}
    if typ.startswith(_OBJ):
        return {"type": "object", "description": desc}
    if typ in TYPES:
        return {"allOf": [{"$ref": f"#/components/schemas/{prefix}{typ}"}], "default": {}, "description": desc}
    return {"type": typ, "description": desc}


def component_schemas(prefix: str = "io.k8s.controlplane.") -> dict[str, dict[str, Any]]:
    """The named types as OpenAPI v3 ``components.schemas`` (``prefix`` + type name)."""
    return {prefix + name: {"type": "object", "description": desc,
                            "properties": {f: _prop(f, t, d, prefix, name) for f, (t, d) in fields.items()}}
            for name, (desc, fields) in TYPES.items()}


def kind_schema(kind: str, api_version: str, prefix: str = "io.k8s.controlplane.") -> dict[str, Any]:
    """The top-level schema of ``kind`` (its description and fields, referring to the named types)."""
    ks = kind_fields(kind)
    desc, fields = (ks.description, ks.fields) if ks is not None else ("", {})
    props = {"apiVersion": {"type": "string", "description": "Versioned schema of this representation "
                                                             f"of an object ({api_version})."},
             "kind": {"type": "string", "description": f"REST resource this object represents ({kind})."},
             "metadata": _prop("metadata", "ObjectMeta", "Standard object's metadata.", prefix)}
    props.update({f: _prop(f, t, d, prefix, kind) for f, (t, d) in fields.items()})
    out: dict[str, Any] = {"type": "object", "properties": props}
    if desc:
        out["description"] = desc
    return out
