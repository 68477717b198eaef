// Node-RED settings for a process pod of the embedded cluster (docs/embedded-cluster.md,
// "Process pods"): `scripts/up.sh --real-node-red` and e2e_node_red_test start Node-RED 4
// (tests/real-launcher/node-red, installed by scripts/setup.sh) with these. It listens on
// 127.0.0.1:$PORT, the loopback port the kubelet gave the pod's first containerPort ("web"),
// and keeps its user dir (flows, credentials) in the pod's own directory, removed with the pod.
module.exports = {
    uiHost: "127.0.0.1",
    uiPort: parseInt(process.env.PORT || "1880", 10),
    userDir: process.env.STEWARD_POD_DIR,
    flowFile: "flows.json",
    // The project's id keys its credentials file (a demo: nothing secret is kept).
    credentialSecret: process.env.FORGE_PROJECT_ID || "steward-process-pod",
    diagnostics: { enabled: false, ui: false },
    telemetry: { enabled: false },
    runtimeState: { enabled: false, ui: false },
    logging: { console: { level: "info", metrics: false, audit: false } },
    externalModules: { autoInstall: false, palette: { allowInstall: false } },
    editorTheme: { tours: false, projects: { enabled: false } },
    functionExternalModules: false,
};
