#!/usr/bin/env bash
# Installs what is missing, builds Steward and runs its embedded cluster with example objects.
# Ctrl-C stops it. Until the lifecycle engine lands, this is Steward's main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
echo "== building steward"
NINJA_ARGS="steward" scripts/build.sh build
dir=build/up
mkdir -p "$dir"
kubeconfig="$dir/kubeconfig"
rm -f "$dir/cluster.out"
build/steward cluster --profile "${PROFILE:-realistic}" --kubeconfig-out "$kubeconfig" \
  --listen 127.0.0.1:0 --ingress-listen 127.0.0.1:0 >"$dir/cluster.out" 2>&1 &
pid=$!
trap 'kill -INT $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  grep -q '^Ingress:' "$dir/cluster.out" 2>/dev/null && break
  kill -0 $pid 2>/dev/null || { cat "$dir/cluster.out"; exit 1; }
  sleep 0.1
done
cat "$dir/cluster.out"
ingress=$(sed -n 's/^Ingress: *//p' "$dir/cluster.out")
port=${ingress##*:}
k() { kubectl --kubeconfig "$kubeconfig" "$@"; }
echo "== applying examples/hello.yaml"
k apply -f examples/hello.yaml
k rollout status deployment/hello --timeout=60s
k wait --for=jsonpath='{.status.loadBalancer.ingress[0].ip}'=127.0.0.1 ingress/hello --timeout=60s
k get deployments,replicasets,pods,services,endpointslices,ingresses -o wide
echo
echo "== through the ingress listener:"
curl -s -H 'Accept: application/json' "http://hello.localhost:$port/" || true
echo
cat <<MSG

The embedded cluster is running. In another terminal:
  export KUBECONFIG=$PWD/$kubeconfig
  kubectl get all                       # what is there
  kubectl get pods -w                   # watch it change
  kubectl scale deployment hello --replicas=4
  kubectl delete service hello --wait   # takes the simulated load-balancer clean-up time
  curl http://hello.localhost:$port/    # a pod answers through the ingress listener
Ctrl-C here stops the cluster.
MSG
wait $pid
