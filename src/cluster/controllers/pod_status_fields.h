// What the kubelet writes into a pod's status, as a real node would, computed from the pod
// alone: its conditions in the kubelet's order, container images and IDs as a container
// runtime reports them, the QoS class, and durations as Go prints them (event messages).
//
// Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "common/json.h"

namespace steward::cluster::controllers {

// Sets condition `type` of `status` (True/False, with reason and message, or neither when
// `reason` is empty); lastTransitionTime (`now`) moves only when the status changes. The
// conditions stay in the kubelet's order: PodReadyToStartContainers, Initialized, Ready,
// ContainersReady, PodScheduled, then any other.
void SetPodCondition(Json& status, std::string_view type, bool value, std::string_view reason,
                     const std::string& message, const std::string& now);
// The reference a container runtime reports: "nginx" -> "docker.io/library/nginx:latest".
std::string NormalizeImage(const std::string& image);
// The image ID of a normalized reference: "<repository>@sha256:<64 hex>", the digest derived
// from the reference (stable, so that the same image always has the same ID); a reference by
// digest is its own ID.
std::string ImageId(const std::string& normalized);
// A container's ID as containerd reports it: "containerd://<64 hex digits>" derived from `seed`
// (a fresh random value per container start).
std::string ContainerId(std::string_view seed);
// status.qosClass: BestEffort (no requests nor limits), Guaranteed (cpu and memory limits on
// every container, requests equal to them when given) or Burstable.
std::string QosClass(const Json& pod);
// "850ms" below a second, else "2.500s".
std::string GoDuration(std::chrono::milliseconds d);

}  // namespace steward::cluster::controllers
