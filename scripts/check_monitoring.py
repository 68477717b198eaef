#!/usr/bin/env python3
"""Checks Steward's Prometheus rules (deploy/monitoring, docs/operations.md "Monitoring"):

- `promtool check rules` on steward-rules.yaml;
- `promtool test rules` on steward-rules.test.yaml, and that the tests give every alert a case
  where it fires and one where it stays quiet;
- prometheusrule.yaml (the Prometheus Operator's PrometheusRule) holds exactly the groups of
  steward-rules.yaml: `--write` makes it from them.

Usage: scripts/check_monitoring.py [--write]   (exit 1 naming each failed check)
promtool comes with Debian's `prometheus` package (scripts/setup.sh installs it).
"""
import pathlib
import subprocess
import sys

import yaml

DIR = pathlib.Path(__file__).resolve().parent.parent / "deploy" / "monitoring"
RULES = DIR / "steward-rules.yaml"
TESTS = DIR / "steward-rules.test.yaml"
OPERATOR = DIR / "prometheusrule.yaml"
HEADER = """# The Prometheus Operator's form of steward-rules.yaml (the same groups), made by
# `scripts/check_monitoring.py --write`; edit steward-rules.yaml, not this file. Add the labels
# your Prometheus' ruleSelector asks for (kubectl label, or a kustomize patch).
"""

failures = []


def literal_blocks(dumper, text):
    """Multi-line strings (the longer expressions) as YAML literal blocks, as written."""
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


yaml.SafeDumper.add_representer(str, literal_blocks)


def operator_rule(groups):
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "steward", "namespace": "steward",
                     "labels": {"app.kubernetes.io/name": "steward"}},
        "spec": {"groups": groups},
    }


def promtool(*args):
    out = subprocess.run(["promtool", *args], capture_output=True, text=True, cwd=DIR)
    if out.returncode != 0:
        failures.append(f"promtool {' '.join(args)}:\n{out.stdout}{out.stderr}")


def main():
    groups = yaml.safe_load(RULES.read_text())["groups"]
    if "--write" in sys.argv[1:]:
        OPERATOR.write_text(HEADER + yaml.safe_dump(operator_rule(groups), sort_keys=False,
                                                    width=100, allow_unicode=True))
    if yaml.safe_load(OPERATOR.read_text()) != operator_rule(groups):
        failures.append(f"{OPERATOR.name} does not hold the groups of {RULES.name}: "
                        "run scripts/check_monitoring.py --write")

    promtool("check", "rules", RULES.name)
    promtool("test", "rules", TESTS.name)

    alerts = {r["alert"] for g in groups for r in g["rules"] if "alert" in r}
    fires, quiet = set(), set()
    for t in yaml.safe_load(TESTS.read_text())["tests"]:
        for a in t.get("alert_rule_test", []):
            (fires if a.get("exp_alerts") else quiet).add(a["alertname"])
    for alert in sorted(alerts):
        if alert not in fires:
            failures.append(f"{TESTS.name}: no case where {alert} fires")
        if alert not in quiet:
            failures.append(f"{TESTS.name}: no case where {alert} stays quiet")
    for name in sorted((fires | quiet) - alerts):
        failures.append(f"{TESTS.name}: tests {name}, which {RULES.name} does not have")

    for f in failures:
        print(f"check_monitoring: {f}", file=sys.stderr)
    if not failures:
        print(f"check_monitoring: {len(alerts)} alerts, each tested firing and quiet; "
              f"{OPERATOR.name} matches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
