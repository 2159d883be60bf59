#!/usr/bin/env python3
"""Lint, render and validate the Helm chart in chart/, offline.

Usage:
    python scripts/check_chart.py [--kube-version 1.30.0] [--show NAME]

Needs (in the project venv, ~/.cache/lance-catalog/venv):
    pip install "helm-python-sdk==0.2.2" "kubernetes-validate==1.37.0"

helm-python-sdk wraps Helm's Go SDK (v4) in a shared library, so no helm
binary and no cluster are involved. For every case below the script

  1. validates the values against chart/values.schema.json and lints the
     chart with them (strict: a warning fails);
  2. renders the chart as `helm template` would for a cluster of
     KUBE_VERSION that serves the Prometheus Operator's
     monitoring.coreos.com/v1 (so the HPA, the PDB and the ServiceMonitor
     render);
  3. validates every rendered object with kubernetes-validate against the
     Kubernetes KUBE_VERSION schemas in strict mode (unknown fields fail).
     The ServiceMonitor is a CRD that kubernetes-validate has no schema for:
     it gets a loose schema of the fields the chart writes (below) and is
     cross-checked against the Service instead;
  4. asserts what the chart promises: every container runs as non-root
     with a read-only root filesystem, no privilege escalation and every
     capability dropped, under seccomp RuntimeDefault (restricted Pod
     Security); liveness probes /healthz and readiness /readyz on the `http`
     port; the Service port is h2c; no credential is a literal in the
     manifests (storage credentials and the JWT secret only through
     secretKeyRef / secretRef); selectors, ports, volumes and config maps
     line up; every LANCE_CATALOG_* variable is one the server reads
     (src/app/config/) and config.toml holds only known keys of the right
     type that no chart-set variable overrides;

and checks that values which cannot work are refused at render time.
Exits 1 on any failure, after printing every failure and a summary.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import tomllib
from pathlib import Path
from typing import Any, Callable

T_START = time.perf_counter()

ROOT = Path(__file__).resolve().parent.parent
CHART = ROOT / "chart"
CONFIG_RS = ROOT / "src" / "app" / "config" / "mod.rs"
CONFIG_DIR = CONFIG_RS.parent
LOGGING_RS = ROOT / "src" / "telemetry" / "logging.rs"

KUBE_VERSION = "1.30.0"
RELEASE = "lc"
NAMESPACE = "catalog"
# What a cluster with the Prometheus Operator serves beyond Kubernetes
# itself (Helm's default capabilities already include autoscaling/v2 and
# policy/v1).
EXTRA_API_VERSIONS = [
    "monitoring.coreos.com/v1",
    "monitoring.coreos.com/v1/ServiceMonitor",
]

PINNED = {"helm-python-sdk": "0.2.2", "kubernetes-validate": "1.37.0"}

try:
    import helm_python as helm
    from helm_python import _native
    import jsonschema
    import kubernetes_validate
    import yaml
    from kubernetes_validate.version import __version__ as KV_VERSION
except ImportError as e:  # pragma: no cover - environment problem
    sys.exit(
        f"check_chart: {e}. Install the checker's packages into the venv:\n"
        f'  pip install "helm-python-sdk=={PINNED["helm-python-sdk"]}" '
        f'"kubernetes-validate=={PINNED["kubernetes-validate"]}"'
    )

T_IMPORTED = time.perf_counter()

# ---------------------------------------------------------------------------
# Cases: values that must render and validate, and values that must be
# refused (with a fragment of the expected message).

EDGE_CASES: dict[str, dict[str, Any]] = {
    # One replica over a local root on a PVC: PVC rendered, no PDB (a
    # budget over one replica would block every drain).
    "edge-local-pvc": {
        "root": "/var/lib/lance-catalog/data",
        "replicaCount": 1,
        "persistence": {"enabled": True, "storageClass": "standard", "size": "50Gi"},
        "tests": {"enabled": False},
    },
    # HS256 secret, whole-Secret envFrom credentials, a boolean warehouses,
    # numbers that must not print in exponent form, an existing config map,
    # an existing policies config map, a LoadBalancer and extra env.
    "edge-hs256-envfrom": {
        "warehouses": True,
        "auth": {
            "mode": "required",
            "bootstrapAdmin": "root",
            "bootstrapAdminPassword": {"existingSecret": "lance-catalog-admin"},
            "localUsers": "on",
            "jwt": {"secret": {"existingSecret": "lance-catalog-jwt"}, "issuer": "https://issuer.example"},
            "existingPoliciesConfigMap": "catalog-policies",
        },
        "storageOptions": {"aws_endpoint": "http://minio.storage:9000", "allow_http": True,
                           "aws_region": "us-east-1"},
        "storageCredentials": {"existingSecret": "minio-credentials"},
        "limits": {"maxArrowBody": 4294967296, "headerReadTimeout": 12.5},
        "tasks": {"poll": 0.5, "quota": 200},
        "trash": {"grace": "7d", "purgeExpired": True},
        "workers": 0,
        "existingConfigMap": "catalog-config",
        "extraEnv": [{"name": "RUST_BACKTRACE", "value": "1"}],
        "imagePullSecrets": ["regcred"],
        "image": {"digest": "sha256:" + "ab" * 32},
        "service": {"type": "LoadBalancer", "loadBalancerSourceRanges": ["10.0.0.0/8"],
                    "externalTrafficPolicy": "Local"},
        "startupProbe": {"enabled": True},
        "podDisruptionBudget": {"minAvailable": "", "maxUnavailable": 1},
    },
}

NEGATIVE_CASES: dict[str, tuple[dict[str, Any], str]] = {
    "memory-root-with-replicas": ({"root": "memory://"}, "memory://"),
    "local-root-without-volume": ({"root": "/data/catalog"}, "local path"),
    "credential-in-storage-options": (
        {"storageOptions": {"aws_secret_access_key": "x"}}, "looks like a credential"),
    "comma-in-storage-option": ({"storageOptions": {"aws_endpoint": "http://a,b"}}, "','"),
    "key-mapping-without-secret": (
        {"storageCredentials": {"keys": {"AWS_ACCESS_KEY_ID": "id"}}}, "existingSecret"),
    "root-outside-mount": (
        {"root": "/srv/catalog", "replicaCount": 1, "persistence": {"enabled": True}},
        "not under persistence.mountPath"),
    "warehouses-typo": ({"warehouses": "yes"}, "warehouses"),
    "auth-mode-typo": ({"auth": {"mode": "optional"}}, "auth"),
    "unknown-value": ({"replicas": 3}, "replicas"),
    "config-not-text": ({"config": 42}, "config"),
}

# The ServiceMonitor fields the chart writes (monitoring.coreos.com/v1),
# loosely: kubernetes-validate ships no CRD schemas.
SERVICE_MONITOR_SCHEMA = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"},
        "kind": {"const": "ServiceMonitor"},
        "metadata": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 253},
                "namespace": {"type": "string"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            },
        },
        "spec": {
            "type": "object",
            "required": ["selector", "endpoints"],
            "properties": {
                "selector": {"type": "object", "properties": {
                    "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}}}},
                "namespaceSelector": {"type": "object", "properties": {
                    "any": {"type": "boolean"},
                    "matchNames": {"type": "array", "items": {"type": "string"}}}},
                "endpoints": {"type": "array", "minItems": 1, "items": {
                    "type": "object",
                    "properties": {
                        "port": {"type": "string"},
                        "path": {"type": "string", "pattern": "^/"},
                        "scheme": {"enum": ["http", "https"]},
                        "interval": {"type": "string", "pattern": "^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"},
                        "scrapeTimeout": {"type": "string", "pattern": "^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"},
                        "relabelings": {"type": "array", "items": {"type": "object"}},
                        "metricRelabelings": {"type": "array", "items": {"type": "object"}},
                    },
                }},
            },
        },
    },
}

SECRET_NAME = re.compile(r"(SECRET|PASSWORD|PASSWD|TOKEN|ACCESS_KEY|PRIVATE_KEY|CREDENTIAL|API_KEY)", re.I)
SECRET_OPTION = re.compile(r"(secret|password|token|access_key|account_key|sas_)", re.I)
SECRET_LITERAL = re.compile(r"((?:AKIA|ASIA)[0-9A-Z]{16}|-----BEGIN [A-Z ]*PRIVATE KEY-----)")
# Restricted Pod Security: the only volume types allowed.
RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                      "persistentVolumeClaim", "projected", "secret"}


# ---------------------------------------------------------------------------
# What the server reads: its flags' ids, types and environment variables,
# from src/app/config/ (the config file's keys are the same ids).

def server_settings() -> tuple[dict[str, str], dict[str, str]] | None:
    """({field: rust type}, {env var: field}) of `lance-catalog serve`."""
    if not CONFIG_RS.exists():
        return None
    fields: dict[str, str] = {}
    envs: dict[str, str] = {}
    # ServeArgs flattens one struct of flags per section, each in its own
    # file of the folder: every `pub struct …Args` there.
    for path in sorted(CONFIG_DIR.glob("*.rs")):
        for body in re.findall(r"pub struct \w+Args \{(.*?)\n\}\n", path.read_text(), re.S):
            settings_of(body, fields, envs)
    if LOGGING_RS.exists() and "LANCE_CATALOG_LOG" in LOGGING_RS.read_text():
        envs["LANCE_CATALOG_LOG"] = ""
    return fields, envs


def settings_of(body: str, fields: dict[str, str], envs: dict[str, str]) -> None:
    """The flags of one struct's body into `fields` and `envs`."""
    for attr, field, ty in re.findall(r"#\[arg\((.*?)\)\]\s*pub (\w+): ([^,\n]+),", body, re.S):
        fields[field] = ty.strip()
        m = re.search(r'env\s*=\s*"([A-Z0-9_]+)"', attr)
        if m:
            envs[m.group(1)] = field


# ---------------------------------------------------------------------------

class Report:
    def __init__(self) -> None:
        self.passed = 0
        self.failures: list[str] = []
        self.notes: list[str] = []

    def check(self, case: str, ok: bool, what: str) -> bool:
        if ok:
            self.passed += 1
        else:
            self.failures.append(f"{case}: {what}")
        return ok


def render(chart: "helm.Chart", values: dict[str, Any] | None, kube_version: str) -> dict[str, str]:
    """`helm template` with capabilities.

    helm-python-sdk 0.2.2's Chart.render() passes only name, namespace,
    revision and install/upgrade, but the native helm_render decodes (strictly)
    kube_version and api_versions too, so they are passed at the ctypes layer.
    """
    opts = {
        "name": RELEASE,
        "namespace": NAMESPACE,
        "is_install": True,
        "kube_version": "v" + kube_version,
        "api_versions": EXTRA_API_VERSIONS,
    }
    raw = _native.call_string(
        "helm_render", chart._raw(), None if values is None else json.dumps(values), json.dumps(opts)
    )
    return json.loads(raw)


def objects_of(manifests: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path, text in sorted(manifests.items()):
        if not path.endswith((".yaml", ".yml")):
            continue  # NOTES.txt
        for doc in yaml.safe_load_all(text):
            if doc:
                out.append((path.split("/", 1)[1], doc))
    return out


def subset(small: dict[str, Any] | None, big: dict[str, Any] | None) -> bool:
    return bool(small) and all((big or {}).get(k) == v for k, v in small.items())


def pod_specs(objs: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    specs = []
    for o in objs:
        kind, name = o["kind"], o["metadata"]["name"]
        if kind in ("Deployment", "StatefulSet", "DaemonSet", "Job"):
            specs.append((f"{kind}/{name}", o["spec"]["template"]["spec"]))
        elif kind == "CronJob":
            specs.append((f"{kind}/{name}", o["spec"]["jobTemplate"]["spec"]["template"]["spec"]))
        elif kind == "Pod":
            specs.append((f"{kind}/{name}", o["spec"]))
    return specs


def check_security(r: Report, case: str, objs: list[dict[str, Any]]) -> None:
    for where, spec in pod_specs(objs):
        psc = spec.get("securityContext") or {}
        for key in ("hostNetwork", "hostPID", "hostIPC"):
            r.check(case, not spec.get(key), f"{where}: {key} is set")
        for v in spec.get("volumes") or []:
            kinds = set(v) - {"name"}
            r.check(case, kinds <= RESTRICTED_VOLUMES,
                    f"{where}: volume {v['name']} is {sorted(kinds)}, not allowed under restricted Pod Security")
        for c in (spec.get("initContainers") or []) + spec["containers"]:
            sc = c.get("securityContext") or {}
            at = f"{where} container {c['name']}"

            def eff(key: str) -> Any:
                return sc.get(key, psc.get(key))

            r.check(case, eff("runAsNonRoot") is True, f"{at}: runAsNonRoot is not true")
            r.check(case, eff("runAsUser") not in (0, "0"), f"{at}: runAsUser is 0")
            r.check(case, sc.get("readOnlyRootFilesystem") is True, f"{at}: readOnlyRootFilesystem is not true")
            r.check(case, sc.get("allowPrivilegeEscalation") is False, f"{at}: allowPrivilegeEscalation is not false")
            r.check(case, not sc.get("privileged"), f"{at}: privileged")
            caps = sc.get("capabilities") or {}
            r.check(case, "ALL" in (caps.get("drop") or []), f"{at}: capabilities.drop lacks ALL")
            r.check(case, set(caps.get("add") or []) <= {"NET_BIND_SERVICE"}, f"{at}: adds capabilities {caps.get('add')}")
            seccomp = (sc.get("seccompProfile") or psc.get("seccompProfile") or {}).get("type")
            r.check(case, seccomp in ("RuntimeDefault", "Localhost"), f"{at}: seccompProfile is {seccomp!r}")


def check_secrets(r: Report, case: str, objs: list[dict[str, Any]], manifests: dict[str, str]) -> dict[str, int]:
    """No credential as a literal; count the Secret references."""
    refs = {"secretKeyRef": 0, "secretRef": 0}
    for o in objs:
        r.check(case, o["kind"] != "Secret",
                f"the chart renders Secret {o['metadata']['name']}: credentials must come from an existing Secret")
    for where, spec in pod_specs(objs):
        for c in (spec.get("initContainers") or []) + spec["containers"]:
            for e in c.get("env") or []:
                name = e["name"]
                if "valueFrom" in e:
                    if "secretKeyRef" in e["valueFrom"]:
                        refs["secretKeyRef"] += 1
                    continue
                if name.endswith("_FILE") and SECRET_NAME.search(name):
                    # A path, not a secret: it must lie in a mounted Secret.
                    secret_volumes = {v["name"] for v in spec.get("volumes") or [] if "secret" in v}
                    mounts = [m["mountPath"] for m in c.get("volumeMounts") or [] if m["name"] in secret_volumes]
                    path = str(e.get("value", ""))
                    r.check(case, any(path.startswith(m.rstrip("/") + "/") for m in mounts),
                            f"{where} {c['name']}: env {name} = {path!r} is not a file of a mounted Secret")
                    continue
                r.check(case, not SECRET_NAME.search(name),
                        f"{where} {c['name']}: env {name} is a literal value; credentials only via secretKeyRef / secretRef")
                if name == "LANCE_CATALOG_STORAGE_OPTIONS":
                    for kv in str(e.get("value", "")).split(","):
                        key = kv.split("=", 1)[0]
                        r.check(case, not SECRET_OPTION.search(key) or key.endswith("_file"),
                                f"{where}: storage option {key} is a credential in plain text")
            for src in c.get("envFrom") or []:
                if "secretRef" in src:
                    refs["secretRef"] += 1
    for path, text in manifests.items():
        m = SECRET_LITERAL.search(text)
        r.check(case, m is None, f"{path}: a credential-looking literal {m.group(0)[:12] if m else ''}...")
    return refs


def check_probes(r: Report, case: str, deploy: dict[str, Any]) -> None:
    spec = deploy["spec"]["template"]["spec"]
    main = next((c for c in spec["containers"] if c["name"] == "lance-catalog"), None)
    if not r.check(case, main is not None, "Deployment has no lance-catalog container"):
        return
    ports = {p.get("name"): p["containerPort"] for p in main.get("ports") or []}
    r.check(case, "http" in ports, "container port `http` missing")
    for probe, paths in (("livenessProbe", {"/healthz"}), ("readinessProbe", {"/readyz"}),
                         ("startupProbe", {"/healthz", "/readyz"})):
        p = main.get(probe)
        if p is None:
            r.check(case, probe == "startupProbe", f"{probe} missing")
            continue
        get = p.get("httpGet") or {}
        r.check(case, get.get("path") in paths, f"{probe} path is {get.get('path')!r}, expected {' or '.join(sorted(paths))}")
        r.check(case, get.get("port") in ("http", ports.get("http")), f"{probe} port is {get.get('port')!r}, not http")
    env = {e["name"]: e.get("value") for e in main.get("env") or []}
    listen = env.get("LANCE_CATALOG_LISTEN", "")
    r.check(case, listen.rsplit(":", 1)[-1] == str(ports.get("http")),
            f"LANCE_CATALOG_LISTEN {listen!r} is not the http port {ports.get('http')}")


def check_wiring(r: Report, case: str, objs: list[dict[str, Any]], values: dict[str, Any]) -> None:
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for o in objs:
        by_kind.setdefault(o["kind"], []).append(o)
    deploys = by_kind.get("Deployment", [])
    if not r.check(case, len(deploys) == 1, f"{len(deploys)} Deployments rendered, expected 1"):
        return
    d = deploys[0]
    pod_labels = d["spec"]["template"]["metadata"].get("labels") or {}
    r.check(case, subset(d["spec"]["selector"].get("matchLabels"), pod_labels),
            "Deployment selector does not match its pod labels")
    pod = d["spec"]["template"]["spec"]
    main = pod["containers"][0]
    port_names = {p.get("name") for p in main.get("ports") or []}

    services = by_kind.get("Service", [])
    r.check(case, len(services) == 1, f"{len(services)} Services rendered, expected 1")
    for s in services:
        r.check(case, subset(s["spec"].get("selector"), pod_labels), "Service selector does not match the pods")
        for p in s["spec"]["ports"]:
            r.check(case, p.get("targetPort") in port_names | {c for c in [main["ports"][0]["containerPort"]]},
                    f"Service port {p.get('name')} targets {p.get('targetPort')!r}, not a container port")
            r.check(case, p.get("appProtocol") == "kubernetes.io/h2c",
                    f"Service port {p.get('name')} appProtocol is {p.get('appProtocol')!r}, not kubernetes.io/h2c")
    for o in by_kind.get("Pod", []):
        for s in services:
            r.check(case, not subset(s["spec"].get("selector"), o["metadata"].get("labels")),
                    f"Pod {o['metadata']['name']} matches the Service selector (it would get traffic)")

    hpas = by_kind.get("HorizontalPodAutoscaler", [])
    for h in hpas:
        ref = h["spec"]["scaleTargetRef"]
        r.check(case, (ref["kind"], ref["name"]) == ("Deployment", d["metadata"]["name"]),
                "HPA does not target the Deployment")
    r.check(case, not (hpas and "replicas" in d["spec"]),
            "Deployment sets replicas while an HPA owns the count")
    for p in by_kind.get("PodDisruptionBudget", []):
        r.check(case, subset(p["spec"]["selector"].get("matchLabels"), pod_labels),
                "PDB selector does not match the pods")
    for sm in by_kind.get("ServiceMonitor", []):
        ok = False
        for s in services:
            if subset(sm["spec"]["selector"].get("matchLabels"), s["metadata"].get("labels")):
                names = {p.get("name") for p in s["spec"]["ports"]}
                ok = all(e.get("port") in names for e in sm["spec"]["endpoints"])
        r.check(case, ok, "ServiceMonitor selects no Service port of the release")
        r.check(case, all(e.get("path") == "/metrics" for e in sm["spec"]["endpoints"]),
                "ServiceMonitor does not scrape /metrics")

    # Volumes: every mount has a volume; every config map is rendered or
    # named by an existing* value; every claim is rendered or existing.
    volumes = {v["name"]: v for v in pod.get("volumes") or []}
    for c in pod["containers"]:
        for m in c.get("volumeMounts") or []:
            r.check(case, m["name"] in volumes, f"mount {m['mountPath']} names no volume {m['name']}")
    r.check(case, any(m["mountPath"] == "/tmp" for m in main.get("volumeMounts") or []),
            "no writable /tmp (the root filesystem is read-only)")
    rendered_cms = {o["metadata"]["name"] for o in by_kind.get("ConfigMap", [])}
    existing = {values.get("existingConfigMap"), (values.get("auth") or {}).get("existingPoliciesConfigMap")}
    rendered_pvcs = {o["metadata"]["name"] for o in by_kind.get("PersistentVolumeClaim", [])}
    for v in volumes.values():
        if "configMap" in v:
            name = v["configMap"]["name"]
            r.check(case, name in rendered_cms or name in existing, f"volume {v['name']}: ConfigMap {name} is nowhere")
        if "persistentVolumeClaim" in v:
            name = v["persistentVolumeClaim"]["claimName"]
            r.check(case, name in rendered_pvcs or name == (values.get("persistence") or {}).get("existingClaim"),
                    f"volume {v['name']}: claim {name} is nowhere")


def check_server_settings(r: Report, case: str, objs: list[dict[str, Any]],
                          settings: tuple[dict[str, str], dict[str, str]] | None) -> None:
    if settings is None:
        return
    fields, envs = settings
    d = next(o for o in objs if o["kind"] == "Deployment")
    main = d["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e for e in main.get("env") or []}
    for name, e in env.items():
        if name.startswith("LANCE_CATALOG_"):
            r.check(case, name in envs, f"env {name} is not a setting of the server (src/app/config/)")
        if name in envs and fields.get(envs[name], "").startswith(("usize", "f64")) and "value" in e:
            r.check(case, re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", str(e["value"])) is not None,
                    f"env {name}={e['value']!r} is not a plain number")
    for o in objs:
        if o["kind"] != "ConfigMap" or "config.toml" not in (o.get("data") or {}):
            continue
        try:
            table = tomllib.loads(o["data"]["config.toml"])
        except tomllib.TOMLDecodeError as err:
            r.check(case, False, f"config.toml is not valid TOML: {err}")
            continue
        field_env = {f: n for n, f in envs.items() if f}
        for key, value in table.items():
            field = key.replace("-", "_")
            if not r.check(case, field in fields and field != "config",
                           f"config.toml key {key!r} is not a server setting (the server refuses unknown keys)"):
                continue
            ty = fields[field]
            items = value if isinstance(value, list) else [value]
            if ty == "bool":
                ok = isinstance(value, bool)
            elif ty == "usize":
                ok = all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in items)
            elif ty == "f64":
                ok = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items)
            else:
                ok = all(isinstance(v, (str, int, float, bool)) for v in items)
            r.check(case, ok, f"config.toml {key} = {value!r} does not fit {ty}")
            r.check(case, field != "jwt_secret", "config.toml holds jwt_secret: it belongs in a Secret")
            if field == "storage_options":
                for kv in items:
                    k = str(kv).split("=", 1)[0]
                    r.check(case, not SECRET_OPTION.search(k) or k.endswith("_file"),
                            f"config.toml storage option {k} is a credential in plain text")
            shadow = field_env.get(field)
            r.check(case, shadow not in env,
                    f"config.toml {key} is overridden by {shadow}, which the chart sets (flag > env > file)")


def validate_objects(r: Report, case: str, objs: list[tuple[str, dict[str, Any]]], kube_version: str) -> int:
    validated = 0
    for path, o in objs:
        what = f"{path} {o.get('kind')}/{(o.get('metadata') or {}).get('name')}"
        if o.get("kind") == "ServiceMonitor":
            errors = sorted(jsonschema.Draft202012Validator(SERVICE_MONITOR_SCHEMA).iter_errors(o), key=str)
            for err in errors:
                r.check(case, False, f"{what} (loose CRD schema): {'.'.join(map(str, err.path))}: {err.message}")
            r.check(case, not errors, f"{what}: loose schema")
            continue
        try:
            kubernetes_validate.validate(o, kube_version, strict=True)
            r.check(case, True, what)
            validated += 1
        except kubernetes_validate.ValidationError as err:
            r.check(case, False, f"{what} does not validate against Kubernetes {err.version} (strict): "
                                 f"{'.'.join(map(str, err.path))}: {err.message}")
        except kubernetes_validate.SchemaNotFoundError as err:
            r.check(case, False, f"{what}: {err.message}")
    return validated


def lint(r: Report, case: str, values: dict[str, Any] | None, kube_version: str) -> None:
    report = helm.lint(CHART, values, strict=True, kube_version="v" + kube_version)
    for m in report.get("messages", []):
        r.check(case, m["severity"] < 2, f"helm lint {m['path']}: {m['error'].strip()}")
    for e in report.get("errors", []):
        r.check(case, False, f"helm lint: {e.strip()}")
    r.check(case, True, "helm lint")


def main() -> int:
    global CHART
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kube-version", default=KUBE_VERSION)
    ap.add_argument("--show", metavar="CASE", help="print the rendered manifests of one case")
    ap.add_argument("--chart", type=Path, default=CHART, help="chart directory (default: chart/)")
    args = ap.parse_args()
    CHART = args.chart.resolve()

    r = Report()
    settings = server_settings()
    if settings is None:
        r.notes.append("src/app/config/mod.rs not found: server settings not cross-checked")

    cases: list[tuple[str, dict[str, Any] | None]] = [("default", None)]
    for f in sorted((CHART / "ci").glob("*.yaml")):
        cases.append((f"ci/{f.name}", helm.values_from_yaml(f.read_text())))
    cases += list(EDGE_CASES.items())

    timings: dict[str, float] = {"lint": 0.0, "render": 0.0, "validate": 0.0, "assert": 0.0}
    rows = []
    with helm.Chart.load(CHART) as chart:
        for case, values in cases:
            failed_before = len(r.failures)
            t = time.perf_counter()
            try:
                chart.validate_schema(values)
                r.check(case, True, "values schema")
            except helm.HelmError as err:
                r.check(case, False, f"values do not meet values.schema.json: {err}")
            lint(r, case, values, args.kube_version)
            timings["lint"] += time.perf_counter() - t

            t = time.perf_counter()
            try:
                manifests = render(chart, values, args.kube_version)
            except helm.HelmError as err:
                r.check(case, False, f"render failed: {err}")
                rows.append((case, "render failed", {}, {}))
                continue
            timings["render"] += time.perf_counter() - t
            if args.show == case:
                for path, text in sorted(manifests.items()):
                    print(f"# ---- {path}\n{text}")

            t = time.perf_counter()
            located = objects_of(manifests)
            objs = [o for _, o in located]
            validate_objects(r, case, located, args.kube_version)
            timings["validate"] += time.perf_counter() - t

            t = time.perf_counter()
            check_security(r, case, objs)
            refs = check_secrets(r, case, objs, {p: x for p, x in manifests.items() if p.endswith(".yaml")})
            d = [o for o in objs if o["kind"] == "Deployment"]
            if d:
                check_probes(r, case, d[0])
            check_wiring(r, case, objs, values or {})
            if d:
                check_server_settings(r, case, objs, settings)
            timings["assert"] += time.perf_counter() - t

            kinds: dict[str, int] = {}
            for o in objs:
                kinds[o["kind"]] = kinds.get(o["kind"], 0) + 1
            status = "ok" if len(r.failures) == failed_before else f"{len(r.failures) - failed_before} FAILED"
            rows.append((case, status, kinds, refs))

        t = time.perf_counter()
        refused = []
        for case, (values, expect) in NEGATIVE_CASES.items():
            message = None
            try:
                chart.validate_schema(values)
                render(chart, values, args.kube_version)
            except helm.HelmError as err:
                message = str(err)
            if r.check(f"refuse {case}", message is not None, f"values {values} rendered; expected a refusal"):
                r.check(f"refuse {case}", expect in message,
                        f"refused, but the message does not mention {expect!r}: {message.strip()[:300]}")
                refused.append(case)
        timings["negative"] = time.perf_counter() - t

    # ---- summary
    print(f"helm-python-sdk {helm.__version__} (Helm SDK {helm.helm_sdk_version()}), "
          f"kubernetes-validate {KV_VERSION}; Kubernetes {args.kube_version} strict schemas; "
          f"extra APIs: {', '.join(EXTRA_API_VERSIONS[:1])}")
    print("ServiceMonitor (a CRD): kubernetes-validate has no schema for it; checked against a loose "
          "schema of the fields the chart writes, and against the Service.")
    for case, status, kinds, refs in rows:
        ks = ", ".join(f"{k}×{n}" if n > 1 else k for k, n in sorted(kinds.items()))
        rs = f"; secret refs: {refs['secretKeyRef']} secretKeyRef, {refs['secretRef']} secretRef" if refs else ""
        print(f"  {status:<9} {case:<28} {ks}{rs}")
    print(f"  refused   {len(refused)}/{len(NEGATIVE_CASES)} bad value sets: {', '.join(refused)}")
    for n in r.notes:
        print(f"  note: {n}")
    total = time.perf_counter() - T_START
    print(f"timings: import {T_IMPORTED - T_START:.2f}s, lint {timings['lint']:.2f}s, "
          f"render {timings['render']:.2f}s, validate {timings['validate']:.2f}s, "
          f"asserts {timings['assert']:.2f}s, refusals {timings['negative']:.2f}s, total {total:.2f}s")
    if r.failures:
        print(f"\nFAILED ({len(r.failures)}):")
        for f in r.failures:
            print(f"  - {f}")
    print(f"check_chart: {r.passed} passed, {len(r.failures)} failed")
    return 1 if r.failures else 0


if __name__ == "__main__":
    sys.exit(main())
