#!/usr/bin/env python3
"""Check the examples in deploy/ without a cluster (run from .ci/run).

    scripts/check-deploy.py [BWSCOPE]     BWSCOPE: the built binary (default target/debug/bwscope)

Every YAML document under deploy/kubernetes must parse and carry the fields its kind
requires (apiVersion, kind, metadata.name; a pod template with named containers that
have an image; volume mounts naming the pod's volumes; a DaemonSet's selector matching
its template's labels; an MPIJob's Launcher of one replica and its Worker), and every
bwscope command line in them, and in the systemd units under deploy/systemd, may use
only flags that `bwscope <command> --help` lists. A command this build lacks (`watch`
before it is merged) is reported and skipped, not failed. `kubectl --dry-run=client`
needs a server's OpenAPI document even for built-in kinds, so it cannot do this offline.
Where systemd-analyze exists, the units are verified with it too.

Exit 0: all good; 1: a finding (each printed as FILE: doc N: what); 2: cannot check.
"""

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
        if os.path.basename(w) != "bwscope" or i + 1 >= len(words):
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


def check_pod(where, exe, template, labels_needed=None):
    if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        problem(where, "no pod template spec")
        return
    spec = template["spec"]
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
    if kind == "Secret" and not (d.get("data") or d.get("stringData")):
        problem(where, "a Secret with no data")
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
    elif kind == "PersistentVolumeClaim":
        if not spec.get("accessModes") or not (spec.get("resources") or {}).get("requests"):
            problem(where, "a PersistentVolumeClaim needs accessModes and resources.requests")


def check_unit(path, exe):
    lines, text = [], open(os.path.join(ROOT, path)).read().replace("\\\n", " ")
    for line in text.splitlines():
        if line.startswith("ExecStart="):
            lines.append(line.split("=", 1)[1])
    if not lines:
        problem(path, "no ExecStart")
    for l in lines:
        check_command_line(path, exe, shlex.split(l))
    if shutil.which("systemd-analyze"):
        # The unit as installed, with the binary built here at its path.
        with tempfile.TemporaryDirectory() as d:
            unit = os.path.join(d, os.path.basename(path))
            with open(unit, "w") as f:
                f.write(open(os.path.join(ROOT, path)).read().replace("/usr/local/bin/bwscope", os.path.abspath(exe)))
            out = subprocess.run(
                ["systemd-analyze", "verify", "--man=no", unit], capture_output=True, text=True
            )
            said = (out.stdout + out.stderr).strip()
            if out.returncode != 0 or said:
                problem(path, f"systemd-analyze verify: {said}")


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
    for name in sorted(os.listdir(sdir)):
        if name.endswith((".service", ".timer")):
            found += 1
            check_unit(os.path.join("deploy/systemd", name), exe)
    for p in problems:
        print(p)
    print(f"check-deploy: {found} documents, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
