#!/bin/sh
# Prints a cluster profile (docs/profiles.md) in which every flowfuse/node-red* container runs a
# real Node-RED 4 as a process pod of the embedded cluster (docs/embedded-cluster.md, "Process
# pods"): tests/real-launcher/node-red's Node-RED (installed by scripts/setup.sh) with
# scripts/node-red/settings.js, Ready once its editor answers GET /.
# Usage: scripts/node-red/profile.sh [BASE]   BASE: instant, realistic (default) or hostile.
# Used by `scripts/up.sh --real-node-red` and e2e_node_red_test.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
red="$root/tests/real-launcher/node-red/node_modules/node-red/red.js"
cat <<YAML
base: ${1:-realistic}
process_images:
  - image: "flowfuse/node-red*"
    command: "exec node '$red' --settings '$root/scripts/node-red/settings.js'"
    ready_path: /
YAML
