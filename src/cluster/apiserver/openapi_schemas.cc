#include "cluster/apiserver/openapi_schemas.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string_view>

#include "common/ascii.h"

namespace steward::cluster {

namespace {

// The definitions, in a compact notation parsed once at start-up:
//
//   = <short name> | <description>           starts a definition
//     <field> <type>[!] | <description>       a property; '!' marks it required
//     &object                                 apiVersion, kind and metadata (ObjectMeta)
//     &list <short item name>                 apiVersion, items, kind and metadata (ListMeta)
//
// A short name is <prefix>/<Name> (prefixes in kPrefixes). A type is "string", "integer"
// (int32), "int64", "boolean", "number", "object" (free-form), "map:<string|Quantity|byte>",
// a short name or Quantity/IntOrString/Time/MicroTime, optionally preceded by "[]" and
// followed by {modifiers}: "merge:<key>", "merge", "retainKeys", "merge,retainKeys:<key>" (the
// strategic-merge-patch strategy and key, as in the Go struct tags), "atomic", "set" or
// "map:<k1>,<k2>" (x-kubernetes-list-type and list-map-keys), joined by ';'.
// An ~80 KB literal: over the 64 KB the standard asks compilers to support; GCC and clang take it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
constexpr std::string_view kSchemaText = R"(
= meta/ObjectMeta | ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.
  annotations map:string | Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata. They are not queryable.
  creationTimestamp Time | The server time when this object was created, in RFC 3339 form and in UTC. Populated by the system. Read-only.
  deletionGracePeriodSeconds int64 | Number of seconds allowed for this object to gracefully terminate before it will be removed from the system. Only set when deletionTimestamp is also set. Read-only.
  deletionTimestamp Time | RFC 3339 date and time at which this resource will be deleted. Set by the server when a graceful deletion is requested by the user. Read-only.
  finalizers []string{merge;set} | Must be empty before the object is deleted from the registry. Each entry is an identifier for the responsible component that will remove the entry from the list.
  generateName string | An optional prefix, used by the server, to generate a unique name only if the name field has not been provided.
  generation int64 | A sequence number representing a specific generation of the desired state. Populated by the system. Read-only.
  labels map:string | Map of string keys and values that can be used to organize and categorize (scope and select) objects.
  managedFields []meta/ManagedFieldsEntry{atomic} | Maps workflow-id and version to the set of fields that are managed by that workflow.
  name string | Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Cannot be updated.
  namespace string | Namespace defines the space within which each name must be unique. An empty namespace is equivalent to the "default" namespace. Cannot be updated.
  ownerReferences []meta/OwnerReference{merge:uid;map:uid} | List of objects depended by this object. If ALL objects in the list have been deleted, this object will be garbage collected.
  resourceVersion string | An opaque value that represents the internal version of this object that can be used by clients to determine when objects have changed. Populated by the system. Read-only.
  selfLink string | Deprecated: selfLink is a legacy read-only field that is no longer populated by the system.
  uid string | The unique in time and space value for this object. Populated by the system. Read-only.

= meta/ListMeta | ListMeta describes metadata that synthetic resources must have, including lists and various status objects.
  continue string | Set if the user set a limit on the number of items returned, and indicates that the server has more data available.
  remainingItemCount int64 | The number of subsequent items in the list which are not included in this list response.
  resourceVersion string | The server's internal version of this object; may be used to start a watch.
  selfLink string | Deprecated: no longer populated by the system.

= meta/ManagedFieldsEntry | ManagedFieldsEntry is a workflow-id, a FieldSet and the group version of the resource that the fieldset applies to.
  apiVersion string | The version of this resource that this field set applies to.
  fieldsType string | The discriminator for the different fields format and version. The only valid value is "FieldsV1".
  fieldsV1 meta/FieldsV1 | The first JSON version format of the fields set.
  manager string | An identifier of the workflow managing these fields.
  operation string | The type of operation which lead to this ManagedFieldsEntry being created: Apply or Update.
  subresource string | The name of the subresource used to update that object, or empty for the main resource.
  time Time | The timestamp of when the ManagedFields entry was added.

= meta/OwnerReference | OwnerReference contains enough information to let you identify an owning object. An owning object must be in the same namespace as the dependent, or be cluster-scoped.
  apiVersion string! | API version of the referent.
  blockOwnerDeletion boolean | If true, and the owner has the "foregroundDeletion" finalizer, the owner cannot be deleted from the key-value store until this reference is removed.
  controller boolean | If true, this reference points to the managing controller.
  kind string! | Kind of the referent.
  name string! | Name of the referent.
  uid string! | UID of the referent.

= meta/LabelSelector | A label selector is a label query over a set of resources. The result of matchLabels and matchExpressions are ANDed. An empty label selector matches all objects. A null label selector matches no objects.
  matchExpressions []meta/LabelSelectorRequirement{atomic} | A list of label selector requirements. The requirements are ANDed.
  matchLabels map:string | A map of {key,value} pairs. A single {key,value} is equivalent to an element of matchExpressions whose key field is "key", the operator is "In", and the values array contains only "value".

= meta/LabelSelectorRequirement | A selector that contains values, a key, and an operator that relates the key and values.
  key string! | The label key that the selector applies to.
  operator string! | Represents a key's relationship to a set of values: In, NotIn, Exists or DoesNotExist.
  values []string{atomic} | An array of string values. Must be non-empty for In and NotIn, empty for Exists and DoesNotExist.

= meta/Condition | Condition contains details for one aspect of the current state of this API Resource.
  lastTransitionTime Time! | The last time the condition transitioned from one status to another.
  message string! | A human readable message indicating details about the transition.
  observedGeneration int64 | The .metadata.generation that the condition was set based upon.
  reason string! | A programmatic identifier indicating the reason for the condition's last transition, in CamelCase.
  status string! | Status of the condition, one of True, False, Unknown.
  type string! | Type of condition in CamelCase or in foo.example.com/CamelCase.

= meta/Status | Status is a return value for calls that don't return other objects.
  apiVersion string | APIVersion defines the versioned schema of this representation of an object.
  code integer | Suggested HTTP return code for this status, 0 if not set.
  details meta/StatusDetails | Extended data associated with the reason.
  kind string | Kind is a string value representing the REST resource this object represents.
  message string | A human-readable description of the status of this operation.
  metadata meta/ListMeta | Standard list metadata.
  reason string | A machine-readable description of why this operation is in the "Failure" status.
  status string | Status of the operation. One of: "Success" or "Failure".

= meta/StatusDetails | StatusDetails is a set of additional properties that may be set by the server to provide additional information about a response.
  causes []meta/StatusCause{atomic} | The Causes array includes more details associated with the StatusReason failure.
  group string | The group attribute of the resource associated with the status StatusReason.
  kind string | The kind attribute of the resource associated with the status StatusReason.
  name string | The name attribute of the resource associated with the status StatusReason.
  retryAfterSeconds integer | If specified, the time in seconds before the operation should be retried.
  uid string | UID of the resource.

= meta/StatusCause | StatusCause provides more information about an api.Status failure, including cases when multiple errors are encountered.
  field string | The field of the resource that has caused this error, as named by its JSON serialization.
  message string | A human-readable description of the cause of the error.
  reason string | A machine-readable description of the cause of the error.

= meta/DeleteOptions | DeleteOptions may be provided when deleting an API object.
  apiVersion string | APIVersion defines the versioned schema of this representation of an object.
  dryRun []string{atomic} | When present, indicates that modifications should not be persisted. Valid values are: All.
  gracePeriodSeconds int64 | The duration in seconds before the object should be deleted. Zero means delete immediately.
  ignoreStoreReadErrorWithClusterBreakingPotential boolean | If set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error.
  kind string | Kind is a string value representing the REST resource this object represents.
  orphanDependents boolean | Deprecated: please use the PropagationPolicy.
  preconditions meta/Preconditions | Must be fulfilled before a deletion is carried out. If not possible, a 409 Conflict status will be returned.
  propagationPolicy string | Whether and how garbage collection will be performed: Orphan, Background or Foreground.

= meta/Preconditions | Preconditions must be fulfilled before an operation (update, delete, etc.) is carried out.
  resourceVersion string | Specifies the target ResourceVersion.
  uid string | Specifies the target UID.

= meta/WatchEvent | Event represents a single event to a watched resource.
  object runtime/RawExtension! | Object is: the object of the event (ADDED, MODIFIED, DELETED), a Status (ERROR) or an object with only its resourceVersion (BOOKMARK).
  type string! | ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.

= core/Namespace | Namespace provides a scope for Names. Use of multiple namespaces is optional.
  &object
  spec core/NamespaceSpec | Spec defines the behavior of the Namespace.
  status core/NamespaceStatus | Status describes the current status of a Namespace.

= core/NamespaceList | NamespaceList is a list of Namespaces.
  &list core/Namespace

= core/NamespaceSpec | NamespaceSpec describes the attributes on a Namespace.
  finalizers []string{atomic} | Finalizers is an opaque list of values that must be empty to permanently remove object from storage.

= core/NamespaceStatus | NamespaceStatus is information about the current status of a Namespace.
  conditions []core/NamespaceCondition{merge:type;map:type} | Represents the latest available observations of a namespace's current state.
  phase string | Phase is the current lifecycle phase of the namespace: Active or Terminating.

= core/NamespaceCondition | NamespaceCondition contains details about state of namespace.
  lastTransitionTime Time | Last time the condition transitioned from one status to another.
  message string | Human-readable message indicating details about last transition.
  reason string | Unique, one-word, CamelCase reason for the condition's last transition.
  status string! | Status of the condition, one of True, False, Unknown.
  type string! | Type of namespace controller condition.

= core/Pod | Pod is a collection of containers that can run on a host. This resource is created by clients and scheduled onto hosts.
  &object
  spec core/PodSpec | Specification of the desired behavior of the pod.
  status core/PodStatus | Most recently observed status of the pod. Populated by the system. Read-only.

= core/PodList | PodList is a list of Pods.
  &list core/Pod

= core/PodTemplateSpec | PodTemplateSpec describes the data a pod should have when created from a template.
  metadata meta/ObjectMeta | Standard object's metadata.
  spec core/PodSpec | Specification of the desired behavior of the pod.

= core/PodSpec | PodSpec is a description of a pod.
  activeDeadlineSeconds int64 | Optional duration in seconds the pod may be active on the node relative to StartTime before the system will actively try to mark it failed and kill associated containers.
  affinity core/Affinity | If specified, the pod's scheduling constraints.
  automountServiceAccountToken boolean | Indicates whether a service account token should be automatically mounted.
  containers []core/Container{merge:name;map:name}! | List of containers belonging to the pod. There must be at least one container in a Pod. Cannot be updated.
  dnsConfig core/PodDNSConfig | Specifies the DNS parameters of a pod, merged into the configuration generated from dnsPolicy.
  dnsPolicy string | Set DNS policy for the pod: ClusterFirstWithHostNet, ClusterFirst, Default or None. Defaults to "ClusterFirst".
  enableServiceLinks boolean | Indicates whether information about services should be injected into pod's environment variables. Defaults to true.
  hostAliases []core/HostAlias{merge:ip;map:ip} | An optional list of hosts and IPs that will be injected into the pod's hosts file if specified.
  hostIPC boolean | Use the host's ipc namespace. Optional: Default to false.
  hostNetwork boolean | Host networking requested for this pod. Default to false.
  hostPID boolean | Use the host's pid namespace. Optional: Default to false.
  hostUsers boolean | Use the host's user namespace. Optional: Default to true.
  hostname string | Specifies the hostname of the Pod. If not specified, the pod's hostname will be set to a system-defined value.
  imagePullSecrets []core/LocalObjectReference{merge:name;map:name} | An optional list of references to secrets in the same namespace to use for pulling any of the images used by this PodSpec.
  initContainers []core/Container{merge:name;map:name} | List of initialization containers belonging to the pod, run in order before the app containers start.
  nodeName string | Indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling.
  nodeSelector map:string | A selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node.
  os core/PodOS | Specifies the OS of the containers in the pod: linux or windows.
  overhead map:Quantity | Overhead represents the resource overhead associated with running a pod for a given RuntimeClass.
  preemptionPolicy string | PreemptionPolicy is the Policy for preempting pods with lower priority: Never or PreemptLowerPriority.
  priority integer | The priority value. Various system components use this field to find the priority of the pod.
  priorityClassName string | If specified, indicates the pod's priority.
  readinessGates []core/PodReadinessGate{atomic} | If specified, all readiness gates will be evaluated for pod readiness.
  resourceClaims []core/PodResourceClaim{merge,retainKeys:name;map:name} | ResourceClaims defines which ResourceClaims must be allocated and reserved before the Pod is allowed to start.
  restartPolicy string | Restart policy for all containers within the pod: Always, OnFailure or Never. Default to Always.
  runtimeClassName string | The name of a RuntimeClass object in the node.k8s.io group, which should be used to run this pod.
  schedulerName string | If specified, the pod will be dispatched by specified scheduler.
  schedulingGates []core/PodSchedulingGate{merge:name;map:name} | A list of opaque values that, if specified, will block scheduling the pod.
  securityContext core/PodSecurityContext | Holds pod-level security attributes and common container settings.
  serviceAccount string | Deprecated alias for serviceAccountName.
  serviceAccountName string | The name of the ServiceAccount to use to run this pod.
  setHostnameAsFQDN boolean | If true the pod's hostname will be configured as the pod's FQDN, rather than the leaf name (the default).
  shareProcessNamespace boolean | Share a single process namespace between all of the containers in a pod.
  subdomain string | If specified, the fully qualified Pod hostname will be "<hostname>.<subdomain>.<pod namespace>.svc.<cluster domain>".
  terminationGracePeriodSeconds int64 | Optional duration in seconds the pod needs to terminate gracefully. Defaults to 30 seconds.
  tolerations []core/Toleration{atomic} | If specified, the pod's tolerations.
  topologySpreadConstraints []core/TopologySpreadConstraint{merge:topologyKey;map:topologyKey,whenUnsatisfiable} | Describes how a group of pods ought to spread across topology domains.
  volumes []core/Volume{merge,retainKeys:name;map:name} | List of volumes that can be mounted by containers belonging to the pod.

= core/PodDNSConfig | PodDNSConfig defines the DNS parameters of a pod in addition to those generated from DNSPolicy.
  nameservers []string{atomic} | A list of DNS name server IP addresses.
  options []core/PodDNSConfigOption{atomic} | A list of DNS resolver options.
  searches []string{atomic} | A list of DNS search domains for host-name lookup.

= core/PodDNSConfigOption | PodDNSConfigOption defines DNS resolver options of a pod.
  name string | Name of the option.
  value string | Value of the option.

= core/PodOS | PodOS defines the OS parameters of a pod.
  name string! | The name of the operating system: linux or windows.

= core/PodResourceClaim | PodResourceClaim references exactly one ResourceClaim.
  name string! | Uniquely identifies this resource claim inside the pod.
  resourceClaimName string | The name of a ResourceClaim object in the same namespace as this pod.
  resourceClaimTemplateName string | The name of a ResourceClaimTemplate object in the same namespace as this pod.

= core/PodSchedulingGate | PodSchedulingGate is associated to a Pod to guard its scheduling.
  name string! | Name of the scheduling gate. Each scheduling gate must have a unique name field.

= core/Container | A single application container that you want to run within a pod.
  args []string{atomic} | Arguments to the entrypoint. The container image's CMD is used if this is not provided.
  command []string{atomic} | Entrypoint array. Not executed within a shell. The container image's ENTRYPOINT is used if this is not provided.
  env []core/EnvVar{merge:name;map:name} | List of environment variables to set in the container. Cannot be updated.
  envFrom []core/EnvFromSource{atomic} | List of sources to populate environment variables in the container.
  image string | Container image name.
  imagePullPolicy string | Image pull policy: Always, Never, IfNotPresent. Defaults to Always if :latest tag is specified, or IfNotPresent otherwise.
  lifecycle core/Lifecycle | Actions that the management system should take in response to container lifecycle events.
  livenessProbe core/Probe | Periodic probe of container liveness. Container will be restarted if the probe fails.
  name string! | Name of the container specified as a DNS_LABEL. Each container in a pod must have a unique name. Cannot be updated.
  ports []core/ContainerPort{merge:containerPort;map:containerPort,protocol} | List of ports to expose from the container.
  readinessProbe core/Probe | Periodic probe of container service readiness. Container will be removed from service endpoints if the probe fails.
  resizePolicy []core/ContainerResizePolicy{atomic} | Resources resize policy for the container.
  resources core/ResourceRequirements | Compute Resources required by this container.
  restartPolicy string | RestartPolicy defines the restart behavior of individual containers in a pod. Only "Always" is allowed, for init containers (sidecars).
  securityContext core/SecurityContext | SecurityContext defines the security options the container should be run with.
  startupProbe core/Probe | StartupProbe indicates that the Pod has successfully initialized. No other probe runs until it succeeds.
  stdin boolean | Whether this container should allocate a buffer for stdin in the container runtime.
  stdinOnce boolean | Whether the container runtime should close the stdin channel after it has been opened by a single attach.
  terminationMessagePath string | Path at which the file to which the container's termination message will be written is mounted.
  terminationMessagePolicy string | Indicate how the termination message should be populated: File or FallbackToLogsOnError.
  tty boolean | Whether this container should allocate a TTY for itself.
  volumeDevices []core/VolumeDevice{merge:devicePath;map:devicePath} | volumeDevices is the list of block devices to be used by the container.
  volumeMounts []core/VolumeMount{merge:mountPath;map:mountPath} | Pod volumes to mount into the container's filesystem. Cannot be updated.
  workingDir string | Container's working directory.

= core/ContainerPort | ContainerPort represents a network port in a single container.
  containerPort integer! | Number of port to expose on the pod's IP address. This must be a valid port number, 0 < x < 65536.
  hostIP string | What host IP to bind the external port to.
  hostPort integer | Number of port to expose on the host.
  name string | If specified, this must be an IANA_SVC_NAME and unique within the pod. Each named port in a pod must have a unique name.
  protocol string | Protocol for port. Must be UDP, TCP, or SCTP. Defaults to "TCP".

= core/ContainerResizePolicy | ContainerResizePolicy represents resource resize policy for the container.
  resourceName string! | Name of the resource to which this resource resize policy applies: cpu or memory.
  restartPolicy string! | Restart policy to apply when specified resource is resized: NotRequired or RestartContainer.

= core/EnvVar | EnvVar represents an environment variable present in a Container.
  name string! | Name of the environment variable.
  value string | Variable references $(VAR_NAME) are expanded using the previously defined environment variables in the container. Defaults to "".
  valueFrom core/EnvVarSource | Source for the environment variable's value. Cannot be used if value is not empty.

= core/EnvVarSource | EnvVarSource represents a source for the value of an EnvVar.
  configMapKeyRef core/ConfigMapKeySelector | Selects a key of a ConfigMap.
  fieldRef core/ObjectFieldSelector | Selects a field of the pod: metadata.name, metadata.namespace, metadata.labels['<KEY>'], metadata.annotations['<KEY>'], spec.nodeName, spec.serviceAccountName, status.hostIP, status.podIP, status.podIPs.
  resourceFieldRef core/ResourceFieldSelector | Selects a resource of the container: only resources limits and requests are currently supported.
  secretKeyRef core/SecretKeySelector | Selects a key of a secret in the pod's namespace.

= core/ConfigMapKeySelector | Selects a key from a ConfigMap.
  key string! | The key to select.
  name string | Name of the referent.
  optional boolean | Specify whether the ConfigMap or its key must be defined.

= core/SecretKeySelector | SecretKeySelector selects a key of a Secret.
  key string! | The key of the secret to select from. Must be a valid secret key.
  name string | Name of the referent.
  optional boolean | Specify whether the Secret or its key must be defined.

= core/ObjectFieldSelector | ObjectFieldSelector selects an APIVersioned field of an object.
  apiVersion string | Version of the schema the FieldPath is written in terms of, defaults to "v1".
  fieldPath string! | Path of the field to select in the specified API version.

= core/ResourceFieldSelector | ResourceFieldSelector represents container resources (cpu, memory) and their output format.
  containerName string | Container name: required for volumes, optional for env vars.
  divisor Quantity | Specifies the output format of the exposed resources, defaults to "1".
  resource string! | Required: resource to select.

= core/EnvFromSource | EnvFromSource represents the source of a set of ConfigMaps or Secrets.
  configMapRef core/ConfigMapEnvSource | The ConfigMap to select from.
  prefix string | An optional identifier to prepend to each key in the ConfigMap or Secret.
  secretRef core/SecretEnvSource | The Secret to select from.

= core/ConfigMapEnvSource | ConfigMapEnvSource selects a ConfigMap to populate the environment variables with.
  name string | Name of the referent.
  optional boolean | Specify whether the ConfigMap must be defined.

= core/SecretEnvSource | SecretEnvSource selects a Secret to populate the environment variables with.
  name string | Name of the referent.
  optional boolean | Specify whether the Secret must be defined.

= core/ResourceRequirements | ResourceRequirements describes the compute resource requirements.
  claims []core/ResourceClaim{map:name} | Claims lists the names of resources, defined in spec.resourceClaims, that are used by this container.
  limits map:Quantity | Limits describes the maximum amount of compute resources allowed.
  requests map:Quantity | Requests describes the minimum amount of compute resources required. Defaults to limits if omitted.

= core/ResourceClaim | ResourceClaim references one entry in PodSpec.ResourceClaims.
  name string! | Name must match the name of one entry in pod.spec.resourceClaims of the Pod where this field is used.
  request string | Request is the name chosen for a request in the referenced claim.

= core/Lifecycle | Lifecycle describes actions that the management system should take in response to container lifecycle events.
  postStart core/LifecycleHandler | Called immediately after a container is created.
  preStop core/LifecycleHandler | Called immediately before a container is terminated due to an API request or management event.

= core/LifecycleHandler | LifecycleHandler defines a specific action that should be taken in a lifecycle hook. One and only one of the fields, except TCPSocket, must be specified.
  exec core/ExecAction | Exec specifies a command to execute in the container.
  httpGet core/HTTPGetAction | HTTPGet specifies an HTTP GET request to perform.
  sleep core/SleepAction | Sleep represents a duration that the container should sleep.
  tcpSocket core/TCPSocketAction | Deprecated. TCPSocket is not supported as a LifecycleHandler and kept for backward compatibility.

= core/SleepAction | SleepAction describes a "sleep" action.
  seconds int64! | Seconds is the number of seconds to sleep.

= core/Probe | Probe describes a health check to be performed against a container to determine whether it is alive or ready to receive traffic.
  exec core/ExecAction | Exec specifies a command to execute in the container.
  failureThreshold integer | Minimum consecutive failures for the probe to be considered failed after having succeeded. Defaults to 3.
  grpc core/GRPCAction | GRPC specifies a GRPC HealthCheckRequest.
  httpGet core/HTTPGetAction | HTTPGet specifies an HTTP GET request to perform.
  initialDelaySeconds integer | Number of seconds after the container has started before liveness probes are initiated.
  periodSeconds integer | How often (in seconds) to perform the probe. Default to 10 seconds.
  successThreshold integer | Minimum consecutive successes for the probe to be considered successful after having failed. Defaults to 1.
  tcpSocket core/TCPSocketAction | TCPSocket specifies a connection to a TCP port.
  terminationGracePeriodSeconds int64 | Optional duration in seconds the pod needs to terminate gracefully upon probe failure.
  timeoutSeconds integer | Number of seconds after which the probe times out. Defaults to 1 second.

= core/ExecAction | ExecAction describes a "run in container" action.
  command []string{atomic} | Command is the command line to execute inside the container.

= core/HTTPGetAction | HTTPGetAction describes an action based on HTTP Get requests.
  host string | Host name to connect to, defaults to the pod IP.
  httpHeaders []core/HTTPHeader{atomic} | Custom headers to set in the request.
  path string | Path to access on the HTTP server.
  port IntOrString! | Name or number of the port to access on the container.
  scheme string | Scheme to use for connecting to the host: HTTP or HTTPS. Defaults to HTTP.

= core/HTTPHeader | HTTPHeader describes a custom header to be used in HTTP probes.
  name string! | The header field name.
  value string! | The header field value.

= core/TCPSocketAction | TCPSocketAction describes an action based on opening a socket.
  host string | Optional: Host name to connect to, defaults to the pod IP.
  port IntOrString! | Number or name of the port to access on the container.

= core/GRPCAction | GRPCAction specifies an action involving a GRPC service.
  port integer! | Port number of the gRPC service.
  service string | Service is the name of the service to place in the gRPC HealthCheckRequest.

= core/SecurityContext | SecurityContext holds security configuration that will be applied to a container.
  allowPrivilegeEscalation boolean | Controls whether a process can gain more privileges than its parent process.
  appArmorProfile core/AppArmorProfile | The AppArmor options to use by this container.
  capabilities core/Capabilities | The capabilities to add/drop when running containers.
  privileged boolean | Run container in privileged mode. Defaults to false.
  procMount string | The type of proc mount to use for the containers: Default or Unmasked.
  readOnlyRootFilesystem boolean | Whether this container has a read-only root filesystem. Default is false.
  runAsGroup int64 | The GID to run the entrypoint of the container process.
  runAsNonRoot boolean | Indicates that the container must run as a non-root user.
  runAsUser int64 | The UID to run the entrypoint of the container process.
  seLinuxOptions core/SELinuxOptions | The SELinux context to be applied to the container.
  seccompProfile core/SeccompProfile | The seccomp options to use by this container.

= core/Capabilities | Adds and removes POSIX capabilities from running containers.
  add []string{atomic} | Added capabilities.
  drop []string{atomic} | Removed capabilities.

= core/PodSecurityContext | PodSecurityContext holds pod-level security attributes and common container settings.
  appArmorProfile core/AppArmorProfile | The AppArmor options to use by the containers in this pod.
  fsGroup int64 | A special supplemental group that applies to all containers in a pod.
  fsGroupChangePolicy string | Defines behavior of changing ownership and permission of the volume before being exposed inside Pod: OnRootMismatch or Always.
  runAsGroup int64 | The GID to run the entrypoint of the container process.
  runAsNonRoot boolean | Indicates that the container must run as a non-root user.
  runAsUser int64 | The UID to run the entrypoint of the container process.
  seLinuxOptions core/SELinuxOptions | The SELinux context to be applied to all containers.
  seccompProfile core/SeccompProfile | The seccomp options to use by the containers in this pod.
  supplementalGroups []int64{atomic} | A list of groups applied to the first process run in each container, in addition to the container's primary GID.
  supplementalGroupsPolicy string | Defines how supplemental groups of the first container processes are calculated: Merge or Strict.
  sysctls []core/Sysctl{atomic} | Sysctls hold a list of namespaced sysctls used for the pod.

= core/SeccompProfile | SeccompProfile defines a pod/container's seccomp profile settings.
  localhostProfile string | A profile defined in a file on the node should be used.
  type string! | Which kind of seccomp profile will be applied: Localhost, RuntimeDefault or Unconfined.

= core/AppArmorProfile | AppArmorProfile defines a pod or container's AppArmor settings.
  localhostProfile string | A profile loaded on the node that should be used.
  type string! | Which kind of AppArmor profile will be applied: Localhost, RuntimeDefault or Unconfined.

= core/SELinuxOptions | SELinuxOptions are the labels to be applied to the container.
  level string | SELinux level label that applies to the container.
  role string | SELinux role label that applies to the container.
  type string | SELinux type label that applies to the container.
  user string | SELinux user label that applies to the container.

= core/Sysctl | Sysctl defines a kernel parameter to be set.
  name string! | Name of a property to set.
  value string! | Value of a property to set.

= core/Toleration | The pod this Toleration is attached to tolerates any taint that matches the triple <key,value,effect> using the matching operator <operator>.
  effect string | Effect indicates the taint effect to match: NoSchedule, PreferNoSchedule or NoExecute. Empty means match all taint effects.
  key string | Key is the taint key that the toleration applies to. Empty means match all taint keys.
  operator string | Operator represents a key's relationship to the value: Exists or Equal. Defaults to Equal.
  tolerationSeconds int64 | The period of time the toleration (which must be of effect NoExecute) tolerates the taint.
  value string | Value is the taint value the toleration matches to.

= core/LocalObjectReference | LocalObjectReference contains enough information to let you locate the referenced object inside the same namespace.
  name string | Name of the referent.

= core/PodReadinessGate | PodReadinessGate contains the reference to a pod condition.
  conditionType string! | ConditionType refers to a condition in the pod's condition list with matching type.

= core/HostAlias | HostAlias holds the mapping between IP and hostnames that will be injected as an entry in the pod's hosts file.
  hostnames []string{atomic} | Hostnames for the above IP address.
  ip string! | IP address of the host file entry.

= core/TopologySpreadConstraint | TopologySpreadConstraint specifies how to spread matching pods among the given topology.
  labelSelector meta/LabelSelector | Used to find matching pods.
  matchLabelKeys []string{atomic} | A set of pod label keys to select the pods over which spreading will be calculated.
  maxSkew integer! | Describes the degree to which pods may be unevenly distributed.
  minDomains integer | Indicates a minimum number of eligible domains.
  nodeAffinityPolicy string | Indicates how we will treat the pod's nodeAffinity/nodeSelector when calculating pod topology spread skew: Honor or Ignore.
  nodeTaintsPolicy string | Indicates how we will treat node taints when calculating pod topology spread skew: Honor or Ignore.
  topologyKey string! | The key of node labels. Nodes that have a label with this key and identical values are considered to be in the same topology.
  whenUnsatisfiable string! | Indicates how to deal with a pod if it doesn't satisfy the spread constraint: DoNotSchedule or ScheduleAnyway.

= core/Affinity | Affinity is a group of affinity scheduling rules.
  nodeAffinity core/NodeAffinity | Describes node affinity scheduling rules for the pod.
  podAffinity core/PodAffinity | Describes pod affinity scheduling rules.
  podAntiAffinity core/PodAntiAffinity | Describes pod anti-affinity scheduling rules.

= core/NodeAffinity | Node affinity is a group of node affinity scheduling rules.
  preferredDuringSchedulingIgnoredDuringExecution []core/PreferredSchedulingTerm{atomic} | The scheduler will prefer to schedule pods to nodes that satisfy the affinity expressions specified by this field, but it may choose a node that violates one or more of the expressions.
  requiredDuringSchedulingIgnoredDuringExecution core/NodeSelector | If the affinity requirements specified by this field are not met at scheduling time, the pod will not be scheduled onto the node.

= core/NodeSelector | A node selector represents the union of the results of one or more label queries over a set of nodes.
  nodeSelectorTerms []core/NodeSelectorTerm{atomic}! | Required. A list of node selector terms. The terms are ORed.

= core/NodeSelectorTerm | A null or empty node selector term matches no objects. The requirements of them are ANDed.
  matchExpressions []core/NodeSelectorRequirement{atomic} | A list of node selector requirements by node's labels.
  matchFields []core/NodeSelectorRequirement{atomic} | A list of node selector requirements by node's fields.

= core/NodeSelectorRequirement | A node selector requirement is a selector that contains values, a key, and an operator that relates the key and values.
  key string! | The label key that the selector applies to.
  operator string! | Represents a key's relationship to a set of values: In, NotIn, Exists, DoesNotExist, Gt and Lt.
  values []string{atomic} | An array of string values.

= core/PreferredSchedulingTerm | An empty preferred scheduling term matches all objects with implicit weight 0.
  preference core/NodeSelectorTerm! | A node selector term, associated with the corresponding weight.
  weight integer! | Weight associated with matching the corresponding nodeSelectorTerm, in the range 1-100.

= core/PodAffinity | Pod affinity is a group of inter pod affinity scheduling rules.
  preferredDuringSchedulingIgnoredDuringExecution []core/WeightedPodAffinityTerm{atomic} | The scheduler will prefer to schedule pods to nodes that satisfy the affinity expressions specified by this field.
  requiredDuringSchedulingIgnoredDuringExecution []core/PodAffinityTerm{atomic} | If the affinity requirements specified by this field are not met at scheduling time, the pod will not be scheduled onto the node.

= core/PodAntiAffinity | Pod anti affinity is a group of inter pod anti affinity scheduling rules.
  preferredDuringSchedulingIgnoredDuringExecution []core/WeightedPodAffinityTerm{atomic} | The scheduler will prefer to schedule pods to nodes that satisfy the anti-affinity expressions specified by this field.
  requiredDuringSchedulingIgnoredDuringExecution []core/PodAffinityTerm{atomic} | If the anti-affinity requirements specified by this field are not met at scheduling time, the pod will not be scheduled onto the node.

= core/PodAffinityTerm | Defines a set of pods that this pod should be co-located (affinity) or not co-located (anti-affinity) with.
  labelSelector meta/LabelSelector | A label query over a set of resources, in this case pods.
  matchLabelKeys []string{atomic} | A set of pod label keys to select which pods will be taken into consideration.
  mismatchLabelKeys []string{atomic} | A set of pod label keys to select which pods will be taken into consideration.
  namespaceSelector meta/LabelSelector | A label query over the set of namespaces that the term applies to.
  namespaces []string{atomic} | A static list of namespace names that the term applies to.
  topologyKey string! | Co-located is defined as running on a node whose value of the label with key topologyKey matches that of any node on which any of the selected pods is running.

= core/WeightedPodAffinityTerm | The weights of all of the matched WeightedPodAffinityTerm fields are added per-node to find the most preferred node(s).
  podAffinityTerm core/PodAffinityTerm! | Required. A pod affinity term, associated with the corresponding weight.
  weight integer! | Weight associated with matching the corresponding podAffinityTerm, in the range 1-100.

= core/VolumeMount | VolumeMount describes a mounting of a Volume within a container.
  mountPath string! | Path within the container at which the volume should be mounted. Must not contain ':'.
  mountPropagation string | Determines how mounts are propagated from the host to container and the other way around.
  name string! | This must match the Name of a Volume.
  readOnly boolean | Mounted read-only if true, read-write otherwise (false or unspecified).
  recursiveReadOnly string | Specifies whether read-only mounts should be handled recursively.
  subPath string | Path within the volume from which the container's volume should be mounted. Defaults to "" (volume's root).
  subPathExpr string | Expanded path within the volume from which the container's volume should be mounted.

= core/VolumeDevice | volumeDevice describes a mapping of a raw block device within a container.
  devicePath string! | The path inside of the container that the device will be mapped to.
  name string! | Must match the name of a persistentVolumeClaim in the pod.

= core/Volume | Volume represents a named volume in a pod that may be accessed by any container in the pod.
  configMap core/ConfigMapVolumeSource | A configMap that should populate this volume.
  csi core/CSIVolumeSource | Ephemeral storage that is handled by certain external CSI drivers.
  downwardAPI core/DownwardAPIVolumeSource | Downward API about the pod that should populate this volume.
  emptyDir core/EmptyDirVolumeSource | A temporary directory that shares a pod's lifetime.
  ephemeral core/EphemeralVolumeSource | A volume that is handled by a cluster storage driver, with the pod's lifecycle.
  hostPath core/HostPathVolumeSource | A pre-existing file or directory on the host machine that is directly exposed to the container.
  name string! | Name of the volume. Must be a DNS_LABEL and unique within the pod.
  nfs core/NFSVolumeSource | An NFS mount on the host that shares a pod's lifetime.
  persistentVolumeClaim core/PersistentVolumeClaimVolumeSource | A reference to a PersistentVolumeClaim in the same namespace.
  projected core/ProjectedVolumeSource | Items for all in one resources secrets, configmaps, and downward API.
  secret core/SecretVolumeSource | A secret that should populate this volume.

= core/ConfigMapVolumeSource | Adapts a ConfigMap into a volume.
  defaultMode integer | Mode bits used to set permissions on created files by default. Defaults to 0644.
  items []core/KeyToPath{atomic} | If unspecified, each key-value pair in the Data field of the referenced ConfigMap will be projected into the volume as a file.
  name string | Name of the referent.
  optional boolean | Specify whether the ConfigMap or its keys must be defined.

= core/SecretVolumeSource | Adapts a Secret into a volume.
  defaultMode integer | Mode bits used to set permissions on created files by default. Defaults to 0644.
  items []core/KeyToPath{atomic} | If unspecified, each key-value pair in the Data field of the referenced Secret will be projected into the volume as a file.
  optional boolean | Specify whether the Secret or its keys must be defined.
  secretName string | Name of the secret in the pod's namespace to use.

= core/CSIVolumeSource | Represents a source location of a volume to mount, managed by an external CSI driver.
  driver string! | The name of the CSI driver that handles this volume.
  fsType string | Filesystem type to mount, e.g. "ext4".
  nodePublishSecretRef core/LocalObjectReference | A reference to the secret object containing sensitive information to pass to the CSI driver.
  readOnly boolean | Specifies a read-only configuration for the volume. Defaults to false (read/write).
  volumeAttributes map:string | Driver-specific properties that are passed to the CSI driver.

= core/EphemeralVolumeSource | Represents an ephemeral volume that is handled by a normal storage driver.
  volumeClaimTemplate core/PersistentVolumeClaimTemplate | Will be used to create a stand-alone PVC to provision the volume.

= core/PersistentVolumeClaimTemplate | PersistentVolumeClaimTemplate is used to produce PersistentVolumeClaim objects as part of an EphemeralVolumeSource.
  metadata meta/ObjectMeta | May contain labels and annotations that will be copied into the PVC when creating it.
  spec core/PersistentVolumeClaimSpec! | The specification for the PersistentVolumeClaim.

= core/NFSVolumeSource | Represents an NFS mount that lasts the lifetime of a pod.
  path string! | Path that is exported by the NFS server.
  readOnly boolean | Force the NFS export to be mounted with read-only permissions. Defaults to false.
  server string! | Server is the hostname or IP address of the NFS server.

= core/KeyToPath | Maps a string key to a path within a volume.
  key string! | The key to project.
  mode integer | Mode bits used to set permissions on this file.
  path string! | The relative path of the file to map the key to.

= core/EmptyDirVolumeSource | Represents an empty directory for a pod.
  medium string | What type of storage medium should back this directory: "" or Memory.
  sizeLimit Quantity | Total amount of local storage required for this EmptyDir volume.

= core/HostPathVolumeSource | Represents a host path mapped into a pod.
  path string! | Path of the directory on the host.
  type string | Type for HostPath Volume. Defaults to "".

= core/PersistentVolumeClaimVolumeSource | References the user's PVC in the same namespace.
  claimName string! | The name of a PersistentVolumeClaim in the same namespace as the pod using this volume.
  readOnly boolean | Will force the ReadOnly setting in VolumeMounts. Default false.

= core/ProjectedVolumeSource | Represents a projected volume source.
  defaultMode integer | Mode bits used to set permissions on created files by default.
  sources []core/VolumeProjection{atomic} | The list of volume projections.

= core/VolumeProjection | Projection that may be projected along with other supported volume types. Exactly one of these fields must be set.
  configMap core/ConfigMapProjection | ConfigMap information about the configMap data to project.
  downwardAPI core/DownwardAPIProjection | DownwardAPI information about the downwardAPI data to project.
  secret core/SecretProjection | Secret information about the secret data to project.
  serviceAccountToken core/ServiceAccountTokenProjection | Information about the serviceAccountToken data to project.

= core/ConfigMapProjection | Adapts a ConfigMap into a projected volume.
  items []core/KeyToPath{atomic} | Keys to project; all keys when unspecified.
  name string | Name of the referent.
  optional boolean | Specify whether the ConfigMap or its keys must be defined.

= core/SecretProjection | Adapts a secret into a projected volume.
  items []core/KeyToPath{atomic} | Keys to project; all keys when unspecified.
  name string | Name of the referent.
  optional boolean | Specify whether the Secret or its key must be defined.

= core/DownwardAPIProjection | Represents downward API info for projecting into a projected volume.
  items []core/DownwardAPIVolumeFile{atomic} | Items is a list of DownwardAPIVolume file.

= core/DownwardAPIVolumeSource | DownwardAPIVolumeSource represents a volume containing downward API info.
  defaultMode integer | Mode bits to use on created files by default.
  items []core/DownwardAPIVolumeFile{atomic} | Items is a list of downward API volume file.

= core/DownwardAPIVolumeFile | DownwardAPIVolumeFile represents information to create the file containing the pod field.
  fieldRef core/ObjectFieldSelector | Selects a field of the pod.
  mode integer | Mode bits used to set permissions on this file.
  path string! | The relative path name of the file to be created.
  resourceFieldRef core/ResourceFieldSelector | Selects a resource of the container.

= core/ServiceAccountTokenProjection | ServiceAccountTokenProjection represents a projected service account token volume.
  audience string | The intended audience of the token.
  expirationSeconds int64 | The requested duration of validity of the service account token. Defaults to 1 hour.
  path string! | The path relative to the mount point of the file to project the token into.

= core/PodStatus | PodStatus represents information about the status of a pod. Status may trail the actual state of a system.
  conditions []core/PodCondition{merge:type;map:type} | Current service state of pod.
  containerStatuses []core/ContainerStatus{atomic} | The list has one entry per container in the manifest.
  hostIP string | The IP address of the host to which the pod is assigned.
  hostIPs []core/HostIP{merge:ip;atomic} | The IP addresses allocated to the host.
  initContainerStatuses []core/ContainerStatus{atomic} | The list has one entry per init container in the manifest.
  message string | A human readable message indicating details about why the pod is in this condition.
  nominatedNodeName string | Set only when this pod preempts other pods on the node, but it cannot be scheduled right away.
  phase string | The phase of a Pod is a simple, high-level summary of where the Pod is in its lifecycle: Pending, Running, Succeeded, Failed or Unknown.
  podIP string | IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.
  podIPs []core/PodIP{merge:ip;map:ip} | The IP addresses allocated to the pod; index 0 must match the podIP field.
  qosClass string | The Quality of Service (QOS) classification assigned to the pod based on resource requirements: Guaranteed, Burstable or BestEffort.
  reason string | A brief CamelCase message indicating details about why the pod is in this state, e.g. 'Evicted'.
  startTime Time | RFC 3339 date and time at which the object was acknowledged by the Kubelet.

= core/PodCondition | PodCondition contains details for the current condition of this pod.
  lastProbeTime Time | Last time we probed the condition.
  lastTransitionTime Time | Last time the condition transitioned from one status to another.
  message string | Human-readable message indicating details about last transition.
  reason string | Unique, one-word, CamelCase reason for the condition's last transition.
  status string! | Status is the status of the condition: True, False or Unknown.
  type string! | Type is the type of the condition: PodScheduled, Initialized, ContainersReady, Ready.

= core/PodIP | PodIP represents a single IP address allocated to the pod.
  ip string! | IP is the IP address assigned to the pod.

= core/HostIP | HostIP represents a single IP address allocated to the host.
  ip string! | IP is the IP address assigned to the host.

= core/ContainerStatus | ContainerStatus contains details for the current status of this container.
  allocatedResources map:Quantity | Compute resources allocated for this container by the node.
  containerID string | ContainerID is the ID of the container in the format '<type>://<container_id>'.
  image string! | Image is the name of container image that the container is running.
  imageID string! | ImageID is the image ID of the container's image.
  lastState core/ContainerState | LastTerminationState holds the last termination state of the container.
  name string! | Name is a DNS_LABEL representing the unique name of the container.
  ready boolean! | Ready specifies whether the container is currently passing its readiness check.
  resources core/ResourceRequirements | Resources represents the compute resource requests and limits that have been successfully enacted on the running container.
  restartCount integer! | RestartCount holds the number of times the container has been restarted.
  started boolean | Started indicates whether the container has finished its postStart lifecycle hook and passed its startup probe.
  state core/ContainerState | State holds details about the container's current condition.

= core/ContainerState | ContainerState holds a possible state of container. Only one of its members may be specified.
  running core/ContainerStateRunning | Details about a running container.
  terminated core/ContainerStateTerminated | Details about a terminated container.
  waiting core/ContainerStateWaiting | Details about a waiting container.

= core/ContainerStateRunning | ContainerStateRunning is a running state of a container.
  startedAt Time | Time at which the container was last (re-)started.

= core/ContainerStateTerminated | ContainerStateTerminated is a terminated state of a container.
  containerID string | Container's ID in the format '<type>://<container_id>'.
  exitCode integer! | Exit status from the last termination of the container.
  finishedAt Time | Time at which the container last terminated.
  message string | Message regarding the last termination of the container.
  reason string | (brief) reason from the last termination of the container.
  signal integer | Signal from the last termination of the container.
  startedAt Time | Time at which previous execution of the container started.

= core/ContainerStateWaiting | ContainerStateWaiting is a waiting state of a container.
  message string | Message regarding why the container is not yet running.
  reason string | (brief) reason the container is not yet running, e.g. ContainerCreating, ErrImagePull, ImagePullBackOff.

= core/Service | Service is a named abstraction of software service (for example, mysql) consisting of local port (for example 3306) that the proxy listens on, and the selector that determines which pods will answer requests sent through the proxy.
  &object
  spec core/ServiceSpec | Spec defines the behavior of a service.
  status core/ServiceStatus | Most recently observed status of the service. Populated by the system. Read-only.

= core/ServiceList | ServiceList holds a list of services.
  &list core/Service

= core/ServiceSpec | ServiceSpec describes the attributes that a user creates on a service.
  allocateLoadBalancerNodePorts boolean | Defines if NodePorts will be automatically allocated for services with type LoadBalancer. Default is "true".
  clusterIP string | The IP address of the service, usually assigned randomly. "None" makes a headless service.
  clusterIPs []string{atomic} | The list of IP addresses assigned to this service; index 0 matches clusterIP.
  externalIPs []string{atomic} | A list of IP addresses for which nodes in the cluster will also accept traffic for this service.
  externalName string | The external reference that discovery mechanisms will return as an alias for this service (e.g. a DNS CNAME record). Requires type ExternalName.
  externalTrafficPolicy string | How nodes distribute service traffic they receive on externally-facing addresses: Cluster or Local.
  healthCheckNodePort integer | The healthcheck nodePort for the service, for type LoadBalancer with externalTrafficPolicy Local.
  internalTrafficPolicy string | How nodes distribute service traffic they receive on the ClusterIP: Cluster or Local.
  ipFamilies []string{atomic} | The IP families (e.g. IPv4, IPv6) assigned to this service.
  ipFamilyPolicy string | The dual-stackness requested or required by this Service: SingleStack, PreferDualStack or RequireDualStack.
  loadBalancerClass string | The class of the load balancer implementation this Service belongs to.
  loadBalancerIP string | Deprecated: only applies to type LoadBalancer; the meaning depends on the implementation.
  loadBalancerSourceRanges []string{atomic} | If specified and supported by the platform, traffic through the cloud-provider load-balancer will be restricted to these client IPs.
  ports []core/ServicePort{merge:port;map:port,protocol} | The list of ports that are exposed by this service.
  publishNotReadyAddresses boolean | Indicates that any agent which deals with endpoints for this Service should disregard any indications of ready/not-ready.
  selector map:string | Route service traffic to pods with label keys and values matching this selector.
  sessionAffinity string | Used to maintain session affinity: ClientIP or None. Defaults to None.
  sessionAffinityConfig core/SessionAffinityConfig | Contains the configurations of session affinity.
  trafficDistribution string | Offers a way to express preferences for how traffic is distributed to Service endpoints.
  type string | Determines how the Service is exposed: ExternalName, ClusterIP, NodePort or LoadBalancer. Defaults to ClusterIP.

= core/ServicePort | ServicePort contains information on service's port.
  appProtocol string | The application protocol for this port, used as a hint for implementations.
  name string | The name of this port within the service. Must be a DNS_LABEL and unique within the ServiceSpec.
  nodePort integer | The port on each node on which this service is exposed when type is NodePort or LoadBalancer.
  port integer! | The port that will be exposed by this service.
  protocol string | The IP protocol for this port: TCP, UDP or SCTP. Default is TCP.
  targetPort IntOrString | Number or name of the port to access on the pods targeted by the service. Defaults to the value of port.

= core/SessionAffinityConfig | SessionAffinityConfig represents the configurations of session affinity.
  clientIP core/ClientIPConfig | clientIP contains the configurations of Client IP based session affinity.

= core/ClientIPConfig | ClientIPConfig represents the configurations of Client IP based session affinity.
  timeoutSeconds integer | The seconds of ClientIP type session sticky time. Default is 10800 (3 hours).

= core/ServiceStatus | ServiceStatus represents the current status of a service.
  conditions []meta/Condition{merge:type;map:type} | Current service state.
  loadBalancer core/LoadBalancerStatus | Contains the current status of the load-balancer, if one is present.

= core/LoadBalancerStatus | LoadBalancerStatus represents the status of a load-balancer.
  ingress []core/LoadBalancerIngress{atomic} | A list containing ingress points for the load-balancer.

= core/LoadBalancerIngress | LoadBalancerIngress represents the status of a load-balancer ingress point.
  hostname string | Set for load-balancer ingress points that are DNS based.
  ip string | Set for load-balancer ingress points that are IP based.
  ipMode string | Specifies how the load-balancer IP behaves: VIP or Proxy.
  ports []core/PortStatus{atomic} | Records of the service ports.

= core/PortStatus | PortStatus represents the error condition of a service port.
  error string | Error is to record the problem with the service port, in CamelCase.
  port integer! | The port number of the service port of which status is recorded here.
  protocol string! | The protocol of the service port: TCP, UDP or SCTP.

= core/Endpoints | Endpoints is a collection of endpoints that implement the actual service.
  &object
  subsets []core/EndpointSubset{atomic} | The set of all endpoints is the union of all subsets.

= core/EndpointsList | EndpointsList is a list of endpoints.
  &list core/Endpoints

= core/EndpointSubset | EndpointSubset is a group of addresses with a common set of ports.
  addresses []core/EndpointAddress{atomic} | IP addresses which offer the related ports that are marked as ready.
  notReadyAddresses []core/EndpointAddress{atomic} | IP addresses which offer the related ports but are not currently marked as ready.
  ports []core/EndpointPort{atomic} | Port numbers available on the related IP addresses.

= core/EndpointAddress | EndpointAddress is a tuple that describes single IP address.
  hostname string | The Hostname of this endpoint.
  ip string! | The IP of this endpoint.
  nodeName string | Node hosting this endpoint.
  targetRef core/ObjectReference | Reference to object providing the endpoint.

= core/EndpointPort | EndpointPort is a tuple that describes a single port.
  appProtocol string | The application protocol for this port.
  name string | The name of this port. Must match the name of a ServicePort.
  port integer! | The port number of the endpoint.
  protocol string | The IP protocol for this port: TCP, UDP or SCTP. Default is TCP.

= core/ObjectReference | ObjectReference contains enough information to let you inspect or modify the referred object.
  apiVersion string | API version of the referent.
  fieldPath string | If referring to a piece of an object instead of an entire object, a valid JSON/Go field access statement.
  kind string | Kind of the referent.
  name string | Name of the referent.
  namespace string | Namespace of the referent.
  resourceVersion string | Specific resourceVersion to which this reference is made, if any.
  uid string | UID of the referent.

= core/Secret | Secret holds secret data of a certain type. The total bytes of the values in the Data field must be less than MaxSecretSize bytes.
  &object
  data map:byte | Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values are base64 encoded.
  immutable boolean | If set to true, ensures that data stored in the Secret cannot be updated (only object metadata can be modified).
  stringData map:string | Allows specifying non-binary secret data in string form. It is provided as a write-only input field for convenience and merged into the data field on write.
  type string | Used to facilitate programmatic handling of secret data.

= core/SecretList | SecretList is a list of Secret.
  &list core/Secret

= core/ConfigMap | ConfigMap holds configuration data for pods to consume.
  &object
  binaryData map:byte | BinaryData contains the binary data. Values are base64 encoded.
  data map:string | Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'.
  immutable boolean | If set to true, ensures that data stored in the ConfigMap cannot be updated (only object metadata can be modified).

= core/ConfigMapList | ConfigMapList is a resource containing a list of ConfigMap objects.
  &list core/ConfigMap

= core/PersistentVolumeClaim | PersistentVolumeClaim is a user's request for and claim to a persistent volume.
  &object
  spec core/PersistentVolumeClaimSpec | Defines the desired characteristics of a volume requested by a pod author.
  status core/PersistentVolumeClaimStatus | Represents the current information/status of a persistent volume claim. Read-only.

= core/PersistentVolumeClaimList | PersistentVolumeClaimList is a list of PersistentVolumeClaim items.
  &list core/PersistentVolumeClaim

= core/PersistentVolumeClaimSpec | PersistentVolumeClaimSpec describes the common attributes of storage devices and allows a Source for provider-specific attributes.
  accessModes []string{atomic} | The desired access modes the volume should have: ReadWriteOnce, ReadOnlyMany, ReadWriteMany or ReadWriteOncePod.
  dataSource core/TypedLocalObjectReference | Specifies an existing VolumeSnapshot or PersistentVolumeClaim to populate the volume from.
  dataSourceRef core/TypedObjectReference | Specifies the object from which to populate the volume with data, if a non-empty volume is desired.
  resources core/VolumeResourceRequirements | The minimum resources the volume should have.
  selector meta/LabelSelector | A label query over volumes to consider for binding.
  storageClassName string | The name of the StorageClass required by the claim.
  volumeAttributesClassName string | Sets a VolumeAttributesClass used by this claim.
  volumeMode string | Defines what type of volume is required by the claim: Block or Filesystem. Filesystem is implied when not included.
  volumeName string | The binding reference to the PersistentVolume backing this claim.

= core/TypedLocalObjectReference | TypedLocalObjectReference contains enough information to let you locate the typed referenced object inside the same namespace.
  apiGroup string | The group for the resource being referenced. If not specified, the kind must be in the core API group.
  kind string! | The type of resource being referenced.
  name string! | The name of resource being referenced.

= core/TypedObjectReference | TypedObjectReference contains enough information to let you locate the typed referenced object.
  apiGroup string | The group for the resource being referenced.
  kind string! | The type of resource being referenced.
  name string! | The name of resource being referenced.
  namespace string | The namespace of resource being referenced.

= core/VolumeResourceRequirements | VolumeResourceRequirements describes the storage resource requirements for a volume.
  limits map:Quantity | Limits describes the maximum amount of compute resources allowed.
  requests map:Quantity | Requests describes the minimum amount of compute resources required.

= core/PersistentVolumeClaimStatus | PersistentVolumeClaimStatus is the current status of a persistent volume claim.
  accessModes []string{atomic} | The actual access modes the volume backing the PVC has.
  allocatedResourceStatuses map:string | Stores status of resource being resized for the given PVC.
  allocatedResources map:Quantity | The storage resource within AllocatedResources tracks the capacity allocated to a PVC.
  capacity map:Quantity | The actual resources of the underlying volume.
  conditions []core/PersistentVolumeClaimCondition{merge:type;map:type} | The current Condition of persistent volume claim.
  currentVolumeAttributesClassName string | The current name of the VolumeAttributesClass the PVC is using.
  phase string | The current phase of PersistentVolumeClaim: Pending, Bound or Lost.

= core/PersistentVolumeClaimCondition | PersistentVolumeClaimCondition contains details about state of pvc.
  lastProbeTime Time | The time we probed the condition.
  lastTransitionTime Time | The time the condition transitioned from one status to another.
  message string | The human-readable message indicating details about last transition.
  reason string | A unique, short, machine understandable string that gives the reason for condition's last transition.
  status string! | Status of the condition: True, False or Unknown.
  type string! | Type of the condition: Resizing, FileSystemResizePending, ...

= core/Event | Event is a report of an event somewhere in the cluster.
  action string | What action was taken/failed regarding to the Regarding object.
  apiVersion string | APIVersion defines the versioned schema of this representation of an object.
  count integer | The number of times this event has occurred.
  eventTime MicroTime | Time when this Event was first observed.
  firstTimestamp Time | The time at which the event was first recorded.
  involvedObject core/ObjectReference! | The object that this event is about.
  kind string | Kind is a string value representing the REST resource this object represents.
  lastTimestamp Time | The time at which the most recent occurrence of this event was recorded.
  message string | A human-readable description of the status of this operation.
  metadata meta/ObjectMeta! | Standard object's metadata.
  reason string | A short, machine understandable string that gives the reason for the transition into the object's current status.
  related core/ObjectReference | Optional secondary object for more complex actions.
  reportingComponent string | Name of the controller that emitted this Event, e.g. kubernetes.io/kubelet.
  reportingInstance string | ID of the controller instance, e.g. kubelet-xyzf.
  series core/EventSeries | Data about the Event series this event represents or nil if it's a singleton Event.
  source core/EventSource | The component reporting this event.
  type string | Type of this event (Normal, Warning), new types could be added in the future.

= core/EventList | EventList is a list of events.
  &list core/Event

= core/EventSeries | EventSeries contain information on series of events, i.e. thing that was/is happening continuously for some time.
  count integer | Number of occurrences in this series up to the last heartbeat time.
  lastObservedTime MicroTime | Time of the last occurrence observed.

= core/EventSource | EventSource contains information for an event.
  component string | Component from which the event is generated.
  host string | Node name on which the event is generated.

= apps/Deployment | Deployment enables declarative updates for Pods and ReplicaSets.
  &object
  spec apps/DeploymentSpec | Specification of the desired behavior of the Deployment.
  status apps/DeploymentStatus | Most recently observed status of the Deployment.

= apps/DeploymentList | DeploymentList is a list of Deployments.
  &list apps/Deployment

= apps/DeploymentSpec | DeploymentSpec is the specification of the desired behavior of the Deployment.
  minReadySeconds integer | Minimum number of seconds for which a newly created pod should be ready without any of its container crashing, for it to be considered available. Defaults to 0.
  paused boolean | Indicates that the deployment is paused.
  progressDeadlineSeconds integer | The maximum time in seconds for a deployment to make progress before it is considered to be failed (reason ProgressDeadlineExceeded). Defaults to 600s.
  replicas integer | Number of desired pods. Defaults to 1.
  revisionHistoryLimit integer | The number of old ReplicaSets to retain to allow rollback. Defaults to 10.
  selector meta/LabelSelector! | Label selector for pods. It must match the pod template's labels.
  strategy apps/DeploymentStrategy{retainKeys} | The deployment strategy to use to replace existing pods with new ones.
  template core/PodTemplateSpec! | Template describes the pods that will be created. The only allowed template.spec.restartPolicy value is "Always".

= apps/DeploymentStrategy | DeploymentStrategy describes how to replace existing pods with new ones.
  rollingUpdate apps/RollingUpdateDeployment | Rolling update config params. Present only if DeploymentStrategyType = RollingUpdate.
  type string | Type of deployment: Recreate or RollingUpdate. Default is RollingUpdate.

= apps/RollingUpdateDeployment | Spec to control the desired behavior of rolling update.
  maxSurge IntOrString | The maximum number of pods that can be scheduled above the desired number of pods (number or percentage). Defaults to 25%.
  maxUnavailable IntOrString | The maximum number of pods that can be unavailable during the update (number or percentage). Defaults to 25%.

= apps/DeploymentStatus | DeploymentStatus is the most recently observed status of the Deployment.
  availableReplicas integer | Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.
  collisionCount integer | Count of hash collisions for the Deployment.
  conditions []apps/DeploymentCondition{merge:type;map:type} | Represents the latest available observations of a deployment's current state.
  observedGeneration int64 | The generation observed by the deployment controller.
  readyReplicas integer | Total number of ready pods targeted by this deployment.
  replicas integer | Total number of non-terminated pods targeted by this deployment (their labels match the selector).
  unavailableReplicas integer | Total number of unavailable pods targeted by this deployment.
  updatedReplicas integer | Total number of non-terminated pods targeted by this deployment that have the desired template spec.

= apps/DeploymentCondition | DeploymentCondition describes the state of a deployment at a certain point.
  lastTransitionTime Time | Last time the condition transitioned from one status to another.
  lastUpdateTime Time | The last time this condition was updated.
  message string | A human readable message indicating details about the transition.
  reason string | The reason for the condition's last transition.
  status string! | Status of the condition, one of True, False, Unknown.
  type string! | Type of deployment condition: Available, Progressing or ReplicaFailure.

= apps/ReplicaSet | ReplicaSet ensures that a specified number of pod replicas are running at any given time.
  &object
  spec apps/ReplicaSetSpec | Spec defines the specification of the desired behavior of the ReplicaSet.
  status apps/ReplicaSetStatus | Status is the most recently observed status of the ReplicaSet.

= apps/ReplicaSetList | ReplicaSetList is a collection of ReplicaSets.
  &list apps/ReplicaSet

= apps/ReplicaSetSpec | ReplicaSetSpec is the specification of a ReplicaSet.
  minReadySeconds integer | Minimum number of seconds for which a newly created pod should be ready without any of its container crashing, for it to be considered available.
  replicas integer | Replicas is the number of desired pods. Defaults to 1.
  selector meta/LabelSelector! | Selector is a label query over pods that should match the replica count.
  template core/PodTemplateSpec | Template is the object that describes the pod that will be created if insufficient replicas are detected.

= apps/ReplicaSetStatus | ReplicaSetStatus represents the current status of a ReplicaSet.
  availableReplicas integer | The number of available non-terminating pods (ready for at least minReadySeconds) for this replica set.
  conditions []apps/ReplicaSetCondition{merge:type;map:type} | Represents the latest available observations of a replica set's current state.
  fullyLabeledReplicas integer | The number of non-terminating pods that have labels matching the labels of the pod template of the replicaset.
  observedGeneration int64 | ObservedGeneration reflects the generation of the most recently observed ReplicaSet.
  readyReplicas integer | The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.
  replicas integer! | Replicas is the most recently observed number of non-terminating pods.

= apps/ReplicaSetCondition | ReplicaSetCondition describes the state of a replica set at a certain point.
  lastTransitionTime Time | The last time the condition transitioned from one status to another.
  message string | A human readable message indicating details about the transition.
  reason string | The reason for the condition's last transition.
  status string! | Status of the condition, one of True, False, Unknown.
  type string! | Type of replica set condition.

= autoscaling/Scale | Scale represents a scaling request for a resource.
  &object
  spec autoscaling/ScaleSpec | Defines the behavior of the scale.
  status autoscaling/ScaleStatus | The current status of the scale. Read-only.

= autoscaling/ScaleSpec | ScaleSpec describes the attributes of a scale subresource.
  replicas integer | The desired number of instances for the scaled object.

= autoscaling/ScaleStatus | ScaleStatus represents the current status of a scale subresource.
  replicas integer! | The actual number of observed instances of the scaled object.
  selector string | The label query over pods that should match the replicas count, in the form of a label selector string.

= discovery/EndpointSlice | EndpointSlice represents a subset of the endpoints that implement a service.
  addressType string! | The type of address carried by this EndpointSlice: IPv4, IPv6 or FQDN. Immutable.
  apiVersion string | APIVersion defines the versioned schema of this representation of an object.
  endpoints []discovery/Endpoint{atomic}! | A list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints.
  kind string | Kind is a string value representing the REST resource this object represents.
  metadata meta/ObjectMeta | Standard object's metadata.
  ports []discovery/EndpointPort{atomic} | The list of network ports exposed by each endpoint in this slice.

= discovery/EndpointSliceList | EndpointSliceList represents a list of endpoint slices.
  &list discovery/EndpointSlice

= discovery/Endpoint | Endpoint represents a single logical "backend" implementing a service.
  addresses []string{set}! | Addresses of this endpoint, interpreted according to the slice's addressType. Must contain at least one address.
  conditions discovery/EndpointConditions | Contains information about the current status of the endpoint.
  deprecatedTopology map:string | Deprecated topology information.
  hints discovery/EndpointHints | Information about how the endpoint should be consumed.
  hostname string | Hostname of this endpoint.
  nodeName string | The name of the Node hosting this endpoint.
  targetRef core/ObjectReference | A reference to a Kubernetes object that represents this endpoint.
  zone string | The name of the Zone this endpoint exists in.

= discovery/EndpointConditions | EndpointConditions represents the current condition of an endpoint.
  ready boolean | Indicates that this endpoint is ready to receive traffic. Nil should be interpreted as "true".
  serving boolean | Identical to ready except that it is set regardless of the terminating state of endpoints.
  terminating boolean | Indicates that this endpoint is terminating.

= discovery/EndpointHints | EndpointHints provides hints describing how an endpoint should be consumed.
  forZones []discovery/ForZone{atomic} | Indicates the zone(s) this endpoint should be consumed by.

= discovery/ForZone | ForZone provides information about which zones should consume this endpoint.
  name string! | The name of the zone.

= discovery/EndpointPort | EndpointPort represents a Port used by an EndpointSlice.
  appProtocol string | The application protocol for this port.
  name string | The name of this port. Must match the name of a service port.
  port integer | The port number of the endpoint. If nil, all ports are allowed.
  protocol string | The IP protocol for this port: TCP, UDP or SCTP. Default is TCP.

= networking/Ingress | Ingress is a collection of rules that allow inbound connections to reach the endpoints defined by a backend. An Ingress can be configured to give services externally-reachable urls, load balance traffic, terminate SSL, offer name based virtual hosting etc.
  &object
  spec networking/IngressSpec | Spec is the desired state of the Ingress.
  status networking/IngressStatus | Status is the current state of the Ingress.

= networking/IngressList | IngressList is a collection of Ingress.
  &list networking/Ingress

= networking/IngressSpec | IngressSpec describes the Ingress the user wishes to exist.
  defaultBackend networking/IngressBackend | The backend that should handle requests that don't match any rule.
  ingressClassName string | The name of an IngressClass cluster resource.
  rules []networking/IngressRule{atomic} | A list of host rules used to configure the Ingress.
  tls []networking/IngressTLS{atomic} | The TLS configuration.

= networking/IngressBackend | IngressBackend describes all endpoints for a given service and port.
  resource core/TypedLocalObjectReference | An ObjectRef to another Kubernetes resource in the namespace of the Ingress object. Mutually exclusive with service.
  service networking/IngressServiceBackend | References a service as a backend. Mutually exclusive with resource.

= networking/IngressServiceBackend | IngressServiceBackend references a Kubernetes Service as a Backend.
  name string! | The referenced service. The service must exist in the same namespace as the Ingress object.
  port networking/ServiceBackendPort | Port of the referenced service.

= networking/ServiceBackendPort | ServiceBackendPort is the service port being referenced.
  name string | The name of the port on the Service. Mutually exclusive with number.
  number integer | The numerical port number (e.g. 80) on the Service. Mutually exclusive with name.

= networking/IngressRule | IngressRule represents the rules mapping the paths under a specified host to the related backend services.
  host string | The fully qualified domain name of a network host, as defined by RFC 3986. Wildcards such as "*.foo.com" are allowed.
  http networking/HTTPIngressRuleValue | HTTP paths for this host.

= networking/HTTPIngressRuleValue | HTTPIngressRuleValue is a list of http selectors pointing to backends.
  paths []networking/HTTPIngressPath{atomic}! | A collection of paths that map requests to backends.

= networking/HTTPIngressPath | HTTPIngressPath associates a path with a backend.
  backend networking/IngressBackend! | The referenced service endpoint to which the traffic will be forwarded.
  path string | Matched against the path of an incoming request. Must begin with a '/'.
  pathType string! | Determines the interpretation of the path matching: Exact, Prefix or ImplementationSpecific.

= networking/IngressTLS | IngressTLS describes the transport layer security associated with an ingress.
  hosts []string{atomic} | A list of hosts included in the TLS certificate.
  secretName string | The name of the secret used to terminate TLS traffic on port 443.

= networking/IngressStatus | IngressStatus describes the current state of the Ingress.
  loadBalancer networking/IngressLoadBalancerStatus | Contains the current status of the load-balancer.

= networking/IngressLoadBalancerStatus | IngressLoadBalancerStatus represents the status of a load-balancer.
  ingress []networking/IngressLoadBalancerIngress{atomic} | A list containing ingress points for the load-balancer.

= networking/IngressLoadBalancerIngress | IngressLoadBalancerIngress represents the status of a load-balancer ingress point.
  hostname string | Set for load-balancer ingress points that are DNS based.
  ip string | Set for load-balancer ingress points that are IP based.
  ports []networking/IngressPortStatus{atomic} | Information about the ports exposed by this LoadBalancer.

= networking/IngressPortStatus | IngressPortStatus represents the error condition of a service port.
  error string | Error is to record the problem with the service port, in CamelCase.
  port integer! | The port number of the ingress port.
  protocol string! | The protocol of the ingress port: TCP, UDP or SCTP.

= networking/IngressClass | IngressClass represents the class of the Ingress, referenced by the Ingress Spec.
  &object
  spec networking/IngressClassSpec | Spec is the desired state of the IngressClass.

= networking/IngressClassList | IngressClassList is a collection of IngressClasses.
  &list networking/IngressClass

= networking/IngressClassSpec | IngressClassSpec provides information about the class of an Ingress.
  controller string | The name of the controller that should handle this class, e.g. "acme.io/ingress-controller". Immutable.
  parameters networking/IngressClassParametersReference | A link to a custom resource containing additional configuration for the controller.

= networking/IngressClassParametersReference | IngressClassParametersReference identifies an API object.
  apiGroup string | The group for the resource being referenced.
  kind string! | The type of resource being referenced.
  name string! | The name of resource being referenced.
  namespace string | The namespace of the resource being referenced; required when scope is "Namespace".
  scope string | Represents if this refers to a cluster or namespace scoped resource: Cluster (default) or Namespace.

= coordination/Lease | Lease defines a lease concept.
  &object
  spec coordination/LeaseSpec | Specification of the Lease.

= coordination/LeaseList | LeaseList is a list of Lease objects.
  &list coordination/Lease

= coordination/LeaseSpec | LeaseSpec is a specification of a Lease.
  acquireTime MicroTime | A time when the current lease was acquired.
  holderIdentity string | The identity of the holder of a current lease.
  leaseDurationSeconds integer | The duration that candidates for a lease need to wait to force acquire it, measured against the last observed renewTime.
  leaseTransitions integer | The number of transitions of a lease between holders.
  preferredHolder string | Signals to a lease holder that the lease has a more optimal holder and should be given up.
  renewTime MicroTime | A time when the current holder of a lease has last updated the lease.
  strategy string | Strategy to use to select the leader when Coordinated Leader Election is used.

= core/ServiceAccount | ServiceAccount binds together a name, understood by users and perhaps by peripheral systems, for an identity, a principal that can be authenticated and authorized, and a set of secrets.
  &object
  automountServiceAccountToken boolean | Whether pods running as this service account should have an API token automatically mounted.
  imagePullSecrets []core/LocalObjectReference{atomic} | A list of references to secrets in the same namespace to use for pulling any images in pods that reference this ServiceAccount.
  secrets []core/ObjectReference{merge:name} | Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.

= core/ServiceAccountList | ServiceAccountList is a list of ServiceAccount objects.
  &list core/ServiceAccount

= rbac/PolicyRule | PolicyRule holds information that describes a policy rule, but does not contain information about who the rule applies to or which namespace the rule applies to.
  apiGroups []string{atomic} | APIGroups is the name of the APIGroup that contains the resources. "" represents the core API group and "*" represents all API groups.
  nonResourceURLs []string{atomic} | NonResourceURLs is a set of partial urls that a user should have access to. Rules can either apply to API resources or non-resource URL paths, but not both.
  resourceNames []string{atomic} | ResourceNames is an optional allow list of names that the rule applies to. An empty set means that everything is allowed.
  resources []string{atomic} | Resources is a list of resources this rule applies to. '*' represents all resources.
  verbs []string{atomic}! | Verbs is a list of verbs that apply to all resources contained in this rule. '*' represents all verbs.

= rbac/Role | Role is a namespaced, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding.
  &object
  rules []rbac/PolicyRule{atomic} | Rules holds all the PolicyRules for this Role.

= rbac/RoleList | RoleList is a collection of Roles.
  &list rbac/Role

= rbac/ClusterRole | ClusterRole is a cluster level, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding or ClusterRoleBinding.
  &object
  aggregationRule rbac/AggregationRule | AggregationRule is an optional field that describes how to build the Rules for this ClusterRole.
  rules []rbac/PolicyRule{atomic} | Rules holds all the PolicyRules for this ClusterRole.

= rbac/ClusterRoleList | ClusterRoleList is a collection of ClusterRoles.
  &list rbac/ClusterRole

= rbac/AggregationRule | AggregationRule describes how to locate ClusterRoles to aggregate into the ClusterRole.
  clusterRoleSelectors []meta/LabelSelector{atomic} | ClusterRoleSelectors holds a list of selectors which will be used to find ClusterRoles and create the rules.

= rbac/RoleRef | RoleRef contains information that points to the role being used.
  apiGroup string! | APIGroup is the group for the resource being referenced.
  kind string! | Kind is the type of resource being referenced.
  name string! | Name is the name of resource being referenced.

= rbac/Subject | Subject contains a reference to the object or user identities a role binding applies to.
  apiGroup string | APIGroup holds the API group of the referenced subject. Defaults to "" for ServiceAccount subjects and to "rbac.authorization.k8s.io" for User and Group subjects.
  kind string! | Kind of object being referenced: "User", "Group" or "ServiceAccount".
  name string! | Name of the object being referenced.
  namespace string | Namespace of the referenced object. For a ServiceAccount subject of a RoleBinding, empty means the binding's namespace.

= rbac/RoleBinding | RoleBinding references a role, but does not contain it. It can reference a Role in the same namespace or a ClusterRole in the global namespace.
  &object
  roleRef rbac/RoleRef! | RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. This field is immutable.
  subjects []rbac/Subject{atomic} | Subjects holds references to the objects the role applies to.

= rbac/RoleBindingList | RoleBindingList is a collection of RoleBindings.
  &list rbac/RoleBinding

= rbac/ClusterRoleBinding | ClusterRoleBinding references a ClusterRole, but not contain it.
  &object
  roleRef rbac/RoleRef! | RoleRef can only reference a ClusterRole in the global namespace. This field is immutable.
  subjects []rbac/Subject{atomic} | Subjects holds references to the objects the role applies to.

= rbac/ClusterRoleBindingList | ClusterRoleBindingList is a collection of ClusterRoleBindings.
  &list rbac/ClusterRoleBinding

= policy/PodDisruptionBudget | PodDisruptionBudget is an object to define the max disruption that can be caused to a collection of pods.
  &object
  spec policy/PodDisruptionBudgetSpec | Specification of the desired behavior of the PodDisruptionBudget.
  status policy/PodDisruptionBudgetStatus | Most recently observed status of the PodDisruptionBudget.

= policy/PodDisruptionBudgetList | PodDisruptionBudgetList is a collection of PodDisruptionBudgets.
  &list policy/PodDisruptionBudget

= policy/PodDisruptionBudgetSpec | PodDisruptionBudgetSpec is a description of a PodDisruptionBudget.
  maxUnavailable IntOrString | An eviction is allowed if at most "maxUnavailable" pods selected by "selector" are unavailable after the eviction. Mutually exclusive with minAvailable.
  minAvailable IntOrString | An eviction is allowed if at least "minAvailable" pods selected by "selector" will still be available after the eviction. Mutually exclusive with maxUnavailable.
  selector meta/LabelSelector{retainKeys} | Label query over pods whose evictions are managed by the disruption budget.
  unhealthyPodEvictionPolicy string | UnhealthyPodEvictionPolicy defines the criteria for when unhealthy pods should be considered for eviction: IfHealthyBudget or AlwaysAllow.

= policy/PodDisruptionBudgetStatus | PodDisruptionBudgetStatus represents information about the status of a PodDisruptionBudget.
  conditions []meta/Condition{merge:type;map:type} | Conditions contain conditions for PDB.
  currentHealthy integer! | current number of healthy pods
  desiredHealthy integer! | minimum desired number of healthy pods
  disruptedPods object | DisruptedPods contains information about pods whose eviction was processed by the API server eviction subresource handler but has not yet been observed by the PodDisruptionBudget controller.
  disruptionsAllowed integer! | Number of pod disruptions that are currently allowed.
  expectedPods integer! | total number of pods counted by this disruption budget
  observedGeneration int64 | Most recent generation observed when updating this PDB status.

= networking/NetworkPolicy | NetworkPolicy describes what network traffic is allowed for a set of Pods.
  &object
  spec networking/NetworkPolicySpec | spec represents the specification of the desired behavior for this NetworkPolicy.

= networking/NetworkPolicyList | NetworkPolicyList is a list of NetworkPolicy objects.
  &list networking/NetworkPolicy

= networking/NetworkPolicySpec | NetworkPolicySpec provides the specification of a NetworkPolicy.
  egress []networking/NetworkPolicyEgressRule{atomic} | egress is a list of egress rules to be applied to the selected pods.
  ingress []networking/NetworkPolicyIngressRule{atomic} | ingress is a list of ingress rules to be applied to the selected pods.
  podSelector meta/LabelSelector | podSelector selects the pods to which this NetworkPolicy object applies. An empty selector matches all pods in the namespace.
  policyTypes []string{atomic} | policyTypes is a list of rule types that the NetworkPolicy relates to: "Ingress", "Egress", or both.

= networking/NetworkPolicyIngressRule | NetworkPolicyIngressRule describes a particular set of traffic that is allowed to the pods matched by a NetworkPolicySpec's podSelector.
  from []networking/NetworkPolicyPeer{atomic} | from is a list of sources which should be able to access the pods selected for this rule.
  ports []networking/NetworkPolicyPort{atomic} | ports is a list of ports which should be made accessible on the pods selected for this rule.

= networking/NetworkPolicyEgressRule | NetworkPolicyEgressRule describes a particular set of traffic that is allowed out of pods matched by a NetworkPolicySpec's podSelector.
  ports []networking/NetworkPolicyPort{atomic} | ports is a list of destination ports for outgoing traffic.
  to []networking/NetworkPolicyPeer{atomic} | to is a list of destinations for outgoing traffic of pods selected for this rule.

= networking/NetworkPolicyPeer | NetworkPolicyPeer describes a peer to allow traffic to/from.
  ipBlock networking/IPBlock | ipBlock defines policy on a particular IPBlock.
  namespaceSelector meta/LabelSelector | namespaceSelector selects namespaces using cluster-scoped labels.
  podSelector meta/LabelSelector | podSelector is a label selector which selects pods.

= networking/NetworkPolicyPort | NetworkPolicyPort describes a port to allow traffic on.
  endPort integer | endPort indicates that the range of ports from port to endPort if set, inclusive, should be allowed by the policy.
  port IntOrString | port represents the port on the given protocol: a numerical or named port on a pod.
  protocol string | protocol represents the protocol (TCP, UDP, or SCTP) which traffic must match. If not specified, this field defaults to TCP.

= networking/IPBlock | IPBlock describes a particular CIDR (Ex. "192.168.1.0/24","2001:db8::/64") that is allowed to the pods matched by a NetworkPolicySpec's podSelector.
  cidr string! | cidr is a string representing the IPBlock.
  except []string{atomic} | except is a slice of CIDRs that should not be included within an IPBlock.

= authorization/SelfSubjectAccessReview | SelfSubjectAccessReview checks whether or the current user can perform an action.
  &object
  spec authorization/SelfSubjectAccessReviewSpec! | Spec holds information about the request being evaluated. user and groups must be empty.
  status authorization/SubjectAccessReviewStatus | Status is filled in by the server and indicates whether the request is allowed or not.

= authorization/SelfSubjectAccessReviewSpec | SelfSubjectAccessReviewSpec is a description of the access request. Exactly one of ResourceAttributes and NonResourceAttributes must be set.
  nonResourceAttributes authorization/NonResourceAttributes | NonResourceAttributes describes information for a non-resource access request.
  resourceAttributes authorization/ResourceAttributes | ResourceAuthorizationAttributes describes information for a resource access request.

= authorization/ResourceAttributes | ResourceAttributes includes the authorization attributes available for resource requests to the Authorizer interface.
  group string | Group is the API Group of the Resource. "*" means all.
  name string | Name is the name of the resource being requested for a "get" or deleted for a "delete". "" (empty) means all.
  namespace string | Namespace is the namespace of the action being requested.
  resource string | Resource is one of the existing resource types. "*" means all.
  subresource string | Subresource is one of the existing resource types. "" means none.
  verb string | Verb is a kubernetes resource API verb, like: get, list, watch, create, update, delete, proxy. "*" means all.
  version string | Version is the API Version of the Resource. "*" means all.

= authorization/NonResourceAttributes | NonResourceAttributes includes the authorization attributes available for non-resource requests to the Authorizer interface.
  path string | Path is the URL path of the request.
  verb string | Verb is the standard HTTP verb.

= authorization/SubjectAccessReviewStatus | SubjectAccessReviewStatus
  allowed boolean! | Allowed is required. True if the action would be allowed, false otherwise.
  denied boolean | Denied is optional. True if the action would be denied, otherwise false.
  evaluationError string | EvaluationError is an indication that some error occurred during the authorization check.
  reason string | Reason is optional. It indicates why a request was allowed or denied.

= authorization/SelfSubjectRulesReview | SelfSubjectRulesReview enumerates the set of actions the current user can perform within a namespace. The returned list of actions may be incomplete depending on the server's authorization mode, and any errors experienced during the evaluation.
  &object
  spec authorization/SelfSubjectRulesReviewSpec! | Spec holds information about the request being evaluated.
  status authorization/SubjectRulesReviewStatus | Status is filled in by the server and indicates the set of actions a user can perform.

= authorization/SelfSubjectRulesReviewSpec | SelfSubjectRulesReviewSpec defines the specification for SelfSubjectRulesReview.
  namespace string | Namespace to evaluate rules for. Required.

= authorization/SubjectRulesReviewStatus | SubjectRulesReviewStatus contains the result of a rules check. This check can be incomplete depending on the set of authorizers the server is configured with and any errors experienced during evaluation.
  evaluationError string | EvaluationError can appear in combination with Rules. It indicates an error occurred during rule evaluation, such as an authorizer that doesn't support rule evaluation, and that ResourceRules and/or NonResourceRules may be incomplete.
  incomplete boolean! | Incomplete is true when the rules returned by this call are incomplete.
  nonResourceRules []authorization/NonResourceRule{atomic}! | NonResourceRules is the list of actions the subject is allowed to perform on non-resources.
  resourceRules []authorization/ResourceRule{atomic}! | ResourceRules is the list of actions the subject is allowed to perform on resources.

= authorization/ResourceRule | ResourceRule is the list of actions the subject is allowed to perform on resources. The list ordering isn't significant, may contain duplicates, and possibly be incomplete.
  apiGroups []string{atomic} | APIGroups is the name of the APIGroup that contains the resources.
  resourceNames []string{atomic} | ResourceNames is an optional white list of names that the rule applies to.
  resources []string{atomic} | Resources is a list of resources this rule applies to.
  verbs []string{atomic}! | Verb is a list of kubernetes resource API verbs, like: get, list, watch, create, update, delete, proxy.

= authorization/NonResourceRule | NonResourceRule holds information that describes a rule for the non-resource
  nonResourceURLs []string{atomic} | NonResourceURLs is a set of partial urls that a user should have access to.
  verbs []string{atomic}! | Verb is a list of kubernetes non-resource API verbs, like: get, post, put, delete, patch, head, options.

= authentication/SelfSubjectReview | SelfSubjectReview contains the user information that the kube-apiserver has about the user making this request.
  &object
  status authentication/SelfSubjectReviewStatus | Status is filled in by the server with the user attributes.

= authentication/SelfSubjectReviewStatus | SelfSubjectReviewStatus is filled by the kube-apiserver and sent back to a user.
  userInfo authentication/UserInfo | User attributes of the user making this request.

= authentication/UserInfo | UserInfo holds the information about the user needed to implement the user.Info interface.
  extra object | Any additional information provided by the authenticator.
  groups []string{atomic} | The names of groups this user is a part of.
  uid string | A unique value that identifies this user across time.
  username string | The name that uniquely identifies this user among all active users.

= authentication/TokenRequest | TokenRequest requests a token for a given service account.
  &object
  spec authentication/TokenRequestSpec! | Spec holds information about the request being evaluated.
  status authentication/TokenRequestStatus | Status is filled in by the server and indicates whether the token can be authenticated.

= authentication/TokenRequestSpec | TokenRequestSpec contains client provided parameters of a token request.
  audiences []string{atomic}! | Audiences are the intendend audiences of the token.
  boundObjectRef authentication/BoundObjectReference | BoundObjectRef is a reference to an object that the token will be bound to.
  expirationSeconds int64 | ExpirationSeconds is the requested duration of validity of the request.

= authentication/BoundObjectReference | BoundObjectReference is a reference to an object that a token is bound to.
  apiVersion string | API version of the referent.
  kind string | Kind of the referent. Valid kinds are 'Pod' and 'Secret'.
  name string | Name of the referent.
  uid string | UID of the referent.

= authentication/TokenRequestStatus | TokenRequestStatus is the result of a token request.
  expirationTimestamp Time! | ExpirationTimestamp is the time of expiration of the returned token.
  token string! | Token is the opaque bearer token.
)";
#pragma GCC diagnostic pop

constexpr std::string_view kApiVersionDoc =
    "APIVersion defines the versioned schema of this representation of an object. Servers "
    "should convert recognized schemas to the latest internal value, and may reject "
    "unrecognized values.";
constexpr std::string_view kKindDoc =
    "Kind is a string value representing the REST resource this object represents. Servers may "
    "infer this from the endpoint the client submits requests to. Cannot be updated. In "
    "CamelCase.";

struct Prefix {
  std::string_view shorthand;
  std::string_view full;
};
constexpr Prefix kPrefixes[] = {
    {"meta/", "io.k8s.apimachinery.pkg.apis.meta.v1."},
    {"runtime/", "io.k8s.apimachinery.pkg.runtime."},
    {"core/", "io.k8s.api.core.v1."},
    {"apps/", "io.k8s.api.apps.v1."},
    {"autoscaling/", "io.k8s.api.autoscaling.v1."},
    {"discovery/", "io.k8s.api.discovery.v1."},
    {"networking/", "io.k8s.api.networking.v1."},
    {"coordination/", "io.k8s.api.coordination.v1."},
    {"rbac/", "io.k8s.api.rbac.v1."},
    {"policy/", "io.k8s.api.policy.v1."},
    {"authorization/", "io.k8s.api.authorization.v1."},
    {"authentication/", "io.k8s.api.authentication.v1."},
};

constexpr std::string_view kQuantity = "io.k8s.apimachinery.pkg.api.resource.Quantity";
constexpr std::string_view kIntOrString = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
constexpr std::string_view kTime = "io.k8s.apimachinery.pkg.apis.meta.v1.Time";
constexpr std::string_view kMicroTime = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime";

[[noreturn]] void Die(std::string_view what, std::string_view line) {
  // The table is compiled in; a mistake in it is a programming error caught by every test.
  std::fprintf(stderr, "openapi_schemas: %.*s in line: %.*s\n", static_cast<int>(what.size()),
               what.data(), static_cast<int>(line.size()), line.data());
  std::abort();
}

// Leading spaces and tabs, trailing ones and a CR (a CRLF line).
std::string_view Trim(std::string_view s) { return TrimRight(TrimLeft(s, " \t"), " \t\r"); }

std::string FullName(std::string_view shorthand, std::string_view line) {
  if (shorthand == "Quantity") return std::string(kQuantity);
  if (shorthand == "IntOrString") return std::string(kIntOrString);
  if (shorthand == "Time") return std::string(kTime);
  if (shorthand == "MicroTime") return std::string(kMicroTime);
  for (const Prefix& p : kPrefixes) {
    if (shorthand.substr(0, p.shorthand.size()) == p.shorthand) {
      return std::string(p.full) + std::string(shorthand.substr(p.shorthand.size()));
    }
  }
  Die("unknown type", line);
}

std::string Ref(std::string_view name, OpenApiFlavor flavor) {
  return (flavor == OpenApiFlavor::kV3 ? "#/components/schemas/" : "#/definitions/") +
         std::string(name);
}

// The schema of a scalar or reference type token (no "[]", no modifiers).
Json TypeSchema(std::string_view token, OpenApiFlavor flavor, std::string_view line) {
  if (token == "string") return {{"type", "string"}};
  if (token == "integer") return {{"type", "integer"}, {"format", "int32"}};
  if (token == "int64") return {{"type", "integer"}, {"format", "int64"}};
  if (token == "boolean") return {{"type", "boolean"}};
  if (token == "number") return {{"type", "number"}, {"format", "double"}};
  if (token == "object") return {{"type", "object"}};
  if (token.substr(0, 4) == "map:") {
    std::string_view value = token.substr(4);
    Json item;
    if (value == "string") {
      item = {{"type", "string"}};
    } else if (value == "byte") {
      item = {{"type", "string"}, {"format", "byte"}};
    } else if (value == "Quantity") {
      item = {{"$ref", Ref(kQuantity, flavor)}};
    } else {
      Die("unknown map value type", line);
    }
    return {{"type", "object"}, {"additionalProperties", item}};
  }
  return {{"$ref", Ref(FullName(token, line), flavor)}};
}

void ApplyModifiers(std::string_view mods, Json& schema, std::string_view line) {
  while (!mods.empty()) {
    size_t semi = mods.find(';');
    std::string_view m = mods.substr(0, semi);
    mods = semi == std::string_view::npos ? std::string_view() : mods.substr(semi + 1);
    if (m == "atomic" || m == "set") {
      schema["x-kubernetes-list-type"] = std::string(m);
    } else if (m.substr(0, 4) == "map:") {
      schema["x-kubernetes-list-type"] = "map";
      Json keys = Json::array();
      std::string_view rest = m.substr(4);
      while (!rest.empty()) {
        size_t comma = rest.find(',');
        keys.push_back(std::string(rest.substr(0, comma)));
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      }
      schema["x-kubernetes-list-map-keys"] = keys;
    } else {
      size_t colon = m.find(':');
      std::string_view strategy = m.substr(0, colon);
      if (strategy != "merge" && strategy != "retainKeys" && strategy != "merge,retainKeys") {
        Die("unknown modifier", line);
      }
      schema["x-kubernetes-patch-strategy"] = std::string(strategy);
      if (colon != std::string_view::npos) {
        schema["x-kubernetes-patch-merge-key"] = std::string(m.substr(colon + 1));
      }
    }
  }
}

// A property schema from a type spec such as "[]core/Container{merge:name;map:name}".
Json PropertySchema(std::string_view spec, OpenApiFlavor flavor, std::string_view line) {
  std::string_view mods;
  if (size_t brace = spec.find('{'); brace != std::string_view::npos) {
    if (spec.back() != '}') Die("unterminated modifiers", line);
    mods = spec.substr(brace + 1, spec.size() - brace - 2);
    spec = spec.substr(0, brace);
  }
  Json schema;
  if (spec.substr(0, 2) == "[]") {
    schema = {{"type", "array"}, {"items", TypeSchema(spec.substr(2), flavor, line)}};
  } else {
    schema = TypeSchema(spec, flavor, line);
  }
  ApplyModifiers(mods, schema, line);
  return schema;
}

void AddProperty(Json& def, const std::string& name, Json schema, std::string_view description,
                 bool required, OpenApiFlavor flavor) {
  // OpenAPI 3 ignores siblings of "$ref", so a described reference is wrapped in allOf, as a
  // real server does (kubectl explain then prints the field's and the type's descriptions).
  if (flavor == OpenApiFlavor::kV3 && schema.contains("$ref")) {
    Json ref = {{"$ref", schema["$ref"]}};
    schema.erase("$ref");
    schema["allOf"] = Json::array({std::move(ref)});
  }
  if (!description.empty()) schema["description"] = std::string(description);
  def["properties"][name] = std::move(schema);
  if (required) def["required"].push_back(name);
}

// The group/version/kind of every definition that is a served kind, a list of one, or Scale.
std::map<std::string, Json> KindGvks() {
  std::map<std::string, Json> out;
  for (const ResourceType& rt : AllResourceTypes()) {
    Json gvk = {{"group", rt.group}, {"kind", rt.kind}, {"version", rt.version}};
    out[OpenApiKindName(rt)] = Json::array({gvk});
    if (rt.create_only) continue;  // a review has no list
    Json list_gvk = {{"group", rt.group}, {"kind", rt.ListKind()}, {"version", rt.version}};
    out[OpenApiListName(rt)] = Json::array({list_gvk});
  }
  out[OpenApiScaleName()] =
      Json::array({{{"group", "autoscaling"}, {"kind", "Scale"}, {"version", "v1"}}});
  out[OpenApiTokenRequestName()] = Json::array(
      {{{"group", "authentication.k8s.io"}, {"kind", "TokenRequest"}, {"version", "v1"}}});
  out["io.k8s.apimachinery.pkg.apis.meta.v1.Status"] =
      Json::array({{{"group", ""}, {"kind", "Status"}, {"version", "v1"}}});
  // DeleteOptions and WatchEvent are registered in every served group, as on a real server.
  std::set<std::pair<std::string, std::string>> gvs = {{"", "v1"}, {"autoscaling", "v1"}};
  for (const ResourceType& rt : AllResourceTypes()) gvs.emplace(rt.group, rt.version);
  for (const char* kind : {"DeleteOptions", "WatchEvent"}) {
    Json list = Json::array();
    for (const auto& [group, version] : gvs) {
      list.push_back({{"group", group}, {"kind", kind}, {"version", version}});
    }
    out[std::string("io.k8s.apimachinery.pkg.apis.meta.v1.") + kind] = list;
  }
  return out;
}

Json BuildDefinitions(OpenApiFlavor flavor) {
  Json defs = Json::object();
  // Types with a custom JSON form.
  defs[std::string(kQuantity)] = {
      {"description",
       "Quantity is a fixed-point representation of a number, serialized as a string such as "
       "\"100m\", \"1Gi\" or \"2\" (a number is also accepted)."}};
  defs[std::string(kIntOrString)] = {
      {"description",
       "IntOrString is a type that can hold an int32 or a string. When used in JSON or YAML "
       "marshalling and unmarshalling, it produces or consumes the inner type."},
      {"format", "int-or-string"}};
  if (flavor == OpenApiFlavor::kV3) {
    defs[std::string(kQuantity)]["oneOf"] =
        Json::array({{{"type", "string"}}, {{"type", "number"}}});
    defs[std::string(kIntOrString)]["oneOf"] =
        Json::array({{{"type", "integer"}}, {{"type", "string"}}});
  } else {
    defs[std::string(kQuantity)]["type"] = "string";
    defs[std::string(kIntOrString)]["type"] = "string";
  }
  defs[std::string(kTime)] = {
      {"description",
       "Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON, "
       "in RFC 3339 form with second precision."},
      {"type", "string"},
      {"format", "date-time"}};
  defs[std::string(kMicroTime)] = {
      {"description", "MicroTime is version of Time with microsecond level precision."},
      {"type", "string"},
      {"format", "date-time"}};
  defs["io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1"] = {
      {"description",
       "FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format."},
      {"type", "object"}};
  defs["io.k8s.apimachinery.pkg.apis.meta.v1.Patch"] = {
      {"description",
       "Patch is provided to give a concrete name and type to the Kubernetes PATCH request "
       "body."},
      {"type", "object"}};
  defs["io.k8s.apimachinery.pkg.runtime.RawExtension"] = {
      {"description", "RawExtension is used to hold extensions in external versions."},
      {"type", "object"}};

  std::string current;
  std::istringstream in{std::string(kSchemaText)};
  std::string raw;
  while (std::getline(in, raw)) {
    std::string_view line = Trim(raw);
    if (line.empty()) continue;
    if (line.front() == '=') {
      size_t bar = line.find(" | ");
      if (bar == std::string_view::npos) Die("definition without description", line);
      current = FullName(Trim(line.substr(1, bar - 1)), line);
      if (defs.contains(current)) Die("duplicate definition", line);
      defs[current] = {{"description", std::string(line.substr(bar + 3))},
                       {"type", "object"},
                       {"properties", Json::object()}};
      continue;
    }
    if (current.empty()) Die("property outside a definition", line);
    Json& def = defs[current];
    if (line == "&object") {
      AddProperty(def, "apiVersion", {{"type", "string"}}, kApiVersionDoc, false, flavor);
      AddProperty(def, "kind", {{"type", "string"}}, kKindDoc, false, flavor);
      AddProperty(def, "metadata",
                  {{"$ref", Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", flavor)}},
                  "Standard object's metadata.", false, flavor);
      continue;
    }
    if (line.substr(0, 6) == "&list ") {
      std::string item = FullName(Trim(line.substr(6)), line);
      AddProperty(def, "apiVersion", {{"type", "string"}}, kApiVersionDoc, false, flavor);
      AddProperty(def, "items", {{"type", "array"}, {"items", {{"$ref", Ref(item, flavor)}}}},
                  "List of " + item.substr(item.rfind('.') + 1) + " objects.", true, flavor);
      AddProperty(def, "kind", {{"type", "string"}}, kKindDoc, false, flavor);
      AddProperty(def, "metadata",
                  {{"$ref", Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta", flavor)}},
                  "Standard list metadata.", false, flavor);
      continue;
    }
    size_t bar = line.find(" | ");
    if (bar == std::string_view::npos) Die("property without description", line);
    std::string_view head = Trim(line.substr(0, bar));
    size_t space = head.find(' ');
    if (space == std::string_view::npos) Die("property without type", line);
    const std::string name(head.substr(0, space));
    std::string_view spec = Trim(head.substr(space + 1));
    bool required = false;
    if (!spec.empty() && spec.back() == '!') {
      required = true;
      spec.remove_suffix(1);
    }
    AddProperty(def, name, PropertySchema(spec, flavor, line), line.substr(bar + 3), required,
                flavor);
  }

  for (auto& [name, gvk] : KindGvks()) {
    if (!defs.contains(name)) Die("no definition for a served kind", name);
    defs[name]["x-kubernetes-group-version-kind"] = gvk;
  }
  return defs;
}

void CollectRefs(const Json& j, std::set<std::string>& out) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (key == "$ref" && value.is_string()) {
        const std::string ref = value.get<std::string>();
        out.insert(ref.substr(ref.rfind('/') + 1));
      } else {
        CollectRefs(value, out);
      }
    }
  } else if (j.is_array()) {
    for (const auto& v : j) CollectRefs(v, out);
  }
}

}  // namespace

const Json& OpenApiDefinitions(OpenApiFlavor flavor) {
  static const Json kV2 = BuildDefinitions(OpenApiFlavor::kV2);
  static const Json kV3 = BuildDefinitions(OpenApiFlavor::kV3);
  return flavor == OpenApiFlavor::kV3 ? kV3 : kV2;
}

std::string OpenApiKindName(const ResourceType& rt) {
  std::string group = rt.group.empty() ? "core" : rt.group.substr(0, rt.group.find('.'));
  return "io.k8s.api." + group + "." + rt.version + "." + rt.kind;
}

std::string OpenApiListName(const ResourceType& rt) { return OpenApiKindName(rt) + "List"; }

std::string OpenApiScaleName() { return "io.k8s.api.autoscaling.v1.Scale"; }

std::string OpenApiTokenRequestName() { return "io.k8s.api.authentication.v1.TokenRequest"; }

std::vector<std::string> OpenApiClosure(const std::vector<std::string>& roots) {
  const Json& defs = OpenApiDefinitions(OpenApiFlavor::kV3);
  std::set<std::string> seen;
  std::vector<std::string> stack;
  for (const auto& r : roots) {
    if (defs.contains(r) && seen.insert(r).second) stack.push_back(r);
  }
  while (!stack.empty()) {
    std::string name = std::move(stack.back());
    stack.pop_back();
    std::set<std::string> refs;
    CollectRefs(defs.at(name), refs);
    for (const auto& ref : refs) {
      if (defs.contains(ref) && seen.insert(ref).second) stack.push_back(ref);
    }
  }
  return {seen.begin(), seen.end()};
}

}  // namespace steward::cluster
