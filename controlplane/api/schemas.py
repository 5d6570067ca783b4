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
Every struct's field list is complete: fields not listed are unknown, dropped on every write
path or reported with ``fieldValidation`` (:data:`OPEN_TYPES`, structs whose unlisted fields
would be kept, is empty; the one free-form type left is ``managedFields[].fieldsV1``).

Field notation: ``(type[,omitempty], description)`` where type is ``string``, ``boolean``, ``int32``,
``int64`` (``integer`` = int64), ``number`` (float64), ``bytes`` (``[]byte``: base64 text),
``Quantity``, ``IntOrString``, ``Time``, ``MicroTime``, ``map[string]`` (map[string]string),
``map[bytes]``, ``map[Quantity]``, ``object:<Go type>`` (a value not modelled field by field:
any JSON object, kept as sent — FieldsV1 only), a :data:`TYPES` name, or ``[]`` + any of those. Lists carry
the tags :mod:`controlplane.api.listfields` declares for their struct and field — the same
the server's strategic merge and server-side apply use (``x-kubernetes-patch-merge-key``,
``x-kubernetes-patch-strategy``, ``x-kubernetes-list-type``, ``x-kubernetes-list-map-keys``).
A type ending in ``,omitempty`` is a Go value (not pointer) field tagged ``omitempty``: the
decoder drops its zero value (``""``, ``0``, ``false``, ``[]``, ``{}``) as Go's encoder leaves
it out, so nothing stored or returned carries it (``readyReplicas: 0``, ``ports: []``). Every
list and map that is not required carries the tag (Go slices and maps are never pointers);
scalars carry it where the Go field is a value (the status counters, PodSpec's and
Container's plain strings and booleans...). A field without it keeps its zero value: pointers
(``replicas: 0`` is meaningful), required fields, and scalars not declared here — the safe
reading of an unknown fact. Struct-valued fields carry no tag (Go encodes a value struct even
when empty).

The field lists, Go types and required fields are those of Kubernetes v1.32's OpenAPI
(``api/openapi-spec/v3/*.json``, as the kubernetes Python client 32.0.1 models carry them);
the descriptions are our own short ones.
"""

from __future__ import annotations

from typing import Any

from controlplane.api import listfields
from controlplane.api.groups import authentication
from controlplane.api.registry import KindKey, KindSchema
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
    "AWSElasticBlockStoreVolumeSource": ("Deprecated: an AWS EBS disk (in-tree driver; the CSI driver replaces it).", {
        "fsType": ("string,omitempty", "Filesystem type to mount (ext4, xfs...)."),
        "partition": ("int32,omitempty", "Partition to mount (none: the whole disk)."),
        "readOnly": ("boolean,omitempty", "Mount read-only."),
        "volumeID": ("string", "ID of the volume in the storage system."),
    }),
    "Affinity": ("Scheduling constraints on nodes and on other pods.", {
        "nodeAffinity": ("NodeAffinity", "Node affinity of the pod."),
        "podAffinity": ("PodAffinity", "Co-locate with pods matching these terms."),
        "podAntiAffinity": ("PodAffinity", "Keep away from pods matching these terms."),
    }),
    "AppArmorProfile": ("An AppArmor profile.", {
        "localhostProfile": ("string", "Profile loaded on the node (type Localhost)."),
        "type": ("string", "RuntimeDefault, Unconfined or Localhost."),
    }),
    "AttachedVolume": ("A volume attached to a node.", {
        "devicePath": ("string", "Where the device is available."),
        "name": ("string", "Name of the volume."),
    }),
    "AzureDiskVolumeSource": ("Deprecated: an Azure data disk.", {
        "cachingMode": ("string", "Host caching: None, ReadOnly or ReadWrite."),
        "diskName": ("string", "Name of the data disk."),
        "diskURI": ("string", "URI of the data disk."),
        "fsType": ("string", "Filesystem type to mount (ext4, xfs...)."),
        "kind": ("string", "Shared, Dedicated or Managed."),
        "readOnly": ("boolean", "Mount read-only."),
    }),
    "AzureFileVolumeSource": ("Deprecated: an Azure File share.", {
        "readOnly": ("boolean,omitempty", "Mount read-only."),
        "secretName": ("string", "Secret with the storage account name and key."),
        "shareName": ("string", "Name of the share."),
    }),
    "CSIVolumeSource": ("An ephemeral volume from a CSI driver.", {
        "driver": ("string", "Name of the CSI driver."),
        "fsType": ("string", "Filesystem type (ext4...)."),
        "nodePublishSecretRef": ("LocalObjectReference", "Secret passed to the driver."),
        "readOnly": ("boolean", "Mount read-only."),
        "volumeAttributes": ("map[string],omitempty", "Driver-specific properties."),
    }),
    "Capabilities": ("Linux capabilities added and dropped.", {
        "add": ("[]string,omitempty", "Capabilities added."),
        "drop": ("[]string,omitempty", "Capabilities dropped."),
    }),
    "CephFSVolumeSource": ("Deprecated: a CephFS mount.", {
        "monitors": ("[]string", "Ceph monitor addresses."),
        "path": ("string,omitempty", "Path in the CephFS tree to mount (/)."),
        "readOnly": ("boolean,omitempty", "Mount read-only."),
        "secretFile": ("string,omitempty", "Keyring file for the user."),
        "secretRef": ("LocalObjectReference", "Secret holding the credentials."),
        "user": ("string,omitempty", "User name for the storage system."),
    }),
    "CinderVolumeSource": ("Deprecated: an OpenStack Cinder volume.", {
        "fsType": ("string,omitempty", "Filesystem type to mount (ext4, xfs...)."),
        "readOnly": ("boolean,omitempty", "Mount read-only."),
        "secretRef": ("LocalObjectReference", "Secret holding the credentials."),
        "volumeID": ("string", "ID of the volume in the storage system."),
    }),
    "ClientIPConfig": ("ClientIP session affinity parameters.", {
        "timeoutSeconds": ("int32", "Seconds a session sticks (10800)."),
    }),
    "ClusterTrustBundleProjection": ("ClusterTrustBundle certificates written to a file.", {
        "labelSelector": ("LabelSelector", "Selects bundles by label."),
        "name": ("string", "Name of one bundle."),
        "optional": ("boolean", "Allow none to be found."),
        "path": ("string", "Relative path of the file."),
        "signerName": ("string", "Selects bundles by signer."),
    }),
    "Condition": ("One aspect of an object's state.", {
        "lastTransitionTime": ("Time", "Last change of status."),
        "message": ("string", "Human-readable detail."),
        "observedGeneration": ("int64", "The generation the condition was set for."),
        "reason": ("string", "CamelCase reason."),
        "status": ("string", "True, False or Unknown."),
        "type": ("string", "Type of the condition (CamelCase)."),
    }),
    "ConfigMapEnvSource": ("A ConfigMap whose keys become variables.", {
        "name": ("string", "Name of the ConfigMap."),
        "optional": ("boolean", "Allow the ConfigMap to be missing."),
    }),
    "ConfigMapKeySelector": ("One key of a ConfigMap.", {
        "key": ("string", "The key."),
        "name": ("string", "Name of the ConfigMap."),
        "optional": ("boolean", "Allow the ConfigMap or key to be missing."),
    }),
    "ConfigMapNodeConfigSource": ("Deprecated: a ConfigMap holding kubelet configuration.", {
        "kubeletConfigKey": ("string", "Key holding the configuration."),
        "name": ("string", "Name of the ConfigMap."),
        "namespace": ("string", "Namespace of the ConfigMap."),
        "resourceVersion": ("string", "Its resourceVersion."),
        "uid": ("string", "Its UID."),
    }),
    "ConfigMapProjection": ("A ConfigMap's keys in a projected volume.", {
        "items": ("[]KeyToPath,omitempty", "Keys to project and their paths."),
        "name": ("string", "Name of the ConfigMap."),
        "optional": ("boolean", "Allow it to be missing."),
    }),
    "ConfigMapVolumeSource": ("A ConfigMap's keys as files.", {
        "defaultMode": ("int32", "Permission bits of the files (0644)."),
        "items": ("[]KeyToPath,omitempty", "Keys to project and their paths; all keys if empty."),
        "name": ("string", "Name of the ConfigMap."),
        "optional": ("boolean", "Allow the ConfigMap or its keys to be missing."),
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
    "ContainerImage": ("An image present on a node.", {
        "names": ("[]string,omitempty", "Names (and digests) of the image."),
        "sizeBytes": ("int64", "Size in bytes."),
    }),
    "ContainerPort": ("A network port of a container.", {
        "containerPort": ("int32", "Port number on the pod's IP address."),
        "hostIP": ("string,omitempty", "Host IP the host port binds to."),
        "hostPort": ("int32,omitempty", "Port number on the host."),
        "name": ("string,omitempty", "Name of the port (IANA_SVC_NAME), referable from services."),
        "protocol": ("string,omitempty", "TCP, UDP or SCTP (TCP)."),
    }),
    "ContainerResizePolicy": ("How a resource of a container is resized.", {
        "resourceName": ("string", "The resource (cpu, memory)."),
        "restartPolicy": ("string", "NotRequired or RestartContainer."),
    }),
    "ContainerState": ("The state of a container: one of waiting, running or terminated.", {
        "running": ("ContainerStateRunning", "The container is running."),
        "terminated": ("ContainerStateTerminated", "The container has terminated."),
        "waiting": ("ContainerStateWaiting", "The container has not started yet."),
    }),
    "ContainerStateRunning": ("A running container.", {
        "startedAt": ("Time", "When the container (re)started."),
    }),
    "ContainerStateTerminated": ("A container that has terminated.", {
        "containerID": ("string,omitempty", "Container ID (<type>://<id>)."),
        "exitCode": ("int32", "Exit status of the last termination."),
        "finishedAt": ("Time", "When the container last terminated."),
        "message": ("string,omitempty", "Message about the termination."),
        "reason": ("string,omitempty", "Why it terminated (Completed, Error, OOMKilled...)."),
        "signal": ("int32,omitempty", "Signal that ended it."),
        "startedAt": ("Time", "When the container started."),
    }),
    "ContainerStateWaiting": ("A container that is not running yet.", {
        "message": ("string,omitempty", "Why it is not running yet, in words."),
        "reason": ("string,omitempty", "Why it is not running yet (ContainerCreating, ImagePullBackOff...)."),
    }),
    "ContainerStatus": ("The state of one container.", {
        "allocatedResources": ("map[Quantity],omitempty", "Compute resources allocated to the container by the node."),
        "allocatedResourcesStatus": ("[]ResourceStatus,omitempty", "Health of the resources allocated to the container."),
        "containerID": ("string,omitempty", "Container ID (<runtime>://<id>)."),
        "image": ("string", "Image running."),
        "imageID": ("string", "Image ID."),
        "lastState": ("ContainerState", "State of the previous instance (after a restart)."),
        "name": ("string", "Container name."),
        "ready": ("boolean", "Passed its readiness probe."),
        "resources": ("ResourceRequirements", "Resources actually applied to the running container."),
        "restartCount": ("int32", "Number of restarts."),
        "started": ("boolean", "Passed its startup probe."),
        "state": ("ContainerState", "waiting, running or terminated, with details."),
        "user": ("ContainerUser", "Identity the container's process runs as."),
        "volumeMounts": ("[]VolumeMountStatus,omitempty", "Status of the container's volume mounts."),
    }),
    "ContainerUser": ("The identity a container's process runs as.", {
        "linux": ("LinuxContainerUser", "Linux user and groups."),
    }),
    "DaemonEndpoint": ("A daemon's port.", {
        "Port": ("int32", "Port number."),
    }),
    "DaemonSetCondition": ("One aspect of a DaemonSet's state.", {
        "lastTransitionTime": ("Time", "When the status last changed."),
        "message": ("string,omitempty", "Human-readable detail of the last change."),
        "reason": ("string,omitempty", "Why the condition last changed (CamelCase)."),
        "status": ("string", "True, False or Unknown."),
        "type": ("string", "Type of the condition."),
    }),
    "DaemonSetSpec": ("The desired state of a DaemonSet.", {
        "minReadySeconds": ("int32,omitempty", "Seconds a new pod must be ready to count as available."),
        "revisionHistoryLimit": ("int32", "Old revisions kept (10)."),
        "selector": ("LabelSelector", "Selects the pods of this daemon set."),
        "template": ("PodTemplateSpec", "The pod run on every eligible node."),
        "updateStrategy": ("DaemonSetUpdateStrategy", "RollingUpdate or OnDelete."),
    }),
    "DaemonSetStatus": ("The observed state of a DaemonSet.", {
        "collisionCount": ("int32", "Hash collisions seen when naming ControllerRevisions."),
        "conditions": ("[]DaemonSetCondition,omitempty", "Latest observations of the daemon set's state."),
        "currentNumberScheduled": ("int32", "Nodes running at least one daemon pod that should run it."),
        "desiredNumberScheduled": ("int32", "Nodes that should run the daemon pod."),
        "numberAvailable": ("int32,omitempty", "Nodes whose daemon pod is available (ready for minReadySeconds)."),
        "numberMisscheduled": ("int32", "Nodes running the daemon pod that should not run it."),
        "numberReady": ("int32", "Nodes whose daemon pod is ready."),
        "numberUnavailable": ("int32,omitempty", "Nodes that should run the daemon pod but have none available."),
        "observedGeneration": ("int64,omitempty", "The generation last acted on by the controller."),
        "updatedNumberScheduled": ("int32,omitempty", "Nodes running the current template's pod."),
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
    "DeploymentCondition": ("One aspect of a Deployment's state (Available, Progressing, ReplicaFailure).", {
        "lastTransitionTime": ("Time", "When the status last changed."),
        "lastUpdateTime": ("Time", "When the condition was last updated."),
        "message": ("string,omitempty", "Human-readable detail of the last change."),
        "reason": ("string,omitempty", "Why the condition last changed (CamelCase)."),
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
    "DownwardAPIProjection": ("Fields of the pod as files in a projected volume.", {
        "items": ("[]DownwardAPIVolumeFile,omitempty", "The files."),
    }),
    "DownwardAPIVolumeFile": ("A file holding a field of the pod.", {
        "fieldRef": ("ObjectFieldSelector", "A field of the pod."),
        "mode": ("int32", "Permission bits of the file."),
        "path": ("string", "Relative path of the file."),
        "resourceFieldRef": ("ResourceFieldSelector", "A resource limit or request of a container."),
    }),
    "DownwardAPIVolumeSource": ("Fields of the pod as files.", {
        "defaultMode": ("int32", "Permission bits of the files (0644)."),
        "items": ("[]DownwardAPIVolumeFile,omitempty", "The files."),
    }),
    "EmptyDirVolumeSource": ("A temporary directory sharing the pod's lifetime.", {
        "medium": ("string,omitempty", "\"\" (node disk) or Memory."),
        "sizeLimit": ("Quantity", "Maximum size."),
    }),
    "EndpointAddress": ("One address of an endpoint.", {
        "hostname": ("string,omitempty", "Hostname of the endpoint."),
        "ip": ("string", "IP address of the endpoint."),
        "nodeName": ("string", "Node hosting the endpoint."),
        "targetRef": ("ObjectReference", "The object (pod) providing the endpoint."),
    }),
    "EndpointPort": ("One port of an endpoint.", {
        "appProtocol": ("string", "Application protocol of the port."),
        "name": ("string,omitempty", "Name of the port (the service port's name)."),
        "port": ("int32", "Port number."),
        "protocol": ("string,omitempty", "TCP, UDP or SCTP (TCP)."),
    }),
    "EndpointSubset": ("Addresses that share a set of ports.", {
        "addresses": ("[]EndpointAddress,omitempty", "Ready addresses."),
        "notReadyAddresses": ("[]EndpointAddress,omitempty", "Addresses not ready for traffic yet."),
        "ports": ("[]EndpointPort,omitempty", "Ports available on every address."),
    }),
    "EnvFromSource": ("A ConfigMap or Secret whose keys all become variables.", {
        "configMapRef": ("ConfigMapEnvSource", "The ConfigMap."),
        "prefix": ("string", "Prefix added to each variable name."),
        "secretRef": ("SecretEnvSource", "The Secret."),
    }),
    "EnvVar": ("An environment variable of a container.", {
        "name": ("string", "Name of the variable."),
        "value": ("string,omitempty", "Value of the variable."),
        "valueFrom": ("EnvVarSource", "Source of the value (field, resource, ConfigMap or Secret key)."),
    }),
    "EnvVarSource": ("Where an environment variable's value comes from.", {
        "configMapKeyRef": ("ConfigMapKeySelector", "A key of a ConfigMap."),
        "fieldRef": ("ObjectFieldSelector", "A field of the pod (metadata.name, status.podIP...)."),
        "resourceFieldRef": ("ResourceFieldSelector", "A resource limit or request of a container."),
        "secretKeyRef": ("SecretKeySelector", "A key of a Secret."),
    }),
    "EphemeralContainer": ("A debugging container added to a running pod (kubectl debug); no ports, probes or resources.", {
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
        "targetContainerName": ("string,omitempty", "Container whose namespaces (process...) this one joins."),
        "terminationMessagePath": ("string,omitempty", "File the termination message is read from."),
        "terminationMessagePolicy": ("string,omitempty", "File or FallbackToLogsOnError."),
        "tty": ("boolean,omitempty", "Allocate a TTY."),
        "volumeDevices": ("[]VolumeDevice,omitempty", "Block devices used by the container."),
        "volumeMounts": ("[]VolumeMount,omitempty", "Volumes mounted into the container's filesystem."),
        "workingDir": ("string,omitempty", "Working directory of the entrypoint."),
    }),
    "EphemeralVolumeSource": ("A volume provisioned for the pod and deleted with it.", {
        "volumeClaimTemplate": ("PersistentVolumeClaimTemplate", "Claim created for the pod (named <pod>-<volume>)."),
    }),
    "EventSeries": ("A series of occurrences of an event.", {
        "count": ("int32,omitempty", "Occurrences in the series so far."),
        "lastObservedTime": ("MicroTime", "When the last occurrence was observed."),
    }),
    "EventSource": ("The component that reported an event.", {
        "component": ("string,omitempty", "Component name."),
        "host": ("string,omitempty", "Node name."),
    }),
    "ExecAction": ("A command run in the container.", {
        "command": ("[]string,omitempty", "The command and its arguments."),
    }),
    "FCVolumeSource": ("A Fibre Channel disk.", {
        "fsType": ("string,omitempty", "Filesystem type to mount (ext4, xfs...)."),
        "lun": ("int32", "Logical unit number."),
        "readOnly": ("boolean,omitempty", "Mount read-only."),
        "targetWWNs": ("[]string,omitempty", "Target worldwide names."),
        "wwids": ("[]string,omitempty", "Worldwide identifiers of the volume."),
    }),
    "FlexVolumeSource": ("Deprecated: a FlexVolume driver's volume.", {
        "driver": ("string", "Name of the FlexVolume driver."),
        "fsType": ("string,omitempty", "Filesystem type to mount (ext4, xfs...)."),
        "options": ("map[string],omitempty", "Driver-specific options."),
        "readOnly": ("boolean,omitempty", "Mount read-only."),
        "secretRef": ("LocalObjectReference", "Secret holding the credentials."),
    }),
    "FlockerVolumeSource": ("Deprecated: a Flocker dataset.", {
        "datasetName": ("string,omitempty", "Name of the dataset."),
        "datasetUUID": ("string,omitempty", "UUID of the dataset."),
    }),
    "GCEPersistentDiskVolumeSource": ("Deprecated: a GCE persistent disk.", {
        "fsType": ("string,omitempty", "Filesystem type to mount (ext4, xfs...)."),
        "partition": ("int32,omitempty", "Partition to mount (none: the whole disk)."),
        "pdName": ("string", "Name of the persistent disk."),
        "readOnly": ("boolean,omitempty", "Mount read-only."),
    }),
    "GRPCAction": ("A gRPC health check.", {
        "port": ("int32", "Port number."),
        "service": ("string", "Service name for the health check."),
    }),
    "GitRepoVolumeSource": ("Deprecated: a git repository cloned into an empty directory.", {
        "directory": ("string,omitempty", "Target directory name."),
        "repository": ("string", "Repository URL."),
        "revision": ("string,omitempty", "Commit to check out."),
    }),
    "GlusterfsVolumeSource": ("Deprecated: a GlusterFS mount.", {
        "endpoints": ("string", "Endpoints object naming the Glusterfs servers."),
        "path": ("string", "Glusterfs volume path."),
        "readOnly": ("boolean,omitempty", "Mount read-only."),
    }),
    "HTTPGetAction": ("An HTTP GET request.", {
        "host": ("string,omitempty", "Host (the pod IP by default)."),
        "httpHeaders": ("[]HTTPHeader,omitempty", "Extra request headers."),
        "path": ("string,omitempty", "Path to request."),
        "port": ("IntOrString", "Port number or name."),
        "scheme": ("string,omitempty", "HTTP or HTTPS."),
    }),
    "HTTPHeader": ("An HTTP header.", {
        "name": ("string", "Header name."),
        "value": ("string", "Header value."),
    }),
    "HostAlias": ("An /etc/hosts entry of a pod.", {
        "hostnames": ("[]string,omitempty", "Host names of the IP."),
        "ip": ("string", "IP address."),
    }),
    "HostIP": ("An IP address of a node.", {
        "ip": ("string", "The address."),
    }),
    "HostPathVolumeSource": ("A file or directory of the node.", {
        "path": ("string", "Path on the node."),
        "type": ("string", "What the path must be (Directory, File, DirectoryOrCreate...)."),
    }),
    "ISCSIVolumeSource": ("An iSCSI disk.", {
        "chapAuthDiscovery": ("boolean,omitempty", "Use CHAP authentication for discovery."),
        "chapAuthSession": ("boolean,omitempty", "Use CHAP authentication for the session."),
        "fsType": ("string,omitempty", "Filesystem type to mount (ext4, xfs...)."),
        "initiatorName": ("string", "Custom iSCSI initiator name."),
        "iqn": ("string", "iSCSI qualified name of the target."),
        "iscsiInterface": ("string,omitempty", "iSCSI interface (default)."),
        "lun": ("int32", "Logical unit number."),
        "portals": ("[]string,omitempty", "Other target portals."),
        "readOnly": ("boolean,omitempty", "Mount read-only."),
        "secretRef": ("LocalObjectReference", "Secret holding the credentials."),
        "targetPortal": ("string", "Target portal (ip:port)."),
    }),
    "ImageVolumeSource": ("An OCI image mounted as a volume.", {
        "pullPolicy": ("string", "Always, Never or IfNotPresent."),
        "reference": ("string", "Image reference."),
    }),
    "KeyToPath": ("A key projected to a relative file path.", {
        "key": ("string", "The key."),
        "mode": ("int32", "Permission bits of this file."),
        "path": ("string", "Relative path of the file."),
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
    "LinuxContainerUser": ("A Linux user and its groups.", {
        "gid": ("int64", "Primary GID."),
        "supplementalGroups": ("[]int64,omitempty", "Supplemental GIDs."),
        "uid": ("int64", "UID."),
    }),
    "LoadBalancerIngress": ("One ingress point of a load balancer.", {
        "hostname": ("string,omitempty", "DNS name of the ingress point."),
        "ip": ("string,omitempty", "IP address of the ingress point."),
        "ipMode": ("string", "VIP or Proxy: how traffic reaches the IP."),
        "ports": ("[]PortStatus,omitempty", "Status of the service's ports there."),
    }),
    "LoadBalancerStatus": ("A load balancer's state.", {
        "ingress": ("[]LoadBalancerIngress,omitempty", "Ingress points of the load balancer."),
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
    "ModifyVolumeStatus": ("The state of a volume modification.", {
        "status": ("string", "Pending, InProgress or Infeasible."),
        "targetVolumeAttributesClassName": ("string", "VolumeAttributesClass being applied."),
    }),
    "NFSVolumeSource": ("An NFS export.", {
        "path": ("string", "Exported path."),
        "readOnly": ("boolean,omitempty", "Mount read-only."),
        "server": ("string", "NFS server."),
    }),
    "NamespaceCondition": ("One aspect of a namespace's state (why it cannot be removed yet).", {
        "lastTransitionTime": ("Time", "When the status last changed."),
        "message": ("string,omitempty", "Human-readable detail of the last change."),
        "reason": ("string,omitempty", "Why the condition last changed (CamelCase)."),
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
    "NodeAddress": ("An address of a node.", {
        "address": ("string", "The address."),
        "type": ("string", "Hostname, InternalIP, ExternalIP..."),
    }),
    "NodeAffinity": ("Node affinity: hard and soft node selector terms.", {
        "preferredDuringSchedulingIgnoredDuringExecution": ("[]PreferredSchedulingTerm,omitempty", "Weighted preferences."),
        "requiredDuringSchedulingIgnoredDuringExecution": ("NodeSelector", "Terms a node must match."),
    }),
    "NodeCondition": ("One aspect of a node's state (Ready, MemoryPressure, DiskPressure, PIDPressure...).", {
        "lastHeartbeatTime": ("Time", "When the condition was last reported."),
        "lastTransitionTime": ("Time", "When the status last changed."),
        "message": ("string,omitempty", "Human-readable detail of the last change."),
        "reason": ("string,omitempty", "Why the condition last changed (CamelCase)."),
        "status": ("string", "True, False or Unknown."),
        "type": ("string", "Type of the condition."),
    }),
    "NodeConfigSource": ("Deprecated: a source of kubelet configuration.", {
        "configMap": ("ConfigMapNodeConfigSource", "A ConfigMap holding the configuration."),
    }),
    "NodeConfigStatus": ("Deprecated: the state of the node's dynamic configuration.", {
        "active": ("NodeConfigSource", "Configuration in use."),
        "assigned": ("NodeConfigSource", "Configuration assigned."),
        "error": ("string", "Error applying it."),
        "lastKnownGood": ("NodeConfigSource", "Configuration to fall back to."),
    }),
    "NodeDaemonEndpoints": ("Ports of the daemons on a node.", {
        "kubeletEndpoint": ("DaemonEndpoint", "The kubelet's port."),
    }),
    "NodeFeatures": ("Features a node supports.", {
        "supplementalGroupsPolicy": ("boolean", "The supplementalGroupsPolicy field."),
    }),
    "NodeRuntimeHandler": ("A runtime handler of a node.", {
        "features": ("NodeRuntimeHandlerFeatures", "What the handler supports."),
        "name": ("string", "Handler name."),
    }),
    "NodeRuntimeHandlerFeatures": ("What a runtime handler supports.", {
        "recursiveReadOnlyMounts": ("boolean", "Recursive read-only mounts."),
        "userNamespaces": ("boolean", "User namespaces."),
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
        "config": ("NodeConfigStatus", "Status of the node's dynamic kubelet configuration (deprecated)."),
        "daemonEndpoints": ("NodeDaemonEndpoints", "Ports of the daemons running on the node (the kubelet's)."),
        "features": ("NodeFeatures", "Features the node supports."),
        "images": ("[]ContainerImage,omitempty", "Images present on the node."),
        "nodeInfo": ("NodeSystemInfo", "Versions, OS, architecture."),
        "phase": ("string,omitempty", "Deprecated."),
        "runtimeHandlers": ("[]NodeRuntimeHandler,omitempty", "Runtime handlers the node offers."),
        "volumesAttached": ("[]AttachedVolume,omitempty", "Volumes attached to the node."),
        "volumesInUse": ("[]string,omitempty", "Volumes in use (mounted) on the node."),
    }),
    "NodeSystemInfo": ("Versions and identifiers of a node's system.", {
        "architecture": ("string", "CPU architecture (amd64, arm64...)."),
        "bootID": ("string", "Boot ID of the node."),
        "containerRuntimeVersion": ("string", "Container runtime and version (containerd://1.7.0)."),
        "kernelVersion": ("string", "Kernel version (uname -r)."),
        "kubeProxyVersion": ("string", "Deprecated: kube-proxy version."),
        "kubeletVersion": ("string", "Kubelet version."),
        "machineID": ("string", "Machine ID (/etc/machine-id)."),
        "operatingSystem": ("string", "Operating system (linux, windows)."),
        "osImage": ("string", "OS image (/etc/os-release)."),
        "systemUUID": ("string", "System UUID from the hardware."),
    }),
    "ObjectFieldSelector": ("A field of the pod.", {
        "apiVersion": ("string,omitempty", "Version of the schema the path is in (v1)."),
        "fieldPath": ("string", "Path of the field."),
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
    "PersistentVolumeClaim": ("A user's request for storage.", {
        "apiVersion": ("string", "v1."),
        "kind": ("string", "PersistentVolumeClaim."),
        "metadata": ("ObjectMeta", "Metadata of the claim."),
        "spec": ("PersistentVolumeClaimSpec", "The storage asked for."),
        "status": ("PersistentVolumeClaimStatus", "The observed state of the claim."),
    }),
    "PersistentVolumeClaimCondition": ("One aspect of a claim's state.", {
        "lastProbeTime": ("Time", "When the condition was last probed."),
        "lastTransitionTime": ("Time", "When the status last changed."),
        "message": ("string", "Human-readable detail of the last change."),
        "reason": ("string", "Why the condition last changed (CamelCase)."),
        "status": ("string", "True, False or Unknown."),
        "type": ("string", "Type of the condition."),
    }),
    "PersistentVolumeClaimSpec": ("The storage a claim asks for.", {
        "accessModes": ("[]string,omitempty", "Access modes wanted (ReadWriteOnce, ReadOnlyMany, ReadWriteMany, ReadWriteOncePod)."),
        "dataSource": ("TypedLocalObjectReference", "An object (snapshot, claim) the new volume is populated from."),
        "dataSourceRef": ("TypedObjectReference", "Any object the new volume is populated from, in any namespace allowed."),
        "resources": ("VolumeResourceRequirements", "Minimum (and maximum) storage wanted."),
        "selector": ("LabelSelector", "Label query over the volumes to bind to."),
        "storageClassName": ("string", "StorageClass wanted; \"\" for none."),
        "volumeAttributesClassName": ("string", "VolumeAttributesClass wanted."),
        "volumeMode": ("string", "Filesystem (default) or Block."),
        "volumeName": ("string", "The PersistentVolume bound to this claim."),
    }),
    "PersistentVolumeClaimStatus": ("The observed state of a claim.", {
        "accessModes": ("[]string,omitempty", "Access modes of the bound volume."),
        "allocatedResourceStatuses": ("map[string],omitempty", "State of resize operations per resource."),
        "allocatedResources": ("map[Quantity],omitempty", "Resources allocated to the claim (during a resize)."),
        "capacity": ("map[Quantity],omitempty", "Capacity of the bound volume."),
        "conditions": ("[]PersistentVolumeClaimCondition,omitempty", "Latest observations (Resizing, FileSystemResizePending...)."),
        "currentVolumeAttributesClassName": ("string", "VolumeAttributesClass currently applied."),
        "modifyVolumeStatus": ("ModifyVolumeStatus", "State of a volume modification."),
        "phase": ("string", "Pending, Bound or Lost."),
    }),
    "PersistentVolumeClaimTemplate": ("A claim created from a template.", {
        "metadata": ("ObjectMeta", "Labels and annotations of the claim."),
        "spec": ("PersistentVolumeClaimSpec", "Specification of the claim."),
    }),
    "PersistentVolumeClaimVolumeSource": ("A PersistentVolumeClaim in the pod's namespace.", {
        "claimName": ("string", "Name of the claim."),
        "readOnly": ("boolean,omitempty", "Mount read-only."),
    }),
    "PhotonPersistentDiskVolumeSource": ("Deprecated: a Photon Controller disk.", {
        "fsType": ("string,omitempty", "Filesystem type to mount (ext4, xfs...)."),
        "pdID": ("string", "ID of the Photon Controller disk."),
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
    "PodAntiAffinity": ("Hard and soft inter-pod anti-affinity terms: keep away from matching pods.", {
        "preferredDuringSchedulingIgnoredDuringExecution": ("[]WeightedPodAffinityTerm,omitempty", "Weighted preferences."),
        "requiredDuringSchedulingIgnoredDuringExecution": ("[]PodAffinityTerm,omitempty", "Terms that must hold."),
    }),
    "PodCondition": ("One aspect of a pod's state (PodScheduled, Initialized, ContainersReady, Ready...).", {
        "lastProbeTime": ("Time", "When the condition was last probed."),
        "lastTransitionTime": ("Time", "When the status last changed."),
        "message": ("string,omitempty", "Human-readable detail of the last change."),
        "reason": ("string,omitempty", "Why the condition last changed (CamelCase)."),
        "status": ("string", "True, False or Unknown."),
        "type": ("string", "Type of the condition."),
    }),
    "PodDNSConfig": ("DNS parameters of a pod besides those of its DNS policy.", {
        "nameservers": ("[]string,omitempty", "DNS server IP addresses."),
        "options": ("[]PodDNSConfigOption,omitempty", "Resolver options."),
        "searches": ("[]string,omitempty", "DNS search domains."),
    }),
    "PodDNSConfigOption": ("A resolver option.", {
        "name": ("string", "Name of the option."),
        "value": ("string", "Value of the option."),
    }),
    "PodIP": ("An IP address of a pod.", {
        "ip": ("string", "The address."),
    }),
    "PodOS": ("The operating system of a pod's containers.", {
        "name": ("string", "linux or windows."),
    }),
    "PodReadinessGate": ("An extra condition for pod readiness.", {
        "conditionType": ("string", "Condition type in the pod's conditions."),
    }),
    "PodResourceClaim": ("A resource claim of a pod.", {
        "name": ("string", "Name of the claim in the pod."),
        "resourceClaimName": ("string", "An existing ResourceClaim."),
        "resourceClaimTemplateName": ("string", "A ResourceClaimTemplate to create the claim from."),
    }),
    "PodResourceClaimStatus": ("The generated claim of a pod resource claim.", {
        "name": ("string", "Name of the claim in the pod."),
        "resourceClaimName": ("string", "Name of the generated ResourceClaim."),
    }),
    "PodSchedulingGate": ("A gate holding a pod back from scheduling.", {
        "name": ("string", "Name of the gate."),
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
        "ephemeralContainerStatuses": ("[]ContainerStatus,omitempty", "One entry per ephemeral container."),
        "hostIP": ("string,omitempty", "Primary IP address of the node."),
        "hostIPs": ("[]HostIP,omitempty", "IP addresses of the node."),
        "initContainerStatuses": ("[]ContainerStatus,omitempty", "One entry per init container."),
        "message": ("string,omitempty", "Human-readable detail of the state."),
        "nominatedNodeName": ("string,omitempty", "Node where the pod may run after preemption."),
        "phase": ("string,omitempty", "Pending, Running, Succeeded, Failed or Unknown."),
        "podIP": ("string,omitempty", "Primary IP address of the pod."),
        "podIPs": ("[]PodIP,omitempty", "IP addresses of the pod (one per family)."),
        "qosClass": ("string,omitempty", "Guaranteed, Burstable or BestEffort."),
        "reason": ("string,omitempty", "Why the pod is in this state (e.g. Evicted)."),
        "resize": ("string,omitempty", "State of a requested resize of the pod's resources."),
        "resourceClaimStatuses": ("[]PodResourceClaimStatus,omitempty", "Generated names of the pod's resource claims."),
        "startTime": ("Time", "When the kubelet accepted the pod."),
    }),
    "PodTemplateSpec": ("The pods a controller creates: their metadata and spec.", {
        "metadata": ("ObjectMeta", "Metadata of the created pods (labels must match the selector)."),
        "spec": ("PodSpec", "Specification of the created pods."),
    }),
    "PortStatus": ("The state of one service port.", {
        "error": ("string", "Why the port is not working (CamelCase)."),
        "port": ("int32", "Port number."),
        "protocol": ("string", "TCP, UDP or SCTP."),
    }),
    "PortworxVolumeSource": ("Deprecated: a Portworx volume.", {
        "fsType": ("string,omitempty", "Filesystem type to mount (ext4, xfs...)."),
        "readOnly": ("boolean,omitempty", "Mount read-only."),
        "volumeID": ("string", "ID of the volume in the storage system."),
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
    "ProjectedVolumeSource": ("Several volume sources in one directory.", {
        "defaultMode": ("int32", "Permission bits of the files (0644)."),
        "sources": ("[]VolumeProjection,omitempty", "The projected sources."),
    }),
    "QuobyteVolumeSource": ("Deprecated: a Quobyte mount.", {
        "group": ("string,omitempty", "Group the volume is accessed as."),
        "readOnly": ("boolean,omitempty", "Mount read-only."),
        "registry": ("string", "Quobyte registry addresses."),
        "tenant": ("string,omitempty", "Tenant owning the volume."),
        "user": ("string,omitempty", "User the volume is accessed as."),
        "volume": ("string", "Name of the volume."),
    }),
    "RBDVolumeSource": ("Deprecated: a Ceph RBD image.", {
        "fsType": ("string,omitempty", "Filesystem type to mount (ext4, xfs...)."),
        "image": ("string", "RADOS image name."),
        "keyring": ("string,omitempty", "Keyring file for the user."),
        "monitors": ("[]string", "Ceph monitor addresses."),
        "pool": ("string,omitempty", "RADOS pool (rbd)."),
        "readOnly": ("boolean,omitempty", "Mount read-only."),
        "secretRef": ("LocalObjectReference", "Secret holding the credentials."),
        "user": ("string,omitempty", "User name for the storage system."),
    }),
    "ReplicaSetCondition": ("One aspect of a ReplicaSet's state (ReplicaFailure).", {
        "lastTransitionTime": ("Time", "When the status last changed."),
        "message": ("string,omitempty", "Human-readable detail of the last change."),
        "reason": ("string,omitempty", "Why the condition last changed (CamelCase)."),
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
    "ReplicationControllerCondition": ("One aspect of a ReplicationController's state.", {
        "lastTransitionTime": ("Time", "When the status last changed."),
        "message": ("string,omitempty", "Human-readable detail of the last change."),
        "reason": ("string,omitempty", "Why the condition last changed (CamelCase)."),
        "status": ("string", "True, False or Unknown."),
        "type": ("string", "Type of the condition."),
    }),
    "ReplicationControllerSpec": ("The desired state of a ReplicationController.", {
        "minReadySeconds": ("int32,omitempty", "Seconds a new pod must be ready to count as available."),
        "replicas": ("int32", "Number of desired pods (1)."),
        "selector": ("map[string],omitempty", "Labels of the pods counted against replicas."),
        "template": ("PodTemplateSpec", "The pods to create when too few exist."),
    }),
    "ReplicationControllerStatus": ("The observed state of a ReplicationController.", {
        "availableReplicas": ("int32,omitempty", "Available pods (ready for minReadySeconds)."),
        "conditions": ("[]ReplicationControllerCondition,omitempty", "Latest observations (ReplicaFailure)."),
        "fullyLabeledReplicas": ("int32,omitempty", "Pods whose labels match the template's."),
        "observedGeneration": ("int64,omitempty", "The generation last acted on."),
        "readyReplicas": ("int32,omitempty", "Ready pods."),
        "replicas": ("int32", "Pods currently matching the selector."),
    }),
    "ResourceClaim": ("A resource claim used by a container.", {
        "name": ("string", "Name of the pod's claim."),
        "request": ("string", "One request of that claim."),
    }),
    "ResourceFieldSelector": ("A resource of a container (limits.cpu, requests.memory...).", {
        "containerName": ("string,omitempty", "The container; required for volumes."),
        "divisor": ("Quantity", "Unit the value is given in (1)."),
        "resource": ("string", "The resource."),
    }),
    "ResourceHealth": ("The health of one allocated device.", {
        "health": ("string", "Healthy, Unhealthy or Unknown."),
        "resourceID": ("string", "ID of the device."),
    }),
    "ResourceRequirements": ("Compute resource requests and limits.", {
        "claims": ("[]ResourceClaim,omitempty", "Dynamic resource claims used."),
        "limits": ("map[Quantity],omitempty", "Maximum resources allowed."),
        "requests": ("map[Quantity],omitempty", "Minimum resources required; what the scheduler reserves on a node."),
    }),
    "ResourceStatus": ("The health of the devices of one resource.", {
        "name": ("string", "Name of the resource."),
        "resources": ("[]ResourceHealth,omitempty", "Health of each device."),
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
    "SELinuxOptions": ("SELinux labels.", {
        "level": ("string,omitempty", "SELinux level."),
        "role": ("string,omitempty", "SELinux role."),
        "type": ("string,omitempty", "SELinux type."),
        "user": ("string,omitempty", "SELinux user."),
    }),
    "ScaleIOVolumeSource": ("Deprecated: a ScaleIO volume.", {
        "fsType": ("string,omitempty", "Filesystem type to mount (ext4, xfs...)."),
        "gateway": ("string", "Gateway address."),
        "protectionDomain": ("string,omitempty", "Protection domain."),
        "readOnly": ("boolean,omitempty", "Mount read-only."),
        "secretRef": ("LocalObjectReference", "Secret holding the credentials."),
        "sslEnabled": ("boolean,omitempty", "Use SSL with the gateway."),
        "storageMode": ("string,omitempty", "ThickProvisioned or ThinProvisioned."),
        "storagePool": ("string,omitempty", "Storage pool."),
        "system": ("string", "Storage system name."),
        "volumeName": ("string,omitempty", "Name of the volume in the storage system."),
    }),
    "ScaleSpec": ("The desired scale.", {
        "replicas": ("int32", "Desired number of replicas."),
    }),
    "ScaleStatus": ("The observed scale.", {
        "replicas": ("int32", "Actual number of replicas."),
        "selector": ("string", "Label selector of the pods."),
    }),
    "SeccompProfile": ("A seccomp profile.", {
        "localhostProfile": ("string", "Profile file on the node (type Localhost)."),
        "type": ("string", "RuntimeDefault, Unconfined or Localhost."),
    }),
    "SecretEnvSource": ("A Secret whose keys become variables.", {
        "name": ("string", "Name of the Secret."),
        "optional": ("boolean", "Allow the Secret to be missing."),
    }),
    "SecretKeySelector": ("One key of a Secret.", {
        "key": ("string", "The key."),
        "name": ("string", "Name of the Secret."),
        "optional": ("boolean", "Allow the Secret or key to be missing."),
    }),
    "SecretProjection": ("A Secret's keys in a projected volume.", {
        "items": ("[]KeyToPath,omitempty", "Keys to project and their paths."),
        "name": ("string", "Name of the Secret."),
        "optional": ("boolean", "Allow it to be missing."),
    }),
    "SecretVolumeSource": ("A Secret's keys as files.", {
        "defaultMode": ("int32", "Permission bits of the files (0644)."),
        "items": ("[]KeyToPath,omitempty", "Keys to project and their paths; all keys if empty."),
        "optional": ("boolean", "Allow the Secret or its keys to be missing."),
        "secretName": ("string,omitempty", "Name of the Secret."),
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
    "ServiceAccountTokenProjection": ("A service account token written to a file.", {
        "audience": ("string,omitempty", "Intended audience of the token."),
        "expirationSeconds": ("int64", "Requested lifetime of the token (3600)."),
        "path": ("string", "Relative path of the file."),
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
    "ServiceStatus": ("The observed state of a Service.", {
        "conditions": ("[]Condition,omitempty", "Current conditions of the service."),
        "loadBalancer": ("LoadBalancerStatus", "The load balancer, if any."),
    }),
    "SessionAffinityConfig": ("Session affinity parameters.", {
        "clientIP": ("ClientIPConfig", "ClientIP affinity parameters."),
    }),
    "SleepAction": ("A sleep.", {
        "seconds": ("int64", "Seconds to sleep."),
    }),
    "StatefulSetCondition": ("One aspect of a StatefulSet's state.", {
        "lastTransitionTime": ("Time", "When the status last changed."),
        "message": ("string,omitempty", "Human-readable detail of the last change."),
        "reason": ("string,omitempty", "Why the condition last changed (CamelCase)."),
        "status": ("string", "True, False or Unknown."),
        "type": ("string", "Type of the condition."),
    }),
    "StatefulSetOrdinals": ("How a StatefulSet numbers its replicas.", {
        "start": ("int32", "Number of the first replica (0)."),
    }),
    "StatefulSetPersistentVolumeClaimRetentionPolicy": ("What happens to the claims of a StatefulSet's pods.", {
        "whenDeleted": ("string", "Retain or Delete, when the StatefulSet is deleted."),
        "whenScaled": ("string", "Retain or Delete, on scale-down."),
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
    "StatefulSetStatus": ("The observed state of a StatefulSet.", {
        "availableReplicas": ("int32", "Pods ready for at least minReadySeconds."),
        "collisionCount": ("int32", "Hash collisions seen when naming ControllerRevisions."),
        "conditions": ("[]StatefulSetCondition,omitempty", "Latest observations of the stateful set's state."),
        "currentReplicas": ("int32,omitempty", "Pods created from the currentRevision."),
        "currentRevision": ("string,omitempty", "Revision of the pods up to currentReplicas."),
        "observedGeneration": ("int64,omitempty", "The generation last acted on by the controller."),
        "readyReplicas": ("int32,omitempty", "Pods with a Ready condition."),
        "replicas": ("int32", "Pods created by the controller."),
        "updateRevision": ("string,omitempty", "Revision of the pods being rolled out."),
        "updatedReplicas": ("int32,omitempty", "Pods created from the updateRevision."),
    }),
    "StatefulSetUpdateStrategy": ("How a StatefulSet replaces its pods.", {
        "rollingUpdate": ("RollingUpdateStatefulSetStrategy", "Parameters of a rolling update."),
        "type": ("string,omitempty", "RollingUpdate (default) or OnDelete."),
    }),
    "StorageOSVolumeSource": ("Deprecated: a StorageOS volume.", {
        "fsType": ("string,omitempty", "Filesystem type to mount (ext4, xfs...)."),
        "readOnly": ("boolean,omitempty", "Mount read-only."),
        "secretRef": ("LocalObjectReference", "Secret holding the credentials."),
        "volumeName": ("string,omitempty", "Name of the volume in the storage system."),
        "volumeNamespace": ("string,omitempty", "StorageOS namespace of the volume."),
    }),
    "Sysctl": ("A kernel parameter.", {
        "name": ("string", "Name of the parameter."),
        "value": ("string", "Value of the parameter."),
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
    "TypedLocalObjectReference": ("A reference to an object in the same namespace, with its group and kind.", {
        "apiGroup": ("string", "API group of the referent (\"\" for core)."),
        "kind": ("string", "Kind of the referent."),
        "name": ("string", "Name of the referent."),
    }),
    "TypedObjectReference": ("A reference to an object, with its group and kind.", {
        "apiGroup": ("string", "API group of the referent (\"\" for core)."),
        "kind": ("string", "Kind of the referent."),
        "name": ("string", "Name of the referent."),
        "namespace": ("string", "Namespace of the referent."),
    }),
    "Volume": ("A named volume of a pod: exactly one source besides the name.", {
        "awsElasticBlockStore": ("AWSElasticBlockStoreVolumeSource", "Deprecated: an AWS EBS disk (in-tree driver; the CSI driver replaces it)."),
        "azureDisk": ("AzureDiskVolumeSource", "Deprecated: an Azure data disk."),
        "azureFile": ("AzureFileVolumeSource", "Deprecated: an Azure File share."),
        "cephfs": ("CephFSVolumeSource", "Deprecated: a CephFS mount."),
        "cinder": ("CinderVolumeSource", "Deprecated: an OpenStack Cinder volume."),
        "configMap": ("ConfigMapVolumeSource", "A ConfigMap's keys as files."),
        "csi": ("CSIVolumeSource", "An ephemeral volume from a CSI driver."),
        "downwardAPI": ("DownwardAPIVolumeSource", "Pod fields as files."),
        "emptyDir": ("EmptyDirVolumeSource", "A temporary directory sharing the pod's lifetime."),
        "ephemeral": ("EphemeralVolumeSource", "A volume with the pod's lifetime, provisioned from a claim template."),
        "fc": ("FCVolumeSource", "A Fibre Channel disk."),
        "flexVolume": ("FlexVolumeSource", "Deprecated: a FlexVolume driver's volume."),
        "flocker": ("FlockerVolumeSource", "Deprecated: a Flocker dataset."),
        "gcePersistentDisk": ("GCEPersistentDiskVolumeSource", "Deprecated: a GCE persistent disk."),
        "gitRepo": ("GitRepoVolumeSource", "Deprecated: a git repository cloned into an empty directory."),
        "glusterfs": ("GlusterfsVolumeSource", "Deprecated: a GlusterFS mount."),
        "hostPath": ("HostPathVolumeSource", "A path on the node."),
        "image": ("ImageVolumeSource", "An OCI image or artifact, mounted read-only."),
        "iscsi": ("ISCSIVolumeSource", "An iSCSI disk."),
        "name": ("string", "Name of the volume (DNS label)."),
        "nfs": ("NFSVolumeSource", "An NFS export."),
        "persistentVolumeClaim": ("PersistentVolumeClaimVolumeSource", "A PersistentVolumeClaim."),
        "photonPersistentDisk": ("PhotonPersistentDiskVolumeSource", "Deprecated: a Photon Controller disk."),
        "portworxVolume": ("PortworxVolumeSource", "Deprecated: a Portworx volume."),
        "projected": ("ProjectedVolumeSource", "Several sources in one directory."),
        "quobyte": ("QuobyteVolumeSource", "Deprecated: a Quobyte mount."),
        "rbd": ("RBDVolumeSource", "Deprecated: a Ceph RBD image."),
        "scaleIO": ("ScaleIOVolumeSource", "Deprecated: a ScaleIO volume."),
        "secret": ("SecretVolumeSource", "A Secret's keys as files."),
        "storageos": ("StorageOSVolumeSource", "Deprecated: a StorageOS volume."),
        "vsphereVolume": ("VsphereVirtualDiskVolumeSource", "Deprecated: a vSphere VMDK volume."),
    }),
    "VolumeDevice": ("A block device of a container.", {
        "devicePath": ("string", "Path in the container."),
        "name": ("string", "Name of the claim's volume."),
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
    "VolumeMountStatus": ("The state of a volume mount.", {
        "mountPath": ("string", "Path in the container."),
        "name": ("string", "Name of the volume."),
        "readOnly": ("boolean", "Mounted read-only."),
        "recursiveReadOnly": ("string", "Whether the read-only mount is recursive."),
    }),
    "VolumeProjection": ("One source of a projected volume.", {
        "clusterTrustBundle": ("ClusterTrustBundleProjection", "Certificates of ClusterTrustBundle objects."),
        "configMap": ("ConfigMapProjection", "A ConfigMap's keys."),
        "downwardAPI": ("DownwardAPIProjection", "Fields of the pod."),
        "secret": ("SecretProjection", "A Secret's keys."),
        "serviceAccountToken": ("ServiceAccountTokenProjection", "A service account token."),
    }),
    "VolumeResourceRequirements": ("Storage requests and limits.", {
        "limits": ("map[Quantity],omitempty", "Maximum storage allowed."),
        "requests": ("map[Quantity],omitempty", "Minimum storage required."),
    }),
    "VsphereVirtualDiskVolumeSource": ("Deprecated: a vSphere VMDK volume.", {
        "fsType": ("string,omitempty", "Filesystem type to mount (ext4, xfs...)."),
        "storagePolicyID": ("string,omitempty", "ID of the storage policy."),
        "storagePolicyName": ("string,omitempty", "Name of the storage policy."),
        "volumePath": ("string", "Path of the VMDK."),
    }),
    "WeightedPodAffinityTerm": ("A weighted pod affinity term.", {
        "podAffinityTerm": ("PodAffinityTerm", "The term."),
        "weight": ("int32", "Weight 1-100."),
    }),
    "WindowsSecurityContextOptions": ("Windows-specific security settings.", {
        "gmsaCredentialSpec": ("string", "Contents of the GMSA credential spec."),
        "gmsaCredentialSpecName": ("string", "Name of the GMSA credential spec."),
        "hostProcess": ("boolean", "Run as a Windows host process."),
        "runAsUserName": ("string", "User name the entrypoint runs as."),
    }),
}



def _add_kind_types() -> None:
    """The named structs the registry's kinds bring (``KindSchema.types``: the API group
    modules of :mod:`controlplane.api.groups`) join :data:`TYPES`; the first definition
    of a name wins."""
    for r in REGISTRY:
        if r.schema is not None:
            for name, t in r.schema.types.items():
                TYPES.setdefault(name, (t[0], dict(t[1])))


_add_kind_types()

#: kinds that are request or response bodies of subresources and options, not served
#: resources (their registry entries carry the served kinds' schemas): Scale
#: (autoscaling/v1, ``*/scale``), Eviction (policy/v1, ``pods/NAME/eviction``) and
#: DeleteOptions (the body of a DELETE)
BODY_KINDS: dict[str, KindSchema] = {
    "Scale": KindSchema("Scale is the scale subresource of a workload (autoscaling/v1).", {
        "spec": ("ScaleSpec", "Desired scale."), "status": ("ScaleStatus", "Observed scale.")}),
    "Eviction": KindSchema("Eviction evicts a pod (policy/v1, pods/NAME/eviction).", {
        "deleteOptions": ("DeleteOptions", "Options of the deletion.")}),
    "TokenRequest": authentication.TOKENREQUEST_SCHEMA,
    "DeleteOptions": KindSchema("DeleteOptions are the options of a DELETE.", {
        f: t for f, t in TYPES["DeleteOptions"][1].items() if f not in ("kind", "apiVersion")}),
}


_struct_cache: tuple[int, dict[str, tuple[str, Fields]]] | None = None


def struct_types() -> dict[str, tuple[str, Fields]]:
    """Every named struct type: :data:`TYPES` (the built-in entries' group types joined it
    at import, :func:`_add_kind_types`) plus those of kinds added to the registry at run
    time (:attr:`KindSchema.types`), memoized per ``REGISTRY.generation``."""
    global _struct_cache
    gen = REGISTRY.generation
    if _struct_cache is not None and _struct_cache[0] == gen:
        return _struct_cache[1]
    out: dict[str, tuple[str, Fields]] = dict(TYPES)
    for r in REGISTRY:
        if r.schema is not None:
            for name, t in r.schema.types.items():
                out.setdefault(name, (t[0], dict(t[1])))
    _struct_cache = (gen, out)
    return out


def kind_fields(kind: KindKey, api_version: str | None = None) -> KindSchema | None:
    """The schema of ``kind`` (a kind name or a registry entry): its registry entry's
    (``REGISTRY.of_kind(kind).schema``, or the entry at ``api_version`` when given and served:
    a kind served at several versions has one schema per version), else one of
    :data:`BODY_KINDS`; None for a kind with neither (e.g. one added at run time without a
    schema)."""
    r = REGISTRY.of_kind(kind)
    if api_version is not None and isinstance(kind, str):
        for e in REGISTRY:
            if e.kind == kind and e.api_version == api_version:
                r = e
                break
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
    if typ in struct_types():
        return {"allOf": [{"$ref": f"#/components/schemas/{prefix}{typ}"}], "default": {}, "description": desc}
    return {"type": typ, "description": desc}


def component_schemas(prefix: str = "io.k8s.controlplane.") -> dict[str, dict[str, Any]]:
    """The named types as OpenAPI v3 ``components.schemas`` (``prefix`` + type name)."""
    return {prefix + name: {"type": "object", "description": desc,
                            "properties": {f: _prop(f, t, d, prefix, name) for f, (t, d) in fields.items()}}
            for name, (desc, fields) in struct_types().items()}


def kind_schema(kind: str, api_version: str, prefix: str = "io.k8s.controlplane.") -> dict[str, Any]:
    """The top-level schema of ``kind`` (its description and fields, referring to the named types)."""
    ks = kind_fields(kind, api_version)
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
