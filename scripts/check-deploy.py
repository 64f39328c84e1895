#!/usr/bin/env python3
"""Check the examples in deploy/ without a cluster (run from .ci/run).

    scripts/check-deploy.py [BWSCOPE]     BWSCOPE: the built binary (default target/debug/bwscope)

Every YAML document under deploy/kubernetes must parse and carry the fields its kind
requires (apiVersion, kind, metadata.name; a pod template with named containers that
have an image; volume mounts naming the pod's volumes; a DaemonSet's selector matching
its template's labels; an MPIJob's Launcher of one replica and its Worker), and every
bwscope command line in them, and in the systemd units under deploy/systemd, may use
only flags that `bwscope <command> --help` lists. A command this build lacks is
reported and skipped, not failed. `kubectl --dry-run=client` needs a server's OpenAPI
document even for built-in kinds, so it cannot do this offline; instead, where the
`kubernetes-validate` package is installed (PyPI; it bundles the Kubernetes JSON
schemas), every built-in kind is validated against them strictly (no unknown field),
and an MPIJob's pod templates as v1 PodTemplates (the MPI Operator's CRD schema is not
bundled). Where systemd-analyze exists, the units are verified with it too.

What "works as shipped" asks of them, checked here too: no host folder that must be
made by hand (a hostPath of type Directory); a volume a non-root container writes is
made writable by the pod (a PersistentVolumeClaim needs the pod's fsGroup, a hostPath an
init container running as root that mounts it); every Secret's token is refused by the
built bwscope (it is a placeholder); a systemd unit writes only where it may
(StateDirectory=, ReadWritePaths= under ProtectSystem=strict); the Containerfile's
final stage runs as a user other than root.

Exit 0: all good; 1: a finding (each printed as FILE: doc N: what); 2: cannot check.
"""

import base64
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("check-deploy: needs PyYAML (apt-get install python3-yaml)", file=sys.stderr)
    sys.exit(2)
try:
    import kubernetes_validate
except ImportError:
    kubernetes_validate = None
    print("check-deploy: no kubernetes-validate (pip install kubernetes-validate); the manifests are not checked against the Kubernetes schemas")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
API = {
    "Secret": "v1",
    "PersistentVolumeClaim": "v1",
    "ConfigMap": "v1",
    "DaemonSet": "apps/v1",
    "MPIJob": "kubeflow.org/v2beta1",
}

problems = []
help_cache = {}


def problem(where, what):
    problems.append(f"{where}: {what}")


def flags_of(exe, command):
    """The long flags `bwscope COMMAND --help` lists, or None without the command."""
    if command not in help_cache:
        out = subprocess.run([exe, command, "--help"], capture_output=True, text=True)
        help_cache[command] = (
            set(re.findall(r"(--[a-z0-9][a-z0-9-]*)", out.stdout)) if out.returncode == 0 else None
        )
    return help_cache[command]


def check_command_line(where, exe, words):
    """Every bwscope invocation in `words` (a shell-split command line)."""
    for i, w in enumerate(words):
        # The program itself, not a path of its (/var/lib/bwscope).
        if not (w == "bwscope" or w.endswith("/bin/bwscope")) or i + 1 >= len(words):
            continue
        command = words[i + 1]
        known = flags_of(exe, command)
        if known is None:
            print(f"check-deploy: {where}: `bwscope {command}` is not in this build; its flags are not checked")
            continue
        for a in words[i + 2:]:
            if a in (">", ">>", "|", "&&", ";", "2>", "<"):
                break
            flag = a.split("=", 1)[0]
            if flag.startswith("--") and flag not in known:
                problem(where, f"`bwscope {command}` has no flag {flag}")


def container_words(c):
    """A container's command line; `sh -c SCRIPT` is split as the shell would."""
    words = [str(x) for x in (c.get("command") or []) + (c.get("args") or [])]
    if len(words) >= 3 and os.path.basename(words[0]) in ("sh", "bash") and words[1] == "-c":
        return shlex.split(words[2])
    return words


def runs_as_root(spec, c):
    """Whether container `c` of pod `spec` may run as uid 0 (none said: the image's
    user, which for these images is not root only when they say so)."""
    uid = (c.get("securityContext") or {}).get("runAsUser")
    if uid is None:
        uid = (spec.get("securityContext") or {}).get("runAsUser")
    return uid == 0


def check_writable(where, spec):
    """The volumes a non-root container mounts writable are made writable by the pod."""
    volumes = {v.get("name"): v for v in spec.get("volumes") or []}
    fs_group = (spec.get("securityContext") or {}).get("fsGroup")
    inits = spec.get("initContainers") or []
    for c in spec.get("containers") or []:
        if runs_as_root(spec, c):
            continue
        for m in c.get("volumeMounts") or []:
            if m.get("readOnly"):
                continue
            v = volumes.get(m.get("name")) or {}
            if "persistentVolumeClaim" in v and fs_group is None:
                problem(where, f"container {c.get('name')} writes the claim {m.get('name')!r} as non-root without the pod's fsGroup")
            if "hostPath" in v:
                hp = v["hostPath"]
                if hp.get("type") in ("Directory", "File"):
                    problem(where, f"hostPath {hp.get('path')} of type {hp['type']} must be made by hand on every node: use DirectoryOrCreate")
                prepared = any(
                    runs_as_root(spec, i) and any(n.get("name") == m.get("name") for n in i.get("volumeMounts") or [])
                    for i in inits
                )
                if not prepared:
                    problem(where, f"container {c.get('name')} writes the host folder {hp.get('path')} as non-root, and no init container running as root prepares it")


def check_pod(where, exe, template, labels_needed=None):
    if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        problem(where, "no pod template spec")
        return
    spec = template["spec"]
    check_writable(where, spec)
    volumes = {v.get("name") for v in spec.get("volumes") or []}
    containers = spec.get("containers") or []
    if not containers:
        problem(where, "the pod template has no containers")
    for c in containers + (spec.get("initContainers") or []):
        name = c.get("name")
        if not name or not c.get("image"):
            problem(where, f"container {name!r} needs a name and an image")
        for m in c.get("volumeMounts") or []:
            if m.get("name") not in volumes:
                problem(where, f"container {name}: volume mount {m.get('name')!r} names no volume")
            if not str(m.get("mountPath", "")).startswith("/"):
                problem(where, f"container {name}: mountPath must be absolute")
        check_command_line(f"{where}: container {name}", exe, container_words(c))
    if labels_needed:
        labels = (template.get("metadata") or {}).get("labels") or {}
        for k, v in labels_needed.items():
            if labels.get(k) != v:
                problem(where, f"the selector's {k}={v} is not among the template's labels")


def schema(where, d):
    """Strict validation against the bundled Kubernetes schemas, where installed."""
    if kubernetes_validate is None:
        return
    try:
        kubernetes_validate.validate(d, kubernetes_validate.latest_version(), strict=True)
    except kubernetes_validate.SchemaNotFoundError:
        if d.get("kind") != "MPIJob":
            problem(where, "no bundled schema for this kind")
    except kubernetes_validate.ValidationError as e:
        path = ".".join(str(p) for p in e.path)
        problem(where, f"schema: {path}: {e.message}")


def check_token(where, exe, d):
    """Every value of a Secret is a token bwscope must refuse: the shipped placeholder."""
    values = dict(d.get("stringData") or {})
    for k, v in (d.get("data") or {}).items():
        values[k] = base64.b64decode(v).decode(errors="replace")
    for k, v in values.items():
        with tempfile.TemporaryDirectory() as t:
            f = os.path.join(t, "token")
            with open(f, "w") as out:
                out.write(v + "\n")
            os.chmod(f, 0o600)
            r = subprocess.run([exe, "net", "run", "127.0.0.1:9", "--token-file", f], capture_output=True, text=True)
            if r.returncode != 2 or "openssl rand" not in r.stderr:
                problem(where, f"bwscope took the shipped {k!r} as a real token (exit {r.returncode}: {r.stderr.strip()[:120]})")


def check_doc(where, exe, d):
    for field in ("apiVersion", "kind"):
        if not d.get(field):
            problem(where, f"no {field}")
            return
    kind = d["kind"]
    if kind in API and d["apiVersion"] != API[kind]:
        problem(where, f"{kind} is {API[kind]}, not {d['apiVersion']}")
    if not (d.get("metadata") or {}).get("name"):
        problem(where, "no metadata.name")
    spec = d.get("spec") or {}
    schema(where, d)
    if kind == "Secret" and not (d.get("data") or d.get("stringData")):
        problem(where, "a Secret with no data")
    elif kind == "Secret":
        check_token(where, exe, d)
    elif kind == "DaemonSet":
        want = (spec.get("selector") or {}).get("matchLabels")
        if not want:
            problem(where, "a DaemonSet needs spec.selector.matchLabels")
        check_pod(where, exe, spec.get("template"), want)
    elif kind == "MPIJob":
        replicas = spec.get("mpiReplicaSpecs") or {}
        launcher, worker = replicas.get("Launcher"), replicas.get("Worker")
        if not launcher or launcher.get("replicas", 1) != 1:
            problem(where, "an MPIJob needs mpiReplicaSpecs.Launcher with 1 replica")
        if not worker or int(worker.get("replicas", 0)) < 1:
            problem(where, "an MPIJob needs mpiReplicaSpecs.Worker with replicas")
        for role, r in (("Launcher", launcher), ("Worker", worker)):
            if r:
                check_pod(f"{where}: {role}", exe, r.get("template"))
                schema(f"{where}: {role}", {"apiVersion": "v1", "kind": "PodTemplate",
                                           "metadata": {"name": role.lower()}, "template": r.get("template")})
    elif kind == "PersistentVolumeClaim":
        if not spec.get("accessModes") or not (spec.get("resources") or {}).get("requests"):
            problem(where, "a PersistentVolumeClaim needs accessModes and resources.requests")


def unit_settings(path):
    """A unit's `Key=value` lines (continuations joined), as (key, value) pairs."""
    text = open(os.path.join(ROOT, path)).read().replace("\\\n", " ")
    return [tuple(l.split("=", 1)) for l in text.splitlines() if "=" in l and not l.startswith("#")]


WRITES = ("--history", "--prometheus", "--openmetrics", "--json", "--csv", "--out")


def check_unit(path, exe):
    settings = unit_settings(path)
    if path.endswith(".timer"):
        return
    lines = [v for k, v in settings if k == "ExecStart"]
    if not lines:
        problem(path, "no ExecStart")
    get = lambda key: [v for k, v in settings if k == key]
    writable = ["/var/lib/" + d for v in get("StateDirectory") for d in v.split()]
    writable += [d for v in get("ReadWritePaths") for d in v.split()]
    strict = "strict" in get("ProtectSystem")
    for l in lines:
        words = shlex.split(l)
        check_command_line(path, exe, words)
        for i, w in enumerate(words[:-1]):
            if w in WRITES and strict and not any(words[i + 1].startswith(d.rstrip("/") + "/") for d in writable):
                problem(path, f"{w} {words[i + 1]} is read-only under ProtectSystem=strict: not below StateDirectory= or ReadWritePaths=")


def verify_units(exe, paths):
    """systemd-analyze verify over every unit together (a timer needs its service),
    as installed, with the binary built here at its path."""
    if not shutil.which("systemd-analyze"):
        print("check-deploy: no systemd-analyze here; the units are not verified")
        return
    with tempfile.TemporaryDirectory() as d:
        units = []
        for path in paths:
            unit = os.path.join(d, os.path.basename(path))
            with open(unit, "w") as f:
                f.write(open(os.path.join(ROOT, path)).read().replace("/usr/local/bin/bwscope", os.path.abspath(exe)))
            units.append(unit)
        out = subprocess.run(["systemd-analyze", "verify", "--man=no"] + units, capture_output=True, text=True)
        said = (out.stdout + out.stderr).strip()
        if out.returncode != 0 or said:
            problem("deploy/systemd", f"systemd-analyze verify: {said}")


def check_containerfile(path):
    """The image's final stage runs as a user other than root."""
    stages, user = 0, None
    for line in open(os.path.join(ROOT, path)):
        word = line.split()[:1]
        if word == ["FROM"]:
            stages, user = stages + 1, None
        elif word == ["USER"]:
            user = line.split()[1].split(":")[0]
    if not stages:
        problem(path, "no FROM")
    elif user in (None, "0", "root"):
        problem(path, "the final stage runs as root: give it a USER")


def main():
    exe = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/debug/bwscope")
    if not os.access(exe, os.X_OK):
        print(f"check-deploy: {exe} is not an executable bwscope; build it first", file=sys.stderr)
        return 2
    found = 0
    kdir = os.path.join(ROOT, "deploy/kubernetes")
    for name in sorted(os.listdir(kdir)):
        if not name.endswith((".yaml", ".yml")):
            continue
        path = os.path.join("deploy/kubernetes", name)
        try:
            docs = list(yaml.safe_load_all(open(os.path.join(ROOT, path))))
        except yaml.YAMLError as e:
            problem(path, f"does not parse: {e}")
            continue
        for n, d in enumerate(docs, 1):
            if d is None:
                continue
            if not isinstance(d, dict):
                problem(f"{path}: doc {n}", "is not a mapping")
                continue
            found += 1
            check_doc(f"{path}: doc {n} ({d.get('kind')} {(d.get('metadata') or {}).get('name')})", exe, d)
    sdir = os.path.join(ROOT, "deploy/systemd")
    units = []
    for name in sorted(os.listdir(sdir)):
        if name.endswith((".service", ".timer")):
            found += 1
            units.append(os.path.join("deploy/systemd", name))
            check_unit(units[-1], exe)
    verify_units(exe, units)
    check_containerfile("deploy/Containerfile")
    found += 1
    for p in problems:
        print(p)
    print(f"check-deploy: {found} documents, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
