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

Field notation: ``(type[,omitempty], description)`` where type is ``string``, ``boolean``, ``int32``,
``int64`` (``integer`` = int64), ``number`` (float64), ``bytes`` (``[]byte``: base64 text),
``Quantity``, ``IntOrString``, ``Time``, ``MicroTime``, ``map[string]`` (map[string]string),
``map[bytes]``, ``map[Quantity]``, ``object:<Go type>`` (a struct not modelled field by field:
any JSON object, kept as sent), a :data:`TYPES` name, or ``[]`` + any of those. Lists carry
the tags :mod:`controlplane.api.listfields` declares for their struct and field — the same
the server's strategic merge and server-side apply use (``x-kubernetes-patch-merge-key``,
``x-kubernetes-patch-strategy``, ``x-kubernetes-list-type``, ``x-kubernetes-list-map-keys``).
A type ending in ``,omitempty`` is a Go value field tagged ``omitempty`` (lists and maps that
are not required, and the scalar value fields so tagged in the Go types): the decoder drops
its zero value (``""``, ``0``, ``false``, ``[]``, ``{}``) as Go's encoder leaves it out, so
nothing stored or returned carries it. Fields without the tag (pointers, required fields)
keep their zero values.

The field lists, Go types and required fields are those of Kubernetes v1.32's OpenAPI
(``api/openapi-spec/v3/*.json``, as the kubernetes Python client 32.0.1 models carry them);
the descriptions are our own short ones.
"""

from __future__ import annotations

from typing import Any

from controlplane.api import listfields
from controlplane.api.registry import KindSchema
from controlplane.api.resources import REGISTRY

Fields = dict[str, tuple[str, str]]

#: struct types whose field list here is abridged (unlisted fields kept, never reported):
#: none — every struct of the served kinds is declared field by field
OPEN_TYPES: frozenset[str] = frozenset()

#: the tag that marks a field Go encodes only when it is not its zero value (a value — not
#: pointer — field with ``omitempty`` in its ``json`` tag)
OMITEMPTY = ",omitempty"


def base_type(typ: str) -> str:
    """A field's type without its :data:`OMITEMPTY` tag (``[]Container,omitempty`` → ``[]Container``)."""
    return typ[:-len(OMITEMPTY)] if typ.endswith(OMITEMPTY) else typ


def omits_zero(typ: str) -> bool:
    """Whether a field of type ``typ`` carries the :data:`OMITEMPTY` tag."""
    return typ.endswith(OMITEMPTY)

_OBJ = "object:"

TYPES: dict[str, tuple[str, Fields]] = {
    "AWSElasticBlockStoreVolumeSource": ("AWS elastic block store volume source.", {
        "fsType": ("string", "Fs type of the AWS elastic block store volume source."),
        "partition": ("int32", "Partition of the AWS elastic block store volume source."),
        "readOnly": ("boolean", "Read only of the AWS elastic block store volume source."),
        "volumeID": ("string", "Volume ID of the AWS elastic block store volume source."),
    }),
    "Affinity": ("Scheduling constraints on nodes and on other pods.", {
        "nodeAffinity": ("NodeAffinity", "Node affinity of the pod."),
        "podAffinity": ("PodAffinity", "Co-locate with pods matching these terms."),
        "podAntiAffinity": ("PodAffinity", "Keep away from pods matching these terms."),
    }),
    "AppArmorProfile": ("App armor profile.", {
        "localhostProfile": ("string", "Localhost profile of the app armor profile."),
        "type": ("string", "Type of the app armor profile."),
    }),
    "AttachedVolume": ("Attached volume.", {
        "devicePath": ("string", "Device path of the attached volume."),
        "name": ("string", "Name of the attached volume."),
    }),
    "AzureDiskVolumeSource": ("Azure disk volume source.", {
        "cachingMode": ("string", "Caching mode of the azure disk volume source."),
        "diskName": ("string", "Disk name of the azure disk volume source."),
        "diskURI": ("string", "Disk URI of the azure disk volume source."),
        "fsType": ("string", "Fs type of the azure disk volume source."),
        "kind": ("string", "Kind of the azure disk volume source."),
        "readOnly": ("boolean", "Read only of the azure disk volume source."),
    }),
    "AzureFileVolumeSource": ("Azure file volume source.", {
        "readOnly": ("boolean", "Read only of the azure file volume source."),
        "secretName": ("string", "Secret name of the azure file volume source."),
        "shareName": ("string", "Share name of the azure file volume source."),
    }),
    "CSIVolumeSource": ("CSI volume source.", {
        "driver": ("string", "Driver of the CSI volume source."),
        "fsType": ("string", "Fs type of the CSI volume source."),
        "nodePublishSecretRef": ("LocalObjectReference", "Node publish secret ref of the CSI volume source."),
        "readOnly": ("boolean", "Read only of the CSI volume source."),
        "volumeAttributes": ("map[string],omitempty", "Volume attributes of the CSI volume source."),
    }),
    "Capabilities": ("Capabilities.", {
        "add": ("[]string,omitempty", "Add of the capabilities."),
        "drop": ("[]string,omitempty", "Drop of the capabilities."),
    }),
    "CephFSVolumeSource": ("Ceph FS volume source.", {
        "monitors": ("[]string", "Monitors of the ceph FS volume source."),
        "path": ("string", "Path of the ceph FS volume source."),
        "readOnly": ("boolean", "Read only of the ceph FS volume source."),
        "secretFile": ("string", "Secret file of the ceph FS volume source."),
        "secretRef": ("LocalObjectReference", "Secret ref of the ceph FS volume source."),
        "user": ("string", "User of the ceph FS volume source."),
    }),
    "CinderVolumeSource": ("Cinder volume source.", {
        "fsType": ("string", "Fs type of the cinder volume source."),
        "readOnly": ("boolean", "Read only of the cinder volume source."),
        "secretRef": ("LocalObjectReference", "Secret ref of the cinder volume source."),
        "volumeID": ("string", "Volume ID of the cinder volume source."),
    }),
    "ClientIPConfig": ("Client IP config.", {
        "timeoutSeconds": ("int32", "Timeout seconds of the client IP config."),
    }),
    "ClusterTrustBundleProjection": ("Cluster trust bundle projection.", {
        "labelSelector": ("LabelSelector", "Label selector of the cluster trust bundle projection."),
        "name": ("string", "Name of the cluster trust bundle projection."),
        "optional": ("boolean", "Optional of the cluster trust bundle projection."),
        "path": ("string", "Path of the cluster trust bundle projection."),
        "signerName": ("string", "Signer name of the cluster trust bundle projection."),
    }),
    "Condition": ("One aspect of an object's state.", {
        "lastTransitionTime": ("Time", "Last change of status."),
        "message": ("string", "Human-readable detail."),
        "observedGeneration": ("int64", "Observed generation of the condition."),
        "reason": ("string", "CamelCase reason."),
        "status": ("string", "True, False or Unknown."),
        "type": ("string", "Type of the condition."),
    }),
    "ConfigMapEnvSource": ("Config map env source.", {
        "name": ("string", "Name of the config map env source."),
        "optional": ("boolean", "Optional of the config map env source."),
    }),
    "ConfigMapKeySelector": ("Config map key selector.", {
        "key": ("string", "Key of the config map key selector."),
        "name": ("string", "Name of the config map key selector."),
        "optional": ("boolean", "Optional of the config map key selector."),
    }),
    "ConfigMapNodeConfigSource": ("Config map node config source.", {
        "kubeletConfigKey": ("string", "Kubelet config key of the config map node config source."),
        "name": ("string", "Name of the config map node config source."),
        "namespace": ("string", "Namespace of the config map node config source."),
        "resourceVersion": ("string", "Resource version of the config map node config source."),
        "uid": ("string", "Uid of the config map node config source."),
    }),
    "ConfigMapProjection": ("Config map projection.", {
        "items": ("[]KeyToPath,omitempty", "Items of the config map projection."),
        "name": ("string", "Name of the config map projection."),
        "optional": ("boolean", "Optional of the config map projection."),
    }),
    "ConfigMapVolumeSource": ("Config map volume source.", {
        "defaultMode": ("int32", "Default mode of the config map volume source."),
        "items": ("[]KeyToPath,omitempty", "Items of the config map volume source."),
        "name": ("string", "Name of the config map volume source."),
        "optional": ("boolean", "Optional of the config map volume source."),
    }),
    "Container": ("A single application container of a pod.", {
        "args": ("[]string,omitempty", "Arguments to the entrypoint; the image's CMD if not given."),
        "command": ("[]string,omitempty", "Entrypoint array; the image's ENTRYPOINT if not given."),
        "env": ("[]EnvVar,omitempty", "Environment variables to set in the container."),
        "envFrom": ("[]EnvFromSource,omitempty", "ConfigMaps and Secrets whose keys become variables."),
        "image": ("string,omitempty", "Container image name."),
        "imagePullPolicy": ("string,omitempty", "Always, Never or IfNotPresent."),
        "lifecycle": ("Lifecycle", "Actions on container start and stop."),
        "livenessProbe": ("Probe", "Probe of container liveness; failing restarts the container."),
        "name": ("string", "Name of the container, unique in the pod (DNS label)."),
        "ports": ("[]ContainerPort,omitempty", "Ports the container exposes (informational)."),
        "readinessProbe": ("Probe", "Probe of readiness for traffic."),
        "resizePolicy": ("[]ContainerResizePolicy,omitempty", "How resources are resized."),
        "resources": ("ResourceRequirements", "Compute resources requested and limited."),
        "restartPolicy": ("string", "Always for a sidecar init container."),
        "securityContext": ("SecurityContext", "Container-level security attributes."),
        "startupProbe": ("Probe", "Probe that the container has started."),
        "stdin": ("boolean,omitempty", "Allocate a buffer for stdin."),
        "stdinOnce": ("boolean,omitempty", "Close stdin after one attach."),
        "terminationMessagePath": ("string,omitempty", "File the termination message is read from."),
        "terminationMessagePolicy": ("string,omitempty", "File or FallbackToLogsOnError."),
        "tty": ("boolean,omitempty", "Allocate a TTY."),
        "volumeDevices": ("[]VolumeDevice,omitempty", "Block devices used by the container."),
        "volumeMounts": ("[]VolumeMount,omitempty", "Volumes mounted into the container's filesystem."),
        "workingDir": ("string,omitempty", "Working directory of the entrypoint."),
    }),
    "ContainerImage": ("Container image.", {
        "names": ("[]string,omitempty", "Names of the container image."),
        "sizeBytes": ("int64", "Size bytes of the container image."),
    }),
    "ContainerPort": ("A network port of a container.", {
        "containerPort": ("int32", "Port number on the pod's IP address."),
        "hostIP": ("string,omitempty", "Host IP the host port binds to."),
        "hostPort": ("int32,omitempty", "Port number on the host."),
        "name": ("string,omitempty", "Name of the port (IANA_SVC_NAME), referable from services."),
        "protocol": ("string,omitempty", "TCP, UDP or SCTP (TCP)."),
    }),
    "ContainerResizePolicy": ("Container resize policy.", {
        "resourceName": ("string", "Resource name of the container resize policy."),
        "restartPolicy": ("string", "Restart policy of the container resize policy."),
    }),
    "ContainerState": ("Container state.", {
        "running": ("ContainerStateRunning", "Running of the container state."),
        "terminated": ("ContainerStateTerminated", "Terminated of the container state."),
        "waiting": ("ContainerStateWaiting", "Waiting of the container state."),
    }),
    "ContainerStateRunning": ("Container state running.", {
        "startedAt": ("Time", "Started at of the container state running."),
    }),
    "ContainerStateTerminated": ("Container state terminated.", {
        "containerID": ("string,omitempty", "Container ID of the container state terminated."),
        "exitCode": ("int32", "Exit code of the container state terminated."),
        "finishedAt": ("Time", "Finished at of the container state terminated."),
        "message": ("string,omitempty", "Message of the container state terminated."),
        "reason": ("string,omitempty", "Reason of the container state terminated."),
        "signal": ("int32,omitempty", "Signal of the container state terminated."),
        "startedAt": ("Time", "Started at of the container state terminated."),
    }),
    "ContainerStateWaiting": ("Container state waiting.", {
        "message": ("string,omitempty", "Message of the container state waiting."),
        "reason": ("string,omitempty", "Reason of the container state waiting."),
    }),
    "ContainerStatus": ("The state of one container.", {
        "allocatedResources": ("map[Quantity],omitempty", "Allocated resources of the container status."),
        "allocatedResourcesStatus": ("[]ResourceStatus,omitempty", "Allocated resources status of the container status."),
        "containerID": ("string,omitempty", "Container ID (<runtime>://<id>)."),
        "image": ("string", "Image running."),
        "imageID": ("string", "Image ID."),
        "lastState": ("ContainerState", "The state of the previous instance."),
        "name": ("string", "Container name."),
        "ready": ("boolean", "Passed its readiness probe."),
        "resources": ("ResourceRequirements", "Resources of the container status."),
        "restartCount": ("int32", "Number of restarts."),
        "started": ("boolean", "Passed its startup probe."),
        "state": ("ContainerState", "waiting, running or terminated, with details."),
        "user": ("ContainerUser", "User of the container status."),
        "volumeMounts": ("[]VolumeMountStatus,omitempty", "Volume mounts of the container status."),
    }),
    "ContainerUser": ("Container user.", {
        "linux": ("LinuxContainerUser", "Linux of the container user."),
    }),
    "DaemonEndpoint": ("Daemon endpoint.", {
        "Port": ("int32", "Port of the daemon endpoint."),
    }),
    "DaemonSetCondition": ("Daemon set condition.", {
        "lastTransitionTime": ("Time", "Last transition time of the daemon set condition."),
        "message": ("string,omitempty", "Message of the daemon set condition."),
        "reason": ("string,omitempty", "Reason of the daemon set condition."),
        "status": ("string", "Status of the daemon set condition."),
        "type": ("string", "Type of the daemon set condition."),
    }),
    "DaemonSetSpec": ("The desired state of a DaemonSet.", {
        "minReadySeconds": ("int32,omitempty", "Seconds a new pod must be ready to count as available."),
        "revisionHistoryLimit": ("int32", "Old revisions kept (10)."),
        "selector": ("LabelSelector", "Selects the pods of this daemon set."),
        "template": ("PodTemplateSpec", "The pod run on every eligible node."),
        "updateStrategy": ("DaemonSetUpdateStrategy", "RollingUpdate or OnDelete."),
    }),
    "DaemonSetStatus": ("Daemon set status.", {
        "collisionCount": ("int32", "Collision count of the daemon set status."),
        "conditions": ("[]DaemonSetCondition,omitempty", "Conditions of the daemon set status."),
        "currentNumberScheduled": ("int32", "Current number scheduled of the daemon set status."),
        "desiredNumberScheduled": ("int32", "Desired number scheduled of the daemon set status."),
        "numberAvailable": ("int32,omitempty", "Number available of the daemon set status."),
        "numberMisscheduled": ("int32", "Number misscheduled of the daemon set status."),
        "numberReady": ("int32", "Number ready of the daemon set status."),
        "numberUnavailable": ("int32,omitempty", "Number unavailable of the daemon set status."),
        "observedGeneration": ("int64,omitempty", "Observed generation of the daemon set status."),
        "updatedNumberScheduled": ("int32,omitempty", "Updated number scheduled of the daemon set status."),
    }),
    "DaemonSetUpdateStrategy": ("How a DaemonSet replaces its pods.", {
        "rollingUpdate": ("RollingUpdateDaemonSet", "Parameters of a rolling update."),
        "type": ("string,omitempty", "RollingUpdate (default) or OnDelete."),
    }),
    "DeleteOptions": ("Options of a DELETE.", {
        "kind": ("string", "DeleteOptions."),
        "apiVersion": ("string", "v1 or meta.k8s.io/v1."),
        "gracePeriodSeconds": ("int64", "Seconds before the object is deleted (pods)."),
        "preconditions": ("Preconditions", "Must hold for the deletion to happen."),
        "orphanDependents": ("boolean", "Deprecated: orphan the dependents."),
        "propagationPolicy": ("string", "Orphan, Background or Foreground."),
        "dryRun": ("[]string", "All: check, do not delete."),
        "ignoreStoreReadErrorWithClusterBreakingPotential": ("boolean", "Delete a corrupt object."),
    }),
    "DeploymentCondition": ("Deployment condition.", {
        "lastTransitionTime": ("Time", "Last change of status."),
        "lastUpdateTime": ("Time", "Last update (workloads)."),
        "message": ("string,omitempty", "Human-readable detail."),
        "reason": ("string,omitempty", "CamelCase reason."),
        "status": ("string", "True, False or Unknown."),
        "type": ("string", "Type of the condition."),
    }),
    "DeploymentSpec": ("The desired state of a Deployment.", {
        "minReadySeconds": ("int32,omitempty", "Seconds a new pod must be ready to count as available."),
        "paused": ("boolean,omitempty", "Pause rollouts."),
        "progressDeadlineSeconds": ("int32", "Seconds before a stalled rollout is reported (600)."),
        "replicas": ("int32", "Number of desired pods (1)."),
        "revisionHistoryLimit": ("int32", "Old ReplicaSets kept for rollback (10)."),
        "selector": ("LabelSelector", "Selects the pods of this deployment; must match the template's labels."),
        "strategy": ("DeploymentStrategy", "RollingUpdate (maxUnavailable, maxSurge) or Recreate."),
        "template": ("PodTemplateSpec", "The pods to create."),
    }),
    "DeploymentStatus": ("The observed state of a Deployment.", {
        "availableReplicas": ("int32,omitempty", "Available pods."),
        "collisionCount": ("int32", "Hash collisions of the template."),
        "conditions": ("[]DeploymentCondition,omitempty", "Available, Progressing, ReplicaFailure."),
        "observedGeneration": ("int64,omitempty", "The generation last acted on."),
        "readyReplicas": ("int32,omitempty", "Ready pods."),
        "replicas": ("int32,omitempty", "Pods targeted by this deployment."),
        "unavailableReplicas": ("int32,omitempty", "Pods still needed to reach 100% availability."),
        "updatedReplicas": ("int32,omitempty", "Pods with the current template."),
    }),
    "DeploymentStrategy": ("How a Deployment replaces old pods by new ones.", {
        "rollingUpdate": ("RollingUpdateDeployment", "Parameters of a rolling update."),
        "type": ("string,omitempty", "Recreate or RollingUpdate (default)."),
    }),
    "DownwardAPIProjection": ("Downward API projection.", {
        "items": ("[]DownwardAPIVolumeFile,omitempty", "Items of the downward API projection."),
    }),
    "DownwardAPIVolumeFile": ("Downward API volume file.", {
        "fieldRef": ("ObjectFieldSelector", "Field ref of the downward API volume file."),
        "mode": ("int32", "Mode of the downward API volume file."),
        "path": ("string", "Path of the downward API volume file."),
        "resourceFieldRef": ("ResourceFieldSelector", "Resource field ref of the downward API volume file."),
    }),
    "DownwardAPIVolumeSource": ("Downward API volume source.", {
        "defaultMode": ("int32", "Default mode of the downward API volume source."),
        "items": ("[]DownwardAPIVolumeFile,omitempty", "Items of the downward API volume source."),
    }),
    "EmptyDirVolumeSource": ("A temporary directory sharing the pod's lifetime.", {
        "medium": ("string,omitempty", "\"\" (node disk) or Memory."),
        "sizeLimit": ("Quantity", "Maximum size."),
    }),
    "EndpointAddress": ("Endpoint address.", {
        "hostname": ("string,omitempty", "Hostname of the endpoint address."),
        "ip": ("string", "Ip of the endpoint address."),
        "nodeName": ("string", "Node name of the endpoint address."),
        "targetRef": ("ObjectReference", "Target ref of the endpoint address."),
    }),
    "EndpointPort": ("Endpoint port.", {
        "appProtocol": ("string", "App protocol of the endpoint port."),
        "name": ("string,omitempty", "Name of the endpoint port."),
        "port": ("int32", "Port of the endpoint port."),
        "protocol": ("string,omitempty", "Protocol of the endpoint port."),
    }),
    "EndpointSubset": ("Endpoint subset.", {
        "addresses": ("[]EndpointAddress,omitempty", "Addresses of the endpoint subset."),
        "notReadyAddresses": ("[]EndpointAddress,omitempty", "Not ready addresses of the endpoint subset."),
        "ports": ("[]EndpointPort,omitempty", "Ports of the endpoint subset."),
    }),
    "EnvFromSource": ("Env from source.", {
        "configMapRef": ("ConfigMapEnvSource", "Config map ref of the env from source."),
        "prefix": ("string", "Prefix of the env from source."),
        "secretRef": ("SecretEnvSource", "Secret ref of the env from source."),
    }),
    "EnvVar": ("An environment variable of a container.", {
        "name": ("string", "Name of the variable."),
        "value": ("string,omitempty", "Value of the variable."),
        "valueFrom": ("EnvVarSource", "Source of the value (field, resource, ConfigMap or Secret key)."),
    }),
    "EnvVarSource": ("Env var source.", {
        "configMapKeyRef": ("ConfigMapKeySelector", "Config map key ref of the env var source."),
        "fieldRef": ("ObjectFieldSelector", "Field ref of the env var source."),
        "resourceFieldRef": ("ResourceFieldSelector", "Resource field ref of the env var source."),
        "secretKeyRef": ("SecretKeySelector", "Secret key ref of the env var source."),
    }),
    "EphemeralContainer": ("Ephemeral container.", {
        "args": ("[]string,omitempty", "Args of the ephemeral container."),
        "command": ("[]string,omitempty", "Command of the ephemeral container."),
        "env": ("[]EnvVar,omitempty", "Env of the ephemeral container."),
        "envFrom": ("[]EnvFromSource,omitempty", "Env from of the ephemeral container."),
        "image": ("string,omitempty", "Image of the ephemeral container."),
        "imagePullPolicy": ("string,omitempty", "Image pull policy of the ephemeral container."),
        "lifecycle": ("Lifecycle", "Lifecycle of the ephemeral container."),
        "livenessProbe": ("Probe", "Liveness probe of the ephemeral container."),
        "name": ("string", "Name of the ephemeral container."),
        "ports": ("[]ContainerPort,omitempty", "Ports of the ephemeral container."),
        "readinessProbe": ("Probe", "Readiness probe of the ephemeral container."),
        "resizePolicy": ("[]ContainerResizePolicy,omitempty", "Resize policy of the ephemeral container."),
        "resources": ("ResourceRequirements", "Resources of the ephemeral container."),
        "restartPolicy": ("string", "Restart policy of the ephemeral container."),
        "securityContext": ("SecurityContext", "Security context of the ephemeral container."),
        "startupProbe": ("Probe", "Startup probe of the ephemeral container."),
        "stdin": ("boolean,omitempty", "Stdin of the ephemeral container."),
        "stdinOnce": ("boolean,omitempty", "Stdin once of the ephemeral container."),
        "targetContainerName": ("string,omitempty", "Target container name of the ephemeral container."),
        "terminationMessagePath": ("string,omitempty", "Termination message path of the ephemeral container."),
        "terminationMessagePolicy": ("string,omitempty", "Termination message policy of the ephemeral container."),
        "tty": ("boolean,omitempty", "Tty of the ephemeral container."),
        "volumeDevices": ("[]VolumeDevice,omitempty", "Volume devices of the ephemeral container."),
        "volumeMounts": ("[]VolumeMount,omitempty", "Volume mounts of the ephemeral container."),
        "workingDir": ("string,omitempty", "Working dir of the ephemeral container."),
    }),
    "EphemeralVolumeSource": ("Ephemeral volume source.", {
        "volumeClaimTemplate": ("PersistentVolumeClaimTemplate", "Volume claim template of the ephemeral volume source."),
    }),
    "EventSeries": ("Event series.", {
        "count": ("int32", "Count of the event series."),
        "lastObservedTime": ("MicroTime", "Last observed time of the event series."),
    }),
    "EventSource": ("Event source.", {
        "component": ("string", "Component of the event source."),
        "host": ("string", "Host of the event source."),
    }),
    "ExecAction": ("A command run in the container.", {
        "command": ("[]string,omitempty", "The command and its arguments."),
    }),
    "FCVolumeSource": ("FC volume source.", {
        "fsType": ("string", "Fs type of the FC volume source."),
        "lun": ("int32", "Lun of the FC volume source."),
        "readOnly": ("boolean", "Read only of the FC volume source."),
        "targetWWNs": ("[]string,omitempty", "Target WW ns of the FC volume source."),
        "wwids": ("[]string,omitempty", "Wwids of the FC volume source."),
    }),
    "FlexVolumeSource": ("Flex volume source.", {
        "driver": ("string", "Driver of the flex volume source."),
        "fsType": ("string", "Fs type of the flex volume source."),
        "options": ("map[string],omitempty", "Options of the flex volume source."),
        "readOnly": ("boolean", "Read only of the flex volume source."),
        "secretRef": ("LocalObjectReference", "Secret ref of the flex volume source."),
    }),
    "FlockerVolumeSource": ("Flocker volume source.", {
        "datasetName": ("string", "Dataset name of the flocker volume source."),
        "datasetUUID": ("string", "Dataset UUID of the flocker volume source."),
    }),
    "GCEPersistentDiskVolumeSource": ("GCE persistent disk volume source.", {
        "fsType": ("string", "Fs type of the GCE persistent disk volume source."),
        "partition": ("int32", "Partition of the GCE persistent disk volume source."),
        "pdName": ("string", "Pd name of the GCE persistent disk volume source."),
        "readOnly": ("boolean", "Read only of the GCE persistent disk volume source."),
    }),
    "GRPCAction": ("A gRPC health check.", {
        "port": ("int32", "Port number."),
        "service": ("string", "Service name for the health check."),
    }),
    "GitRepoVolumeSource": ("Git repo volume source.", {
        "directory": ("string", "Directory of the git repo volume source."),
        "repository": ("string", "Repository of the git repo volume source."),
        "revision": ("string", "Revision of the git repo volume source."),
    }),
    "GlusterfsVolumeSource": ("Glusterfs volume source.", {
        "endpoints": ("string", "Endpoints of the glusterfs volume source."),
        "path": ("string", "Path of the glusterfs volume source."),
        "readOnly": ("boolean", "Read only of the glusterfs volume source."),
    }),
    "HTTPGetAction": ("An HTTP GET request.", {
        "host": ("string,omitempty", "Host (the pod IP by default)."),
        "httpHeaders": ("[]HTTPHeader,omitempty", "Extra request headers."),
        "path": ("string,omitempty", "Path to request."),
        "port": ("IntOrString", "Port number or name."),
        "scheme": ("string,omitempty", "HTTP or HTTPS."),
    }),
    "HTTPHeader": ("HTTP header.", {
        "name": ("string", "Name of the HTTP header."),
        "value": ("string", "Value of the HTTP header."),
    }),
    "HostAlias": ("Host alias.", {
        "hostnames": ("[]string,omitempty", "Hostnames of the host alias."),
        "ip": ("string", "Ip of the host alias."),
    }),
    "HostIP": ("Host IP.", {
        "ip": ("string", "Ip of the host IP."),
    }),
    "HostPathVolumeSource": ("Host path volume source.", {
        "path": ("string", "Path of the host path volume source."),
        "type": ("string", "Type of the host path volume source."),
    }),
    "ISCSIVolumeSource": ("ISCSI volume source.", {
        "chapAuthDiscovery": ("boolean", "Chap auth discovery of the ISCSI volume source."),
        "chapAuthSession": ("boolean", "Chap auth session of the ISCSI volume source."),
        "fsType": ("string", "Fs type of the ISCSI volume source."),
        "initiatorName": ("string", "Initiator name of the ISCSI volume source."),
        "iqn": ("string", "Iqn of the ISCSI volume source."),
        "iscsiInterface": ("string", "Iscsi interface of the ISCSI volume source."),
        "lun": ("int32", "Lun of the ISCSI volume source."),
        "portals": ("[]string,omitempty", "Portals of the ISCSI volume source."),
        "readOnly": ("boolean", "Read only of the ISCSI volume source."),
        "secretRef": ("LocalObjectReference", "Secret ref of the ISCSI volume source."),
        "targetPortal": ("string", "Target portal of the ISCSI volume source."),
    }),
    "ImageVolumeSource": ("Image volume source.", {
        "pullPolicy": ("string", "Pull policy of the image volume source."),
        "reference": ("string", "Reference of the image volume source."),
    }),
    "KeyToPath": ("Key to path.", {
        "key": ("string", "Key of the key to path."),
        "mode": ("int32", "Mode of the key to path."),
        "path": ("string", "Path of the key to path."),
    }),
    "LabelSelector": ("A label query over a set of objects.", {
        "matchExpressions": ("[]LabelSelectorRequirement,omitempty", "Set-based requirements (In, NotIn, Exists, DoesNotExist)."),
        "matchLabels": ("map[string],omitempty", "Labels that must all match (key=value)."),
    }),
    "LabelSelectorRequirement": ("A set-based label requirement.", {
        "key": ("string", "Label key."),
        "operator": ("string", "In, NotIn, Exists or DoesNotExist."),
        "values": ("[]string,omitempty", "Values for In and NotIn."),
    }),
    "LeaseSpec": ("The holder of a lease and its timing.", {
        "acquireTime": ("MicroTime", "When the current holder acquired it."),
        "holderIdentity": ("string", "Current holder."),
        "leaseDurationSeconds": ("int32", "Seconds candidates wait before taking the lease over."),
        "leaseTransitions": ("int32", "Number of holder changes."),
        "preferredHolder": ("string", "Holder the lease should move to."),
        "renewTime": ("MicroTime", "When the holder last renewed it."),
        "strategy": ("string", "Coordinated leader election strategy."),
    }),
    "Lifecycle": ("Actions on container start and stop.", {
        "postStart": ("LifecycleHandler", "Run right after the container is created."),
        "preStop": ("LifecycleHandler", "Run before the container is stopped."),
    }),
    "LifecycleHandler": ("One lifecycle action.", {
        "exec": ("ExecAction", "Run a command."),
        "httpGet": ("HTTPGetAction", "An HTTP GET."),
        "sleep": ("SleepAction", "Sleep."),
        "tcpSocket": ("TCPSocketAction", "Deprecated."),
    }),
    "LinuxContainerUser": ("Linux container user.", {
        "gid": ("int64", "Gid of the linux container user."),
        "supplementalGroups": ("[]int64,omitempty", "Supplemental groups of the linux container user."),
        "uid": ("int64", "Uid of the linux container user."),
    }),
    "LoadBalancerIngress": ("Load balancer ingress.", {
        "hostname": ("string", "Hostname of the load balancer ingress."),
        "ip": ("string", "Ip of the load balancer ingress."),
        "ipMode": ("string", "Ip mode of the load balancer ingress."),
        "ports": ("[]PortStatus,omitempty", "Ports of the load balancer ingress."),
    }),
    "LoadBalancerStatus": ("Load balancer status.", {
        "ingress": ("[]LoadBalancerIngress,omitempty", "Ingress of the load balancer status."),
    }),
    "LocalObjectReference": ("A reference to an object in the same namespace.", {
        "name": ("string,omitempty", "Name of the referent."),
    }),
    "ManagedFieldsEntry": ("The fields one manager owns, and how it set them.", {
        "apiVersion": ("string", "Version of the fields' schema."),
        "fieldsType": ("string", "FieldsV1."),
        "fieldsV1": ("object:v1.FieldsV1", "The owned fields as a trie."),
        "manager": ("string", "Name of the manager."),
        "operation": ("string", "Apply or Update."),
        "subresource": ("string", "Subresource the manager wrote through (status, scale...)."),
        "time": ("Time", "Last change by this entry."),
    }),
    "ModifyVolumeStatus": ("Modify volume status.", {
        "status": ("string", "Status of the modify volume status."),
        "targetVolumeAttributesClassName": ("string", "Target volume attributes class name of the modify volume status."),
    }),
    "NFSVolumeSource": ("NFS volume source.", {
        "path": ("string", "Path of the NFS volume source."),
        "readOnly": ("boolean", "Read only of the NFS volume source."),
        "server": ("string", "Server of the NFS volume source."),
    }),
    "NamespaceCondition": ("Namespace condition.", {
        "lastTransitionTime": ("Time", "Last change of status."),
        "message": ("string,omitempty", "Human-readable detail."),
        "reason": ("string,omitempty", "CamelCase reason."),
        "status": ("string", "True, False or Unknown."),
        "type": ("string", "Type of the condition."),
    }),
    "NamespaceSpec": ("The finalizers of a namespace.", {
        "finalizers": ("[]string,omitempty", "Finalizers to clear before the namespace is removed."),
    }),
    "NamespaceStatus": ("The observed state of a namespace.", {
        "conditions": ("[]NamespaceCondition,omitempty", "Why a namespace cannot be removed yet."),
        "phase": ("string,omitempty", "Active or Terminating."),
    }),
    "NodeAddress": ("Node address.", {
        "address": ("string", "Address of the node address."),
        "type": ("string", "Type of the node address."),
    }),
    "NodeAffinity": ("Node affinity: hard and soft node selector terms.", {
        "preferredDuringSchedulingIgnoredDuringExecution": ("[]PreferredSchedulingTerm,omitempty", "Weighted preferences."),
        "requiredDuringSchedulingIgnoredDuringExecution": ("NodeSelector", "Terms a node must match."),
    }),
    "NodeCondition": ("Node condition.", {
        "lastHeartbeatTime": ("Time", "Last heartbeat (nodes)."),
        "lastTransitionTime": ("Time", "Last change of status."),
        "message": ("string,omitempty", "Human-readable detail."),
        "reason": ("string,omitempty", "CamelCase reason."),
        "status": ("string", "True, False or Unknown."),
        "type": ("string", "Type of the condition."),
    }),
    "NodeConfigSource": ("Node config source.", {
        "configMap": ("ConfigMapNodeConfigSource", "Config map of the node config source."),
    }),
    "NodeConfigStatus": ("Node config status.", {
        "active": ("NodeConfigSource", "Active of the node config status."),
        "assigned": ("NodeConfigSource", "Assigned of the node config status."),
        "error": ("string", "Error of the node config status."),
        "lastKnownGood": ("NodeConfigSource", "Last known good of the node config status."),
    }),
    "NodeDaemonEndpoints": ("Node daemon endpoints.", {
        "kubeletEndpoint": ("DaemonEndpoint", "Kubelet endpoint of the node daemon endpoints."),
    }),
    "NodeFeatures": ("Node features.", {
        "supplementalGroupsPolicy": ("boolean", "Supplemental groups policy of the node features."),
    }),
    "NodeRuntimeHandler": ("Node runtime handler.", {
        "features": ("NodeRuntimeHandlerFeatures", "Features of the node runtime handler."),
        "name": ("string", "Name of the node runtime handler."),
    }),
    "NodeRuntimeHandlerFeatures": ("Node runtime handler features.", {
        "recursiveReadOnlyMounts": ("boolean", "Recursive read only mounts of the node runtime handler features."),
        "userNamespaces": ("boolean", "User namespaces of the node runtime handler features."),
    }),
    "NodeSelector": ("ORed node selector terms.", {
        "nodeSelectorTerms": ("[]NodeSelectorTerm", "At least one term must match."),
    }),
    "NodeSelectorRequirement": ("A requirement on a node label or field.", {
        "key": ("string", "Label key or field."),
        "operator": ("string", "In, NotIn, Exists, DoesNotExist, Gt, Lt."),
        "values": ("[]string,omitempty", "Values compared with the operator."),
    }),
    "NodeSelectorTerm": ("ANDed requirements on a node's labels and fields.", {
        "matchExpressions": ("[]NodeSelectorRequirement,omitempty", "Requirements on node labels."),
        "matchFields": ("[]NodeSelectorRequirement,omitempty", "Requirements on node fields (metadata.name)."),
    }),
    "NodeSpec": ("The configuration of a node.", {
        "configSource": ("NodeConfigSource", "Deprecated."),
        "externalID": ("string,omitempty", "Deprecated."),
        "podCIDR": ("string,omitempty", "Pod IP range of the node."),
        "podCIDRs": ("[]string,omitempty", "Pod IP ranges of the node."),
        "providerID": ("string,omitempty", "Cloud provider id."),
        "taints": ("[]Taint,omitempty", "Taints repelling pods that do not tolerate them."),
        "unschedulable": ("boolean,omitempty", "Keep new pods off the node (cordon)."),
    }),
    "NodeStatus": ("The observed state of a node, reported by its kubelet.", {
        "addresses": ("[]NodeAddress,omitempty", "InternalIP, Hostname..."),
        "allocatable": ("map[Quantity],omitempty", "Resources available to pods."),
        "capacity": ("map[Quantity],omitempty", "Total resources of the node."),
        "conditions": ("[]NodeCondition,omitempty", "Ready, MemoryPressure, DiskPressure, PIDPressure..."),
        "config": ("NodeConfigStatus", "Config of the node status."),
        "daemonEndpoints": ("NodeDaemonEndpoints", "Daemon endpoints of the node status."),
        "features": ("NodeFeatures", "Features of the node status."),
        "images": ("[]ContainerImage,omitempty", "Images of the node status."),
        "nodeInfo": ("NodeSystemInfo", "Versions, OS, architecture."),
        "phase": ("string", "Deprecated."),
        "runtimeHandlers": ("[]NodeRuntimeHandler,omitempty", "Runtime handlers of the node status."),
        "volumesAttached": ("[]AttachedVolume,omitempty", "Volumes attached of the node status."),
        "volumesInUse": ("[]string,omitempty", "Volumes in use of the node status."),
    }),
    "NodeSystemInfo": ("Node system info.", {
        "architecture": ("string", "Architecture of the node system info."),
        "bootID": ("string", "Boot ID of the node system info."),
        "containerRuntimeVersion": ("string", "Container runtime version of the node system info."),
        "kernelVersion": ("string", "Kernel version of the node system info."),
        "kubeProxyVersion": ("string", "Kube proxy version of the node system info."),
        "kubeletVersion": ("string", "Kubelet version of the node system info."),
        "machineID": ("string", "Machine ID of the node system info."),
        "operatingSystem": ("string", "Operating system of the node system info."),
        "osImage": ("string", "Os image of the node system info."),
        "systemUUID": ("string", "System UUID of the node system info."),
    }),
    "ObjectFieldSelector": ("Object field selector.", {
        "apiVersion": ("string", "Api version of the object field selector."),
        "fieldPath": ("string", "Field path of the object field selector."),
    }),
    "ObjectMeta": ("Standard object metadata: name, namespace, labels, ownership and bookkeeping the server keeps.", {
        "annotations": ("map[string],omitempty", "Key/value pairs of non-identifying metadata for tools and people."),
        "creationTimestamp": ("Time", "When the object was created, set by the server."),
        "deletionGracePeriodSeconds": ("int64", "Seconds the object has to terminate gracefully."),
        "deletionTimestamp": ("Time", "When the object will be deleted; set when a graceful deletion is requested."),
        "finalizers": ("[]string,omitempty", "Must be empty before the object is deleted from storage."),
        "generateName": ("string,omitempty", "Prefix the server uses to generate a unique name when name is not set."),
        "generation": ("int64,omitempty", "Sequence number of changes to the desired state (spec)."),
        "labels": ("map[string],omitempty", "Key/value pairs to organize and select objects (label selectors)."),
        # omitempty in Go, but decoded here before the field manager reads it, where an empty
        # list (reset the entries) and an absent one (keep them) differ: not tagged
        "managedFields": ("[]ManagedFieldsEntry", "Which manager owns which fields (server-side apply)."),
        "name": ("string,omitempty", "Name of the object, unique within its namespace; required when creating."),
        "namespace": ("string,omitempty", "Namespace of the object; empty for cluster-scoped objects."),
        "ownerReferences": ("[]OwnerReference,omitempty", "Objects this object depends on; the garbage collector deletes it when they are gone."),
        "resourceVersion": ("string,omitempty", "Opaque version of this object, changing on every write; used for optimistic concurrency and watches."),
        "selfLink": ("string,omitempty", "Deprecated; not set by the server."),
        "uid": ("string,omitempty", "Unique id of this object, set by the server; never reused."),
    }),
    "ObjectReference": ("A reference to an object (kind, namespace, name, uid).", {
        "apiVersion": ("string,omitempty", "API version of the referent."),
        "fieldPath": ("string,omitempty", "A field within the referent."),
        "kind": ("string,omitempty", "Kind of the referent."),
        "name": ("string,omitempty", "Name of the referent."),
        "namespace": ("string,omitempty", "Namespace of the referent."),
        "resourceVersion": ("string,omitempty", "Resource version of the referent."),
        "uid": ("string,omitempty", "UID of the referent."),
    }),
    "OwnerReference": ("A reference to an owning object.", {
        "apiVersion": ("string", "API version of the owner."),
        "blockOwnerDeletion": ("boolean", "Foreground deletion of the owner waits for this object."),
        "controller": ("boolean", "True for the managing controller (at most one)."),
        "kind": ("string", "Kind of the owner."),
        "name": ("string", "Name of the owner."),
        "uid": ("string", "UID of the owner."),
    }),
    "PersistentVolumeClaim": ("Persistent volume claim.", {
        "apiVersion": ("string", "Api version of the persistent volume claim."),
        "kind": ("string", "Kind of the persistent volume claim."),
        "metadata": ("ObjectMeta", "Metadata of the persistent volume claim."),
        "spec": ("PersistentVolumeClaimSpec", "Spec of the persistent volume claim."),
        "status": ("PersistentVolumeClaimStatus", "Status of the persistent volume claim."),
    }),
    "PersistentVolumeClaimCondition": ("Persistent volume claim condition.", {
        "lastProbeTime": ("Time", "Last probe time of the persistent volume claim condition."),
        "lastTransitionTime": ("Time", "Last transition time of the persistent volume claim condition."),
        "message": ("string", "Message of the persistent volume claim condition."),
        "reason": ("string", "Reason of the persistent volume claim condition."),
        "status": ("string", "Status of the persistent volume claim condition."),
        "type": ("string", "Type of the persistent volume claim condition."),
    }),
    "PersistentVolumeClaimSpec": ("Persistent volume claim spec.", {
        "accessModes": ("[]string,omitempty", "Access modes of the persistent volume claim spec."),
        "dataSource": ("TypedLocalObjectReference", "Data source of the persistent volume claim spec."),
        "dataSourceRef": ("TypedObjectReference", "Data source ref of the persistent volume claim spec."),
        "resources": ("VolumeResourceRequirements", "Resources of the persistent volume claim spec."),
        "selector": ("LabelSelector", "Selector of the persistent volume claim spec."),
        "storageClassName": ("string", "Storage class name of the persistent volume claim spec."),
        "volumeAttributesClassName": ("string", "Volume attributes class name of the persistent volume claim spec."),
        "volumeMode": ("string", "Volume mode of the persistent volume claim spec."),
        "volumeName": ("string", "Volume name of the persistent volume claim spec."),
    }),
    "PersistentVolumeClaimStatus": ("Persistent volume claim status.", {
        "accessModes": ("[]string,omitempty", "Access modes of the persistent volume claim status."),
        "allocatedResourceStatuses": ("map[string],omitempty", "Allocated resource statuses of the persistent volume claim status."),
        "allocatedResources": ("map[Quantity],omitempty", "Allocated resources of the persistent volume claim status."),
        "capacity": ("map[Quantity],omitempty", "Capacity of the persistent volume claim status."),
        "conditions": ("[]PersistentVolumeClaimCondition,omitempty", "Conditions of the persistent volume claim status."),
        "currentVolumeAttributesClassName": ("string", "Current volume attributes class name of the persistent volume claim status."),
        "modifyVolumeStatus": ("ModifyVolumeStatus", "Modify volume status of the persistent volume claim status."),
        "phase": ("string", "Phase of the persistent volume claim status."),
    }),
    "PersistentVolumeClaimTemplate": ("Persistent volume claim template.", {
        "metadata": ("ObjectMeta", "Metadata of the persistent volume claim template."),
        "spec": ("PersistentVolumeClaimSpec", "Spec of the persistent volume claim template."),
    }),
    "PersistentVolumeClaimVolumeSource": ("Persistent volume claim volume source.", {
        "claimName": ("string", "Claim name of the persistent volume claim volume source."),
        "readOnly": ("boolean,omitempty", "Read only of the persistent volume claim volume source."),
    }),
    "PhotonPersistentDiskVolumeSource": ("Photon persistent disk volume source.", {
        "fsType": ("string", "Fs type of the photon persistent disk volume source."),
        "pdID": ("string", "Pd ID of the photon persistent disk volume source."),
    }),
    "PodAffinity": ("Hard and soft inter-pod (anti-)affinity terms.", {
        "preferredDuringSchedulingIgnoredDuringExecution": ("[]WeightedPodAffinityTerm,omitempty", "Weighted preferences."),
        "requiredDuringSchedulingIgnoredDuringExecution": ("[]PodAffinityTerm,omitempty", "Terms that must hold."),
    }),
    "PodAffinityTerm": ("Pods (by label selector and namespaces) in the same topology domain.", {
        "labelSelector": ("LabelSelector", "Pods this term is about."),
        "matchLabelKeys": ("[]string,omitempty", "Label keys of the incoming pod added to the selector."),
        "mismatchLabelKeys": ("[]string,omitempty", "Label keys whose values must differ."),
        "namespaceSelector": ("LabelSelector", "Namespaces of those pods."),
        "namespaces": ("[]string,omitempty", "Namespaces of those pods."),
        "topologyKey": ("string", "Node label defining the topology domain."),
    }),
    "PodAntiAffinity": ("Pod anti affinity.", {
        "preferredDuringSchedulingIgnoredDuringExecution": ("[]WeightedPodAffinityTerm,omitempty", "Weighted preferences."),
        "requiredDuringSchedulingIgnoredDuringExecution": ("[]PodAffinityTerm,omitempty", "Terms that must hold."),
    }),
    "PodCondition": ("Pod condition.", {
        "lastProbeTime": ("Time", "Last probe (pods)."),
        "lastTransitionTime": ("Time", "Last change of status."),
        "message": ("string,omitempty", "Human-readable detail."),
        "reason": ("string,omitempty", "CamelCase reason."),
        "status": ("string", "True, False or Unknown."),
        "type": ("string", "Type of the condition."),
    }),
    "PodDNSConfig": ("Pod DNS config.", {
        "nameservers": ("[]string,omitempty", "Nameservers of the pod DNS config."),
        "options": ("[]PodDNSConfigOption,omitempty", "Options of the pod DNS config."),
        "searches": ("[]string,omitempty", "Searches of the pod DNS config."),
    }),
    "PodDNSConfigOption": ("Pod DNS config option.", {
        "name": ("string", "Name of the pod DNS config option."),
        "value": ("string", "Value of the pod DNS config option."),
    }),
    "PodIP": ("Pod IP.", {
        "ip": ("string", "Ip of the pod IP."),
    }),
    "PodOS": ("Pod OS.", {
        "name": ("string", "Name of the pod OS."),
    }),
    "PodReadinessGate": ("Pod readiness gate.", {
        "conditionType": ("string", "Condition type of the pod readiness gate."),
    }),
    "PodResourceClaim": ("Pod resource claim.", {
        "name": ("string", "Name of the pod resource claim."),
        "resourceClaimName": ("string", "Resource claim name of the pod resource claim."),
        "resourceClaimTemplateName": ("string", "Resource claim template name of the pod resource claim."),
    }),
    "PodResourceClaimStatus": ("Pod resource claim status.", {
        "name": ("string", "Name of the pod resource claim status."),
        "resourceClaimName": ("string", "Resource claim name of the pod resource claim status."),
    }),
    "PodSchedulingGate": ("Pod scheduling gate.", {
        "name": ("string", "Name of the pod scheduling gate."),
    }),
    "PodSecurityContext": ("Security attributes of all containers of a pod.", {
        "appArmorProfile": ("AppArmorProfile", "AppArmor profile."),
        "fsGroup": ("int64", "GID owning the volumes."),
        "fsGroupChangePolicy": ("string", "OnRootMismatch or Always."),
        "runAsGroup": ("int64", "GID the entrypoints run as."),
        "runAsNonRoot": ("boolean", "Refuse to run as root."),
        "runAsUser": ("int64", "UID the entrypoints run as."),
        "seLinuxChangePolicy": ("string", "How SELinux labels are applied to volumes."),
        "seLinuxOptions": ("SELinuxOptions", "SELinux context."),
        "seccompProfile": ("SeccompProfile", "Seccomp profile."),
        "supplementalGroups": ("[]int64,omitempty", "Extra GIDs of the first process."),
        "supplementalGroupsPolicy": ("string", "Merge or Strict."),
        "sysctls": ("[]Sysctl,omitempty", "Namespaced sysctls."),
        "windowsOptions": ("WindowsSecurityContextOptions", "Windows-specific settings."),
    }),
    "PodSpec": ("The desired state of a pod: its containers and how and where they run.", {
        "activeDeadlineSeconds": ("int64", "Seconds the pod may be active before the kubelet fails it."),
        "affinity": ("Affinity", "Node and pod (anti-)affinity scheduling constraints."),
        "automountServiceAccountToken": ("boolean", "Mount the service account token."),
        "containers": ("[]Container", "Containers of the pod; at least one. Cannot be updated."),
        "dnsConfig": ("PodDNSConfig", "DNS parameters added to those of dnsPolicy."),
        "dnsPolicy": ("string,omitempty", "DNS policy of the pod (ClusterFirst)."),
        "enableServiceLinks": ("boolean", "Inject service environment variables (true)."),
        "ephemeralContainers": ("[]EphemeralContainer,omitempty", "Debugging containers added to a running pod."),
        "hostAliases": ("[]HostAlias,omitempty", "Entries added to the pod's /etc/hosts."),
        "hostIPC": ("boolean,omitempty", "Use the node's IPC namespace."),
        "hostNetwork": ("boolean,omitempty", "Use the node's network namespace."),
        "hostPID": ("boolean,omitempty", "Use the node's PID namespace."),
        "hostUsers": ("boolean", "Use the node's user namespace."),
        "hostname": ("string,omitempty", "Hostname of the pod (the name if unset)."),
        "imagePullSecrets": ("[]LocalObjectReference,omitempty", "Secrets used to pull the images."),
        "initContainers": ("[]Container,omitempty", "Containers run to completion, in order, before the others start."),
        "nodeName": ("string,omitempty", "Node the pod is bound to; set by the scheduler through a Binding, or directly to skip scheduling."),
        "nodeSelector": ("map[string],omitempty", "Labels a node must have for the pod to be scheduled there."),
        "os": ("PodOS", "Operating system of the containers."),
        "overhead": ("map[Quantity],omitempty", "Resource overhead of the pod sandbox."),
        "preemptionPolicy": ("string", "PreemptLowerPriority (default) or Never."),
        "priority": ("int32", "Priority value, from priorityClassName."),
        "priorityClassName": ("string,omitempty", "Name of the PriorityClass of the pod."),
        "readinessGates": ("[]PodReadinessGate,omitempty", "Extra conditions for pod readiness."),
        "resourceClaims": ("[]PodResourceClaim,omitempty", "Dynamic resource claims of the pod."),
        "resources": ("ResourceRequirements", "Pod-level compute resources."),
        "restartPolicy": ("string,omitempty", "Always, OnFailure or Never: restart policy of the containers."),
        "runtimeClassName": ("string", "RuntimeClass used to run the pod."),
        "schedulerName": ("string,omitempty", "Scheduler that places the pod (default-scheduler)."),
        "schedulingGates": ("[]PodSchedulingGate,omitempty", "Gates that keep the pod from being scheduled."),
        "securityContext": ("PodSecurityContext", "Pod-level security attributes."),
        "serviceAccount": ("string,omitempty", "Deprecated alias of serviceAccountName."),
        "serviceAccountName": ("string,omitempty", "ServiceAccount the pod runs as."),
        "setHostnameAsFQDN": ("boolean", "Set the FQDN as the hostname."),
        "shareProcessNamespace": ("boolean", "One PID namespace for all containers of the pod."),
        "subdomain": ("string,omitempty", "Subdomain: the pod's FQDN is hostname.subdomain.namespace.svc."),
        "terminationGracePeriodSeconds": ("int64", "Seconds between the termination signal and the kill (30)."),
        "tolerations": ("[]Toleration,omitempty", "Taints of nodes this pod tolerates."),
        "topologySpreadConstraints": ("[]TopologySpreadConstraint,omitempty", "How pods spread across topology domains."),
        "volumes": ("[]Volume,omitempty", "Volumes containers of the pod can mount."),
    }),
    "PodStatus": ("The observed state of a pod, reported by the kubelet.", {
        "conditions": ("[]PodCondition,omitempty", "PodScheduled, Initialized, ContainersReady, Ready."),
        "containerStatuses": ("[]ContainerStatus,omitempty", "One entry per container."),
        "ephemeralContainerStatuses": ("[]ContainerStatus,omitempty", "Ephemeral container statuses of the pod status."),
        "hostIP": ("string,omitempty", "IP address of the node."),
        "hostIPs": ("[]HostIP,omitempty", "IP addresses of the node."),
        "initContainerStatuses": ("[]ContainerStatus,omitempty", "One entry per init container."),
        "message": ("string,omitempty", "Human-readable detail of the state."),
        "nominatedNodeName": ("string,omitempty", "Node where the pod may run after preemption."),
        "phase": ("string,omitempty", "Pending, Running, Succeeded, Failed or Unknown."),
        "podIP": ("string,omitempty", "IP address of the pod."),
        "podIPs": ("[]PodIP,omitempty", "IP addresses of the pod."),
        "qosClass": ("string,omitempty", "Guaranteed, Burstable or BestEffort."),
        "reason": ("string,omitempty", "Why the pod is in this state (e.g. Evicted)."),
        "resize": ("string,omitempty", "Resize of the pod status."),
        "resourceClaimStatuses": ("[]PodResourceClaimStatus,omitempty", "Resource claim statuses of the pod status."),
        "startTime": ("Time", "When the kubelet accepted the pod."),
    }),
    "PodTemplateSpec": ("The pods a controller creates: their metadata and spec.", {
        "metadata": ("ObjectMeta", "Metadata of the created pods (labels must match the selector)."),
        "spec": ("PodSpec", "Specification of the created pods."),
    }),
    "PortStatus": ("Port status.", {
        "error": ("string", "Error of the port status."),
        "port": ("int32", "Port of the port status."),
        "protocol": ("string", "Protocol of the port status."),
    }),
    "PortworxVolumeSource": ("Portworx volume source.", {
        "fsType": ("string", "Fs type of the portworx volume source."),
        "readOnly": ("boolean", "Read only of the portworx volume source."),
        "volumeID": ("string", "Volume ID of the portworx volume source."),
    }),
    "Preconditions": ("Conditions a delete must meet.", {
        "uid": ("string", "The object's UID must be this."),
        "resourceVersion": ("string", "The object's resourceVersion must be this."),
    }),
    "PreferredSchedulingTerm": ("A weighted node selector term.", {
        "preference": ("NodeSelectorTerm", "The term."),
        "weight": ("int32", "Weight 1-100."),
    }),
    "Probe": ("A health check of a container, and how often it runs.", {
        "exec": ("ExecAction", "Run a command in the container."),
        "failureThreshold": ("int32,omitempty", "Consecutive failures to count as failing (3)."),
        "grpc": ("GRPCAction", "A gRPC health check."),
        "httpGet": ("HTTPGetAction", "An HTTP GET against the container."),
        "initialDelaySeconds": ("int32,omitempty", "Seconds after the start before the first probe."),
        "periodSeconds": ("int32,omitempty", "Seconds between probes (10)."),
        "successThreshold": ("int32,omitempty", "Consecutive successes to count as passing (1)."),
        "tcpSocket": ("TCPSocketAction", "A TCP connection to the container."),
        "terminationGracePeriodSeconds": ("int64", "Grace period when a liveness probe fails."),
        "timeoutSeconds": ("int32,omitempty", "Seconds before the probe times out (1)."),
    }),
    "ProjectedVolumeSource": ("Projected volume source.", {
        "defaultMode": ("int32", "Default mode of the projected volume source."),
        "sources": ("[]VolumeProjection,omitempty", "Sources of the projected volume source."),
    }),
    "QuobyteVolumeSource": ("Quobyte volume source.", {
        "group": ("string", "Group of the quobyte volume source."),
        "readOnly": ("boolean", "Read only of the quobyte volume source."),
        "registry": ("string", "Registry of the quobyte volume source."),
        "tenant": ("string", "Tenant of the quobyte volume source."),
        "user": ("string", "User of the quobyte volume source."),
        "volume": ("string", "Volume of the quobyte volume source."),
    }),
    "RBDVolumeSource": ("RBD volume source.", {
        "fsType": ("string", "Fs type of the RBD volume source."),
        "image": ("string", "Image of the RBD volume source."),
        "keyring": ("string", "Keyring of the RBD volume source."),
        "monitors": ("[]string", "Monitors of the RBD volume source."),
        "pool": ("string", "Pool of the RBD volume source."),
        "readOnly": ("boolean", "Read only of the RBD volume source."),
        "secretRef": ("LocalObjectReference", "Secret ref of the RBD volume source."),
        "user": ("string", "User of the RBD volume source."),
    }),
    "ReplicaSetCondition": ("Replica set condition.", {
        "lastTransitionTime": ("Time", "Last change of status."),
        "message": ("string,omitempty", "Human-readable detail."),
        "reason": ("string,omitempty", "CamelCase reason."),
        "status": ("string", "True, False or Unknown."),
        "type": ("string", "Type of the condition."),
    }),
    "ReplicaSetSpec": ("The desired state of a ReplicaSet.", {
        "minReadySeconds": ("int32,omitempty", "Seconds a new pod must be ready to count as available."),
        "replicas": ("int32", "Number of desired pods (1)."),
        "selector": ("LabelSelector", "Selects the pods counted against replicas."),
        "template": ("PodTemplateSpec", "The pods to create when too few exist."),
    }),
    "ReplicaSetStatus": ("The observed state of a ReplicaSet.", {
        "availableReplicas": ("int32,omitempty", "Available pods."),
        "conditions": ("[]ReplicaSetCondition,omitempty", "ReplicaFailure."),
        "fullyLabeledReplicas": ("int32,omitempty", "Pods whose labels match the template's."),
        "observedGeneration": ("int64,omitempty", "The generation last acted on."),
        "readyReplicas": ("int32,omitempty", "Ready pods."),
        "replicas": ("int32", "Pods currently matching."),
    }),
    "ReplicationControllerCondition": ("Replication controller condition.", {
        "lastTransitionTime": ("Time", "Last transition time of the replication controller condition."),
        "message": ("string,omitempty", "Message of the replication controller condition."),
        "reason": ("string,omitempty", "Reason of the replication controller condition."),
        "status": ("string", "Status of the replication controller condition."),
        "type": ("string", "Type of the replication controller condition."),
    }),
    "ReplicationControllerSpec": ("The desired state of a ReplicationController.", {
        "minReadySeconds": ("int32,omitempty", "Seconds a new pod must be ready to count as available."),
        "replicas": ("int32", "Number of desired pods (1)."),
        "selector": ("map[string],omitempty", "Labels of the pods counted against replicas."),
        "template": ("PodTemplateSpec", "The pods to create when too few exist."),
    }),
    "ReplicationControllerStatus": ("Replication controller status.", {
        "availableReplicas": ("int32,omitempty", "Available replicas of the replication controller status."),
        "conditions": ("[]ReplicationControllerCondition,omitempty", "Conditions of the replication controller status."),
        "fullyLabeledReplicas": ("int32,omitempty", "Fully labeled replicas of the replication controller status."),
        "observedGeneration": ("int64,omitempty", "Observed generation of the replication controller status."),
        "readyReplicas": ("int32,omitempty", "Ready replicas of the replication controller status."),
        "replicas": ("int32", "Replicas of the replication controller status."),
    }),
    "ResourceClaim": ("Resource claim.", {
        "name": ("string", "Name of the resource claim."),
        "request": ("string", "Request of the resource claim."),
    }),
    "ResourceFieldSelector": ("Resource field selector.", {
        "containerName": ("string", "Container name of the resource field selector."),
        "divisor": ("Quantity", "Divisor of the resource field selector."),
        "resource": ("string", "Resource of the resource field selector."),
    }),
    "ResourceHealth": ("Resource health.", {
        "health": ("string", "Health of the resource health."),
        "resourceID": ("string", "Resource ID of the resource health."),
    }),
    "ResourceRequirements": ("Compute resource requests and limits.", {
        "claims": ("[]ResourceClaim,omitempty", "Dynamic resource claims used."),
        "limits": ("map[Quantity],omitempty", "Maximum resources allowed."),
        "requests": ("map[Quantity],omitempty", "Minimum resources required; what the scheduler reserves on a node."),
    }),
    "ResourceStatus": ("Resource status.", {
        "name": ("string", "Name of the resource status."),
        "resources": ("[]ResourceHealth,omitempty", "Resources of the resource status."),
    }),
    "RollingUpdateDaemonSet": ("Bounds of a DaemonSet rolling update.", {
        "maxSurge": ("IntOrString", "Nodes that may run an extra pod (0)."),
        "maxUnavailable": ("IntOrString", "Nodes whose pod may be unavailable (1)."),
    }),
    "RollingUpdateDeployment": ("Bounds of a rolling update.", {
        "maxSurge": ("IntOrString", "Pods that may be created above the desired number (25%)."),
        "maxUnavailable": ("IntOrString", "Pods that may be unavailable during the update (25%)."),
    }),
    "RollingUpdateStatefulSetStrategy": ("Bounds of a StatefulSet rolling update.", {
        "maxUnavailable": ("IntOrString", "Pods that may be unavailable (1)."),
        "partition": ("int32", "Ordinal at which updates stop."),
    }),
    "SELinuxOptions": ("SE linux options.", {
        "level": ("string", "Level of the SE linux options."),
        "role": ("string", "Role of the SE linux options."),
        "type": ("string", "Type of the SE linux options."),
        "user": ("string", "User of the SE linux options."),
    }),
    "ScaleIOVolumeSource": ("Scale IO volume source.", {
        "fsType": ("string", "Fs type of the scale IO volume source."),
        "gateway": ("string", "Gateway of the scale IO volume source."),
        "protectionDomain": ("string", "Protection domain of the scale IO volume source."),
        "readOnly": ("boolean", "Read only of the scale IO volume source."),
        "secretRef": ("LocalObjectReference", "Secret ref of the scale IO volume source."),
        "sslEnabled": ("boolean", "Ssl enabled of the scale IO volume source."),
        "storageMode": ("string", "Storage mode of the scale IO volume source."),
        "storagePool": ("string", "Storage pool of the scale IO volume source."),
        "system": ("string", "System of the scale IO volume source."),
        "volumeName": ("string", "Volume name of the scale IO volume source."),
    }),
    "ScaleSpec": ("The desired scale.", {
        "replicas": ("int32", "Desired number of replicas."),
    }),
    "ScaleStatus": ("The observed scale.", {
        "replicas": ("int32", "Actual number of replicas."),
        "selector": ("string", "Label selector of the pods."),
    }),
    "SeccompProfile": ("Seccomp profile.", {
        "localhostProfile": ("string", "Localhost profile of the seccomp profile."),
        "type": ("string", "Type of the seccomp profile."),
    }),
    "SecretEnvSource": ("Secret env source.", {
        "name": ("string", "Name of the secret env source."),
        "optional": ("boolean", "Optional of the secret env source."),
    }),
    "SecretKeySelector": ("Secret key selector.", {
        "key": ("string", "Key of the secret key selector."),
        "name": ("string", "Name of the secret key selector."),
        "optional": ("boolean", "Optional of the secret key selector."),
    }),
    "SecretProjection": ("Secret projection.", {
        "items": ("[]KeyToPath,omitempty", "Items of the secret projection."),
        "name": ("string", "Name of the secret projection."),
        "optional": ("boolean", "Optional of the secret projection."),
    }),
    "SecretVolumeSource": ("Secret volume source.", {
        "defaultMode": ("int32", "Default mode of the secret volume source."),
        "items": ("[]KeyToPath,omitempty", "Items of the secret volume source."),
        "optional": ("boolean", "Optional of the secret volume source."),
        "secretName": ("string,omitempty", "Secret name of the secret volume source."),
    }),
    "SecurityContext": ("Security attributes of a container.", {
        "allowPrivilegeEscalation": ("boolean", "Allow gaining more privileges than the parent."),
        "appArmorProfile": ("AppArmorProfile", "AppArmor profile."),
        "capabilities": ("Capabilities", "Capabilities added and dropped."),
        "privileged": ("boolean", "Run privileged."),
        "procMount": ("string", "Default or Unmasked."),
        "readOnlyRootFilesystem": ("boolean", "Read-only root filesystem."),
        "runAsGroup": ("int64", "GID the entrypoint runs as."),
        "runAsNonRoot": ("boolean", "Refuse to run as root."),
        "runAsUser": ("int64", "UID the entrypoint runs as."),
        "seLinuxOptions": ("SELinuxOptions", "SELinux context."),
        "seccompProfile": ("SeccompProfile", "Seccomp profile."),
        "windowsOptions": ("WindowsSecurityContextOptions", "Windows-specific settings."),
    }),
    "ServiceAccountTokenProjection": ("Service account token projection.", {
        "audience": ("string", "Audience of the service account token projection."),
        "expirationSeconds": ("int64", "Expiration seconds of the service account token projection."),
        "path": ("string", "Path of the service account token projection."),
    }),
    "ServicePort": ("A port of a Service.", {
        "appProtocol": ("string", "Application protocol of the port."),
        "name": ("string,omitempty", "Name of the port (required with several ports)."),
        "nodePort": ("int32,omitempty", "Port on every node for NodePort/LoadBalancer, allocated from the node port range."),
        "port": ("int32", "Port the service exposes."),
        "protocol": ("string,omitempty", "TCP, UDP or SCTP (TCP)."),
        "targetPort": ("IntOrString", "Number or name of the port on the pods (defaults to port)."),
    }),
    "ServiceSpec": ("The desired state of a Service.", {
        "allocateLoadBalancerNodePorts": ("boolean", "Allocate node ports for LoadBalancer services."),
        "clusterIP": ("string,omitempty", "Virtual IP, allocated from the service CIDR; None for a headless service."),
        "clusterIPs": ("[]string,omitempty", "The cluster IPs (one per IP family)."),
        "externalIPs": ("[]string,omitempty", "External IPs routed to the service."),
        "externalName": ("string,omitempty", "DNS name returned for an ExternalName service."),
        "externalTrafficPolicy": ("string,omitempty", "Cluster or Local."),
        "healthCheckNodePort": ("int32,omitempty", "Health check node port for Local traffic policy."),
        "internalTrafficPolicy": ("string", "Cluster or Local."),
        "ipFamilies": ("[]string,omitempty", "IPv4 and/or IPv6."),
        "ipFamilyPolicy": ("string", "SingleStack, PreferDualStack, RequireDualStack."),
        "loadBalancerClass": ("string", "Load balancer implementation."),
        "loadBalancerIP": ("string,omitempty", "Deprecated: requested load balancer IP."),
        "loadBalancerSourceRanges": ("[]string,omitempty", "Client CIDRs allowed through the load balancer."),
        "ports": ("[]ServicePort,omitempty", "Ports the service exposes."),
        "publishNotReadyAddresses": ("boolean,omitempty", "Publish addresses of pods that are not ready."),
        "selector": ("map[string],omitempty", "Routes traffic to pods with these labels."),
        "sessionAffinity": ("string,omitempty", "ClientIP or None."),
        "sessionAffinityConfig": ("SessionAffinityConfig", "Session affinity parameters."),
        "trafficDistribution": ("string", "PreferClose."),
        "type": ("string,omitempty", "ClusterIP (default), NodePort, LoadBalancer or ExternalName."),
    }),
    "ServiceStatus": ("Service status.", {
        "conditions": ("[]Condition,omitempty", "Conditions of the service status."),
        "loadBalancer": ("LoadBalancerStatus", "Load balancer of the service status."),
    }),
    "SessionAffinityConfig": ("Session affinity config.", {
        "clientIP": ("ClientIPConfig", "Client IP of the session affinity config."),
    }),
    "SleepAction": ("A sleep.", {
        "seconds": ("int64", "Seconds to sleep."),
    }),
    "StatefulSetCondition": ("Stateful set condition.", {
        "lastTransitionTime": ("Time", "Last transition time of the stateful set condition."),
        "message": ("string,omitempty", "Message of the stateful set condition."),
        "reason": ("string,omitempty", "Reason of the stateful set condition."),
        "status": ("string", "Status of the stateful set condition."),
        "type": ("string", "Type of the stateful set condition."),
    }),
    "StatefulSetOrdinals": ("Stateful set ordinals.", {
        "start": ("int32", "Start of the stateful set ordinals."),
    }),
    "StatefulSetPersistentVolumeClaimRetentionPolicy": ("Stateful set persistent volume claim retention policy.", {
        "whenDeleted": ("string", "When deleted of the stateful set persistent volume claim retention policy."),
        "whenScaled": ("string", "When scaled of the stateful set persistent volume claim retention policy."),
    }),
    "StatefulSetSpec": ("The desired state of a StatefulSet.", {
        "minReadySeconds": ("int32,omitempty", "Seconds a new pod must be ready to count as available."),
        "ordinals": ("StatefulSetOrdinals", "Numbering of the replicas."),
        "persistentVolumeClaimRetentionPolicy": ("StatefulSetPersistentVolumeClaimRetentionPolicy", "What happens to claims on scale-down and deletion."),
        "podManagementPolicy": ("string,omitempty", "OrderedReady or Parallel."),
        "replicas": ("int32", "Number of desired pods (1)."),
        "revisionHistoryLimit": ("int32", "Old revisions kept (10)."),
        "selector": ("LabelSelector", "Selects the pods of this stateful set."),
        "serviceName": ("string", "Governing headless service."),
        "template": ("PodTemplateSpec", "The pods to create."),
        "updateStrategy": ("StatefulSetUpdateStrategy", "RollingUpdate or OnDelete."),
        "volumeClaimTemplates": ("[]PersistentVolumeClaim,omitempty", "Claims every pod gets."),
    }),
    "StatefulSetStatus": ("Stateful set status.", {
        "availableReplicas": ("int32", "Available replicas of the stateful set status."),
        "collisionCount": ("int32", "Collision count of the stateful set status."),
        "conditions": ("[]StatefulSetCondition,omitempty", "Conditions of the stateful set status."),
        "currentReplicas": ("int32,omitempty", "Current replicas of the stateful set status."),
        "currentRevision": ("string,omitempty", "Current revision of the stateful set status."),
        "observedGeneration": ("int64,omitempty", "Observed generation of the stateful set status."),
        "readyReplicas": ("int32,omitempty", "Ready replicas of the stateful set status."),
        "replicas": ("int32", "Replicas of the stateful set status."),
        "updateRevision": ("string,omitempty", "Update revision of the stateful set status."),
        "updatedReplicas": ("int32,omitempty", "Updated replicas of the stateful set status."),
    }),
    "StatefulSetUpdateStrategy": ("How a StatefulSet replaces its pods.", {
        "rollingUpdate": ("RollingUpdateStatefulSetStrategy", "Parameters of a rolling update."),
        "type": ("string,omitempty", "RollingUpdate (default) or OnDelete."),
    }),
    "StorageOSVolumeSource": ("Storage OS volume source.", {
        "fsType": ("string", "Fs type of the storage OS volume source."),
        "readOnly": ("boolean", "Read only of the storage OS volume source."),
        "secretRef": ("LocalObjectReference", "Secret ref of the storage OS volume source."),
        "volumeName": ("string", "Volume name of the storage OS volume source."),
        "volumeNamespace": ("string", "Volume namespace of the storage OS volume source."),
    }),
    "Sysctl": ("Sysctl.", {
        "name": ("string", "Name of the sysctl."),
        "value": ("string", "Value of the sysctl."),
    }),
    "TCPSocketAction": ("A TCP connection.", {
        "host": ("string,omitempty", "Host (the pod IP by default)."),
        "port": ("IntOrString", "Port number or name."),
    }),
    "Taint": ("Repels pods that do not tolerate it.", {
        "effect": ("string", "NoSchedule, PreferNoSchedule or NoExecute."),
        "key": ("string", "Taint key."),
        "timeAdded": ("Time", "When a NoExecute taint was added."),
        "value": ("string,omitempty", "Taint value."),
    }),
    "Toleration": ("Lets a pod be scheduled on (or stay on) nodes with a matching taint.", {
        "effect": ("string,omitempty", "NoSchedule, PreferNoSchedule or NoExecute; empty matches all."),
        "key": ("string,omitempty", "Taint key; empty with operator Exists matches all."),
        "operator": ("string,omitempty", "Exists or Equal (default)."),
        "tolerationSeconds": ("int64", "For NoExecute: how long the pod stays bound after the taint appears."),
        "value": ("string,omitempty", "Taint value for Equal."),
    }),
    "TopologySpreadConstraint": ("How matching pods spread over a topology.", {
        "labelSelector": ("LabelSelector", "Pods counted."),
        "matchLabelKeys": ("[]string,omitempty", "Label keys of the incoming pod added to the selector."),
        "maxSkew": ("int32", "Largest allowed difference of matching pods between domains."),
        "minDomains": ("int32", "Minimum number of eligible domains."),
        "nodeAffinityPolicy": ("string", "Honor or Ignore the pod's node affinity."),
        "nodeTaintsPolicy": ("string", "Honor or Ignore node taints."),
        "topologyKey": ("string", "Node label defining the domains."),
        "whenUnsatisfiable": ("string", "DoNotSchedule or ScheduleAnyway."),
    }),
    "TypedLocalObjectReference": ("Typed local object reference.", {
        "apiGroup": ("string", "Api group of the typed local object reference."),
        "kind": ("string", "Kind of the typed local object reference."),
        "name": ("string", "Name of the typed local object reference."),
    }),
    "TypedObjectReference": ("Typed object reference.", {
        "apiGroup": ("string", "Api group of the typed object reference."),
        "kind": ("string", "Kind of the typed object reference."),
        "name": ("string", "Name of the typed object reference."),
        "namespace": ("string", "Namespace of the typed object reference."),
    }),
    "Volume": ("A named volume of a pod.", {
        "awsElasticBlockStore": ("AWSElasticBlockStoreVolumeSource", "Aws elastic block store of the volume."),
        "azureDisk": ("AzureDiskVolumeSource", "Azure disk of the volume."),
        "azureFile": ("AzureFileVolumeSource", "Azure file of the volume."),
        "cephfs": ("CephFSVolumeSource", "Cephfs of the volume."),
        "cinder": ("CinderVolumeSource", "Cinder of the volume."),
        "configMap": ("ConfigMapVolumeSource", "A ConfigMap's keys as files."),
        "csi": ("CSIVolumeSource", "Csi of the volume."),
        "downwardAPI": ("DownwardAPIVolumeSource", "Pod fields as files."),
        "emptyDir": ("EmptyDirVolumeSource", "A temporary directory sharing the pod's lifetime."),
        "ephemeral": ("EphemeralVolumeSource", "Ephemeral of the volume."),
        "fc": ("FCVolumeSource", "Fc of the volume."),
        "flexVolume": ("FlexVolumeSource", "Flex volume of the volume."),
        "flocker": ("FlockerVolumeSource", "Flocker of the volume."),
        "gcePersistentDisk": ("GCEPersistentDiskVolumeSource", "Gce persistent disk of the volume."),
        "gitRepo": ("GitRepoVolumeSource", "Git repo of the volume."),
        "glusterfs": ("GlusterfsVolumeSource", "Glusterfs of the volume."),
        "hostPath": ("HostPathVolumeSource", "A path on the node."),
        "image": ("ImageVolumeSource", "Image of the volume."),
        "iscsi": ("ISCSIVolumeSource", "Iscsi of the volume."),
        "name": ("string", "Name of the volume (DNS label)."),
        "nfs": ("NFSVolumeSource", "Nfs of the volume."),
        "persistentVolumeClaim": ("PersistentVolumeClaimVolumeSource", "A PersistentVolumeClaim."),
        "photonPersistentDisk": ("PhotonPersistentDiskVolumeSource", "Photon persistent disk of the volume."),
        "portworxVolume": ("PortworxVolumeSource", "Portworx volume of the volume."),
        "projected": ("ProjectedVolumeSource", "Several sources in one directory."),
        "quobyte": ("QuobyteVolumeSource", "Quobyte of the volume."),
        "rbd": ("RBDVolumeSource", "Rbd of the volume."),
        "scaleIO": ("ScaleIOVolumeSource", "Scale IO of the volume."),
        "secret": ("SecretVolumeSource", "A Secret's keys as files."),
        "storageos": ("StorageOSVolumeSource", "Storageos of the volume."),
        "vsphereVolume": ("VsphereVirtualDiskVolumeSource", "Vsphere volume of the volume."),
    }),
    "VolumeDevice": ("Volume device.", {
        "devicePath": ("string", "Device path of the volume device."),
        "name": ("string", "Name of the volume device."),
    }),
    "VolumeMount": ("A volume mounted into a container.", {
        "mountPath": ("string", "Path in the container."),
        "mountPropagation": ("string", "None, HostToContainer or Bidirectional."),
        "name": ("string", "Name of the volume."),
        "readOnly": ("boolean,omitempty", "Mount read-only."),
        "recursiveReadOnly": ("string", "Disabled, IfPossible or Enabled."),
        "subPath": ("string,omitempty", "Path within the volume."),
        "subPathExpr": ("string,omitempty", "subPath with $(VAR) expansion."),
    }),
    "VolumeMountStatus": ("Volume mount status.", {
        "mountPath": ("string", "Mount path of the volume mount status."),
        "name": ("string", "Name of the volume mount status."),
        "readOnly": ("boolean", "Read only of the volume mount status."),
        "recursiveReadOnly": ("string", "Recursive read only of the volume mount status."),
    }),
    "VolumeProjection": ("Volume projection.", {
        "clusterTrustBundle": ("ClusterTrustBundleProjection", "Cluster trust bundle of the volume projection."),
        "configMap": ("ConfigMapProjection", "Config map of the volume projection."),
        "downwardAPI": ("DownwardAPIProjection", "Downward API of the volume projection."),
        "secret": ("SecretProjection", "Secret of the volume projection."),
        "serviceAccountToken": ("ServiceAccountTokenProjection", "Service account token of the volume projection."),
    }),
    "VolumeResourceRequirements": ("Volume resource requirements.", {
        "limits": ("map[Quantity],omitempty", "Limits of the volume resource requirements."),
        "requests": ("map[Quantity],omitempty", "Requests of the volume resource requirements."),
    }),
    "VsphereVirtualDiskVolumeSource": ("Vsphere virtual disk volume source.", {
        "fsType": ("string", "Fs type of the vsphere virtual disk volume source."),
        "storagePolicyID": ("string", "Storage policy ID of the vsphere virtual disk volume source."),
        "storagePolicyName": ("string", "Storage policy name of the vsphere virtual disk volume source."),
        "volumePath": ("string", "Volume path of the vsphere virtual disk volume source."),
    }),
    "WeightedPodAffinityTerm": ("A weighted pod affinity term.", {
        "podAffinityTerm": ("PodAffinityTerm", "The term."),
        "weight": ("int32", "Weight 1-100."),
    }),
    "WindowsSecurityContextOptions": ("Windows security context options.", {
        "gmsaCredentialSpec": ("string", "Gmsa credential spec of the windows security context options."),
        "gmsaCredentialSpecName": ("string", "Gmsa credential spec name of the windows security context options."),
        "hostProcess": ("boolean", "Host process of the windows security context options."),
        "runAsUserName": ("string", "Run as user name of the windows security context options."),
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


def kind_fields(kind: str) -> KindSchema | None:
    """The schema of ``kind``: its registry entry's (``REGISTRY.of_kind(kind).schema``), else
    one of :data:`BODY_KINDS`; None for a kind with neither (e.g. one added at run time
    without a schema)."""
    r = REGISTRY.of_kind(kind)
    if r is not None and r.schema is not None:
        return r.schema
    return BODY_KINDS.get(kind)


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
    typ = base_type(typ)
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
