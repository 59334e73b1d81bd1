#!/usr/bin/env python3
"""The container image against what deploys it (test_image.sh).

  check_image.py config ARCHIVE VERSION REVISION MAX_MIB
      the OCI archive's own config: entrypoint, user, port, the OCI labels,
      its layers' size (unpacked) under MAX_MIB
  check_image.py manifest DAEMONSET UNIT ROOTFS
      every path, port and argument deploy/daemonset.yaml gives exists in the
      image's root and is what the daemon reads; the systemd unit agrees
  check_image.py plan DAEMONSET DIR
      writes what test_image.sh needs to run the image as the DaemonSet does:
      DIR/configmap/ (the ConfigMap's files), DIR/web.yml (the Secret's, to fill),
      DIR/args (one a line), DIR/caps (cap_x,... as capsh names them),
      DIR/mounts (one a line: KIND MOUNTPATH ro|rw SOURCE)

Exits 0 only when all holds; else says what differs.
"""
import json
import os
import re
import sys
import tarfile

import yaml

LABELS = ("org.opencontainers.image.source", "org.opencontainers.image.version",
          "org.opencontainers.image.revision", "org.opencontainers.image.licenses")


def fail(msg):
    sys.exit(msg)


def blob(tar, digest):
    algo, hexd = digest.split(":", 1)
    return tar.extractfile(f"blobs/{algo}/{hexd}")


def cmd_config(archive, version, revision, max_mib):
    errs = []
    with tarfile.open(archive) as tar:
        index = json.load(tar.extractfile("index.json"))
        if len(index["manifests"]) != 1:
            fail(f"index.json has {len(index['manifests'])} manifests, not 1")
        ref = index["manifests"][0].get("annotations", {}).get("org.opencontainers.image.ref.name")
        if not ref:
            errs.append("no org.opencontainers.image.ref.name: podman load would leave it untagged")
        manifest = json.load(blob(tar, index["manifests"][0]["digest"]))
        config = json.load(blob(tar, manifest["config"]["digest"]))
        unpacked = 0
        for layer in manifest["layers"]:
            with tarfile.open(fileobj=blob(tar, layer["digest"]), mode="r|*") as lt:
                for m in lt:
                    unpacked += m.size
    c = config.get("config", {})
    if c.get("Entrypoint") != ["/usr/bin/cuprobe"]:
        errs.append(f"Entrypoint {c.get('Entrypoint')}, not [/usr/bin/cuprobe]")
    if c.get("Cmd") != ["daemon", "--config", "/etc/cuprobe/daemon.conf"]:
        errs.append(f"Cmd {c.get('Cmd')}")
    if c.get("User") not in ("0", "0:0", "root"):
        errs.append(f"User {c.get('User')!r}, not root (it loads BPF programs)")
    if "9464/tcp" not in c.get("ExposedPorts", {}):
        errs.append(f"ExposedPorts {c.get('ExposedPorts')} lack 9464/tcp")
    labels = c.get("Labels") or {}
    for k in LABELS:
        if not labels.get(k):
            errs.append(f"label {k} missing")
    if labels.get("org.opencontainers.image.version") != version:
        errs.append(f"version label {labels.get('org.opencontainers.image.version')!r}, not {version!r}")
    if labels.get("org.opencontainers.image.revision") != revision:
        errs.append(f"revision label {labels.get('org.opencontainers.image.revision')!r}, not {revision!r}")
    if labels.get("org.opencontainers.image.licenses") != "LGPL-2.1 OR BSD-2-Clause":
        errs.append(f"licenses label {labels.get('org.opencontainers.image.licenses')!r}")
    if config.get("architecture") != "amd64" and os.uname().machine == "x86_64":
        errs.append(f"architecture {config.get('architecture')}")
    if unpacked > int(max_mib) << 20:
        errs.append(f"{unpacked / 2**20:.1f} MiB unpacked, over {max_mib} MiB")
    if errs:
        fail("; ".join(errs))
    print(f"{ref}: {unpacked / 2**20:.1f} MiB unpacked, {os.path.getsize(archive) / 2**20:.1f} MiB archive")


def load(daemonset):
    docs = [d for d in yaml.safe_load_all(open(daemonset)) if d]
    kinds = {d["kind"]: d for d in docs}
    for k in ("ConfigMap", "Secret", "DaemonSet"):
        if k not in kinds:
            fail(f"{daemonset} has no {k}")
    pod = kinds["DaemonSet"]["spec"]["template"]
    (ctr,) = pod["spec"]["containers"]
    return kinds, pod, ctr


def conf(text):
    """daemon.conf's lines as (key, value), in order."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            k, _, v = line.partition("=")
            out.append((k.strip(), v.strip()))
    return out


def opt(args, name):
    """The value of --name in args (--name V or --name=V)."""
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


def volume_of(pod, path):
    """(volumeMount, volume) whose mountPath holds path, the deepest."""
    best = None
    for vm in pod["spec"]["containers"][0].get("volumeMounts", []):
        mp = vm["mountPath"].rstrip("/")
        if path == mp or path.startswith(mp + "/"):
            if not best or len(mp) > len(best[0]["mountPath"]):
                vol = next(v for v in pod["spec"]["volumes"] if v["name"] == vm["name"])
                best = (vm, vol)
    return best


def cmd_manifest(daemonset, unit, rootfs):
    kinds, pod, ctr = load(daemonset)
    errs = []
    args = ctr.get("args", [])
    if "command" in ctr:
        errs.append("the container sets command: the image's entrypoint is /usr/bin/cuprobe")
    if args[:1] != ["daemon"]:
        errs.append(f"args {args}: not the daemon")
    cfg = opt(args, "--config") or opt(args, "-c")
    if not cfg:
        fail(f"args {args} name no --config")
    # The config: a ConfigMap's file, mounted where --config says.
    vm, vol = volume_of(pod, cfg) or (None, None)
    if not vol or "configMap" not in vol:
        errs.append(f"--config {cfg} is in no configMap volume")
    else:
        cm = kinds["ConfigMap"]
        if vol["configMap"]["name"] != cm["metadata"]["name"]:
            errs.append(f"the config volume names ConfigMap {vol['configMap']['name']}, not {cm['metadata']['name']}")
        key = os.path.relpath(cfg, vm["mountPath"])
        if key not in cm["data"]:
            errs.append(f"ConfigMap has no {key} for --config {cfg}")
        settings = dict(conf(cm["data"].get(key, "")))
    if not os.path.isdir(rootfs + os.path.dirname(cfg)):
        errs.append(f"{os.path.dirname(cfg)} is no folder in the image")
    # The web-config: the Secret's, with its certificate and key beside it.
    web = settings.get("web-config")
    port = int(settings.get("listen", "127.0.0.1:9464").rsplit(":", 1)[1])
    if web:
        vm, vol = volume_of(pod, web) or (None, None)
        sec = kinds["Secret"]
        if not vol or vol.get("secret", {}).get("secretName") != sec["metadata"]["name"]:
            errs.append(f"web-config {web} is in no volume of Secret {sec['metadata']['name']}")
        else:
            if not vm.get("readOnly"):
                errs.append(f"the Secret's mount {vm['mountPath']} is not readOnly")
            data = sec.get("stringData", {}) | sec.get("data", {})
            key = os.path.relpath(web, vm["mountPath"])
            if key not in data:
                errs.append(f"Secret has no {key}")
            else:
                wc = yaml.safe_load(data[key])
                tls = wc.get("tls_server_config", {})
                for f in ("cert_file", "key_file"):
                    if tls.get(f) and tls[f] not in data:
                        errs.append(f"web.yml's {f} {tls[f]} is not in the Secret")
                probe = ctr.get("readinessProbe", {}).get("httpGet", {})
                if probe.get("path") not in wc.get("cuprobe", {}).get("open_paths", []):
                    errs.append(f"the readiness probe's {probe.get('path')} is not an open path of web.yml")
                if (probe.get("scheme") == "HTTPS") != bool(tls):
                    errs.append(f"the readiness probe's scheme {probe.get('scheme')} and web.yml's TLS disagree")
                ann = pod["metadata"].get("annotations", {})
                if ann.get("prometheus.io/scheme", "http") != ("https" if tls else "http"):
                    errs.append(f"prometheus.io/scheme {ann.get('prometheus.io/scheme')} and web.yml's TLS disagree")
        if not os.path.isdir(rootfs + os.path.dirname(web)):
            errs.append(f"{os.path.dirname(web)} is no folder in the image")
    # The port: the same everywhere.
    ports = [p["containerPort"] for p in ctr.get("ports", [])]
    probe_port = ctr.get("readinessProbe", {}).get("httpGet", {}).get("port")
    ann_port = pod["metadata"].get("annotations", {}).get("prometheus.io/port")
    if ports != [port] or probe_port != port or str(ann_port) != str(port):
        errs.append(f"listen port {port}, containerPort {ports}, readiness probe {probe_port}, "
                    f"prometheus.io/port {ann_port}")
    # The traces: in a hostPath.
    out = settings.get("output", "")
    vm, vol = volume_of(pod, out) or (None, None)
    if not vol or "hostPath" not in vol or vm.get("readOnly"):
        errs.append(f"output {out} is in no writable hostPath volume")
    # Every mount's folder is in the image, but what the runtime mounts (/sys, /proc).
    for vm in ctr.get("volumeMounts", []):
        mp = vm["mountPath"]
        if mp.split("/")[1] in ("sys", "proc", "dev"):
            if not os.path.isdir(rootfs + "/" + mp.split("/")[1]):
                errs.append(f"/{mp.split('/')[1]} is no folder in the image")
        elif not os.path.isdir(rootfs + mp):
            errs.append(f"mountPath {mp} is no folder in the image")
    tracing = [vm for vm in ctr.get("volumeMounts", []) if vm["mountPath"] == "/sys/kernel/tracing"]
    if not tracing or tracing[0].get("readOnly"):
        errs.append("/sys/kernel/tracing is not mounted writable (uprobe_events)")
    # Pods' names: kubelet-root's pods/, the host's, as new pods mount their volumes.
    pods = settings.get("kubelet-root", "/var/lib/kubelet") + "/pods"
    vm, vol = volume_of(pod, pods) or (None, None)
    if (not vol or vol.get("hostPath", {}).get("path") != pods or vm["mountPath"] != pods or
            vm.get("mountPropagation") != "HostToContainer"):
        errs.append(f"{pods} is not the host's, mounted with HostToContainer propagation")
    if not pod["spec"].get("hostPID"):
        errs.append("hostPID is not true: the daemon would see only its own pod")
    sc = ctr.get("securityContext", {})
    if sc.get("privileged"):
        errs.append("privileged: the capabilities are enough")
    if sc.get("capabilities", {}).get("drop") != ["ALL"]:
        errs.append(f"capabilities.drop {sc.get('capabilities', {}).get('drop')}, not [ALL]")
    # The systemd unit runs the same arguments, reads the same config, keeps traces
    # in the same folder (StateDirectory).
    u = open(unit).read()
    m = re.search(r"^ExecStart=(\S+) (.*)$", u, re.M)
    if not m or m.group(2).split() != args:
        errs.append(f"the unit's ExecStart {m and m.group(2)!r} is not the DaemonSet's args {args}")
    m = re.search(r"^StateDirectory=(\S+)$", u, re.M)
    if not m or not out.startswith(f"/var/lib/{m.group(1)}/"):
        errs.append(f"output {out} is not under the unit's StateDirectory")
    # The same bounds: memory, and the time SIGTERM has to write the windows in progress.
    m = re.search(r"^MemoryMax=(\d+)M$", u, re.M)
    lim = ctr.get("resources", {}).get("limits", {}).get("memory")
    if not m or lim != f"{m.group(1)}Mi":
        errs.append(f"the unit's MemoryMax {m and m.group(1)}M and the limit {lim} differ")
    m = re.search(r"^TimeoutStopSec=(\d+)$", u, re.M)
    grace = pod["spec"].get("terminationGracePeriodSeconds")
    if not m or int(m.group(1)) != grace:
        errs.append(f"the unit's TimeoutStopSec {m and m.group(1)} and terminationGracePeriodSeconds {grace} differ")
    dflt = dict(conf(open(rootfs + cfg).read())) if os.path.isfile(rootfs + cfg) else {}
    if not dflt:
        errs.append(f"the image has no default {cfg}")
    elif dflt.get("output") != out:
        errs.append(f"the image's default output {dflt.get('output')} is not the DaemonSet's {out}")
    if errs:
        fail("; ".join(errs))


def cmd_plan(daemonset, out):
    kinds, pod, ctr = load(daemonset)
    os.makedirs(out + "/configmap", exist_ok=True)
    for k, v in kinds["ConfigMap"]["data"].items():
        open(f"{out}/configmap/{k}", "w").write(v)
    sec = kinds["Secret"]
    open(f"{out}/web.yml", "w").write((sec.get("stringData", {}) | sec.get("data", {}))["web.yml"])
    open(f"{out}/args", "w").write("".join(a + "\n" for a in ctr.get("args", [])))
    caps = ctr.get("securityContext", {}).get("capabilities", {}).get("add", [])
    open(f"{out}/caps", "w").write(",".join("cap_" + c.lower() for c in caps) + "\n")
    vols = {v["name"]: v for v in pod["spec"]["volumes"]}
    lines = []
    for vm in ctr.get("volumeMounts", []):
        v = vols[vm["name"]]
        kind = next(k for k in ("configMap", "secret", "hostPath", "emptyDir") if k in v)
        src = v["hostPath"]["path"] if kind == "hostPath" else vm["name"]
        lines.append(f"{kind} {vm['mountPath']} {'ro' if vm.get('readOnly') or kind == 'configMap' else 'rw'} {src}\n")
    open(f"{out}/mounts", "w").write("".join(lines))


if __name__ == "__main__":
    cmds = {"config": cmd_config, "manifest": cmd_manifest, "plan": cmd_plan}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        fail(__doc__)
    cmds[sys.argv[1]](*sys.argv[2:])
