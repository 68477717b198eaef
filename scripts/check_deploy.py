#!/usr/bin/env python3
"""Renders every overlay under deploy/overlays with `kubectl kustomize` and checks what an
operator relies on: the kinds are there, Steward's pod meets the restricted Pod Security
Standard, its probes point at /healthz and /readyz, the configuration and Secrets it mounts
exist or are documented as created first, and Leases are granted only where replicas run.

Usage: scripts/check_deploy.py [DEPLOY_DIR]   (exit 1 naming each failed check)
"""
import pathlib
import subprocess
import sys

import yaml

REQUIRED_KINDS = {"Namespace", "ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Deployment",
                  "Service", "PodDisruptionBudget", "NetworkPolicy"}
# Created by the operator before applying (docs/deploy.md): never checked in.
OPERATOR_SECRETS = {"steward-api-token", "steward-db"}

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def render(overlay):
    out = subprocess.run(["kubectl", "kustomize", str(overlay)], capture_output=True, text=True)
    if out.returncode != 0:
        failures.append(f"{overlay}: kubectl kustomize failed: {out.stderr.strip()}")
        return []
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def check_pod(name, pod, objects):
    sc = pod.get("securityContext", {})
    check(sc.get("runAsNonRoot") is True, f"{name}: pod securityContext.runAsNonRoot is not true")
    check(sc.get("seccompProfile", {}).get("type") == "RuntimeDefault",
          f"{name}: pod seccompProfile is not RuntimeDefault")
    for c in pod.get("containers", []):
        csc = c.get("securityContext", {})
        where = f"{name}: container {c['name']}"
        check(csc.get("allowPrivilegeEscalation") is False, f"{where}: allowPrivilegeEscalation")
        check(csc.get("readOnlyRootFilesystem") is True, f"{where}: readOnlyRootFilesystem")
        check(csc.get("capabilities", {}).get("drop") == ["ALL"], f"{where}: capabilities.drop")
        check("limits" in c.get("resources", {}) and "requests" in c.get("resources", {}),
              f"{where}: resources without requests and limits")
        probes = {k: c.get(k, {}).get("httpGet", {}).get("path") for k in
                  ("livenessProbe", "readinessProbe")}
        check(probes == {"livenessProbe": "/healthz", "readinessProbe": "/readyz"},
              f"{where}: probes {probes}")
        mounts = {m["name"] for m in c.get("volumeMounts", [])}
        volumes = {v["name"] for v in pod.get("volumes", [])}
        check(mounts <= volumes, f"{where}: mounts {sorted(mounts - volumes)} have no volume")
    configmaps = {o["metadata"]["name"] for o in objects if o["kind"] == "ConfigMap"}
    claims = {o["metadata"]["name"] for o in objects if o["kind"] == "PersistentVolumeClaim"}
    for v in pod.get("volumes", []):
        if "configMap" in v:
            check(v["configMap"]["name"] in configmaps, f"{name}: ConfigMap {v['configMap']} missing")
        if "persistentVolumeClaim" in v:
            check(v["persistentVolumeClaim"]["claimName"] in claims, f"{name}: PVC missing")
        if "secret" in v:
            check(v["secret"]["secretName"] in OPERATOR_SECRETS,
                  f"{name}: Secret {v['secret']['secretName']} is neither rendered nor documented")


def check_overlay(overlay):
    objects = render(overlay)
    if not objects:
        return
    kinds = {o["kind"] for o in objects}
    check(REQUIRED_KINDS <= kinds, f"{overlay.name}: missing kinds {sorted(REQUIRED_KINDS - kinds)}")
    check(all(o["kind"] != "Secret" for o in objects), f"{overlay.name}: renders a Secret")
    namespaces = {o["metadata"]["name"] for o in objects if o["kind"] == "Namespace"}
    for o in objects:
        if o["kind"] != "Namespace":
            ns = o["metadata"].get("namespace")
            check(ns in namespaces, f"{overlay.name}: {o['kind']} {o['metadata']['name']} is in "
                                    f"namespace {ns}, not the rendered one {sorted(namespaces)}")
    deployments = [o for o in objects if o["kind"] == "Deployment"]
    for d in deployments:
        check_pod(f"{overlay.name}/{d['metadata']['name']}", d["spec"]["template"]["spec"], objects)
        # Objects Steward manages carry this label; its own must not, or it would count them.
        labels = d["spec"]["template"]["metadata"].get("labels", {})
        check(labels.get("app.kubernetes.io/managed-by") != "steward",
              f"{overlay.name}: Steward's own pods carry managed-by=steward")
    config = next((o for o in objects if o["kind"] == "ConfigMap"), None)
    settings = yaml.safe_load(config["data"]["steward.yaml"]) if config else {}
    sharded = bool(settings.get("replicas", {}).get("enabled"))
    replicas = deployments[0]["spec"].get("replicas", 1) if deployments else 0
    check(sharded == (replicas > 1),
          f"{overlay.name}: {replicas} replicas but replicas.enabled is {sharded}")
    if replicas == 1:
        check(deployments[0]["spec"].get("strategy", {}).get("type") == "Recreate",
              f"{overlay.name}: one SQLite replica must be replaced with Recreate")
    rules = [r or {} for o in objects if o["kind"] == "Role" for r in o.get("rules") or []]
    leases = any("leases" in (r.get("resources") or []) for r in rules)
    check(leases == sharded, f"{overlay.name}: Lease rules {leases}, sharded {sharded}")
    check(all("*" not in (r.get("verbs") or []) + (r.get("resources") or []) for r in rules),
          f"{overlay.name}: a wildcard in the Role")


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "deploy")
    overlays = sorted(p for p in (root / "overlays").iterdir() if p.is_dir())
    check(len(overlays) >= 2, f"{root}/overlays: expected the SQLite and PostgreSQL overlays")
    for overlay in overlays:
        check_overlay(overlay)
    for f in failures:
        print(f"check_deploy: {f}")
    if not failures:
        print(f"check_deploy: {len(overlays)} overlays render and pass")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
