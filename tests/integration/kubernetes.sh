#!/usr/bin/env bash
# The Kubernetes manifests (scripts/kubernetes/), checked offline: every file parses as
# YAML, the Job is Indexed with completions = parallelism = FLOOD_SHARDS (the one shard
# count), its command passes JOB_COMPLETION_INDEX as the shard and the ConfigMap's
# --start-at, the state Secret is mounted where the command reads it, the Service selects
# the shards' pods on the container's named port, the kustomization lists files that
# exist, set-shards.sh changes the count everywhere, and the Containerfile is two stages
# on bookworm-slim with runtime libraries only in the last.
. "$(dirname "$0")/lib.sh"
K=$ROOT/scripts/kubernetes

python3 -c 'import yaml' 2>/dev/null || { check 0 "manifests # SKIP no python3-yaml"; done_testing; exit; }

check_manifests() {
    python3 - "$1" <<'PY'
import os, sys, yaml
d = sys.argv[1]
def load(name):
    with open(os.path.join(d, name)) as f:
        return list(yaml.safe_load_all(f))
fails = []
def need(cond, what):
    if not cond:
        fails.append(what)
docs = {}
for name in sorted(os.listdir(d)):
    if name.endswith(".yaml"):
        docs[name] = load(name)
kz = docs["kustomization.yaml"][0]
for r in kz["resources"]:
    need(os.path.exists(os.path.join(d, r)), "kustomization resource %s exists" % r)
job = docs["job.yaml"][0]
need(job["apiVersion"] == "batch/v1" and job["kind"] == "Job", "job.yaml is a batch/v1 Job")
spec = job["spec"]
need(spec.get("completionMode") == "Indexed", "completionMode: Indexed")
n = spec.get("completions")
need(isinstance(n, int) and n >= 1, "completions is a positive integer")
need(spec.get("parallelism") == n, "parallelism == completions")
pod = spec["template"]["spec"]
need(pod.get("restartPolicy") in ("Never", "OnFailure"), "restartPolicy Never/OnFailure")
c = pod["containers"][0]
env = {e["name"]: e for e in c.get("env", [])}
need(env.get("FLOOD_SHARDS", {}).get("value") == str(n), "FLOOD_SHARDS == completions")
cmd = " ".join(c.get("command", []) + c.get("args", []))
need('--shard "$JOB_COMPLETION_INDEX/$FLOOD_SHARDS"' in cmd, "the shard is JOB_COMPLETION_INDEX/FLOOD_SHARDS")
need("--start-at" in cmd and "START_AT" in env and
     env["START_AT"]["valueFrom"]["configMapKeyRef"]["name"] == "flood-run", "--start-at from the ConfigMap")
need("shard-$JOB_COMPLETION_INDEX" in cmd, "results keyed by the completion index")
vols = {v["name"]: v for v in pod["volumes"]}
mounts = {m["name"]: m for m in c["volumeMounts"]}
sec = docs["secret.yaml"][0]
need(sec["kind"] == "Secret" and "state.tar" in sec["data"], "secret.yaml: a Secret with state.tar")
need(vols["state"]["secret"]["secretName"] == sec["metadata"]["name"], "the Job mounts that Secret")
need(mounts["state"]["mountPath"].rstrip("/") + "/state.tar" in cmd, "the command reads state.tar where it is mounted")
need("--preserve-permissions" in cmd, "the state is unpacked keeping its modes")
cm = docs["config.yaml"][0]
for k in ("inbox", "rate", "duration", "seed", "mix", "start-at"):
    need(k in cm["data"], "ConfigMap has %s" % k)
svc = docs["service.yaml"][0]
labels = spec["template"]["metadata"]["labels"]
need(all(labels.get(k) == v for k, v in svc["spec"]["selector"].items()), "the Service selects the shards' pods")
ports = {p["name"]: p["containerPort"] for p in c["ports"]}
need(all(p["targetPort"] in ports or p["targetPort"] in ports.values() for p in svc["spec"]["ports"]),
     "the Service's targetPort is the container's port")
need(any(str(ports.get("crowd")) in cmd for _ in [0]), "flood listens on the crowd port")
mj = docs["merge-job.yaml"][0]
margs = " ".join(mj["spec"]["template"]["spec"]["containers"][0]["args"])
need("flood merge" in margs and "/results/shard-*" in margs, "the merge Job merges every shard folder")
pvc = docs["results.yaml"][0]
need(vols["results"]["persistentVolumeClaim"]["claimName"] == pvc["metadata"]["name"], "shards write to the results claim")
for f in fails:
    print("FAIL", f)
print("shards", n)
sys.exit(1 if fails else 0)
PY
}

out=$(check_manifests "$K")
check $? "the manifests parse and hold together ($(echo "$out" | tail -1))" || echo "$out" | sed 's/^/#   /'

# set-shards.sh changes the one count everywhere (on a copy)
cp -r "$K" "$T_TMP/k"
"$T_TMP/k/set-shards.sh" 5 >/dev/null
out=$(check_manifests "$T_TMP/k")
expect_eq "$?/$(echo "$out" | tail -1)" "0/shards 5" "set-shards.sh 5: completions, parallelism, FLOOD_SHARDS all 5"
# a disagreeing count is caught
sed -i 's/^  parallelism: 5$/  parallelism: 4/' "$T_TMP/k/job.yaml"
check_manifests "$T_TMP/k" >"$T_TMP/bad.out"
expect_eq "$?/$(grep -c 'parallelism == completions' "$T_TMP/bad.out")" 1/1 "parallelism != completions is caught"

# the Containerfile: a build stage with -dev packages, a bookworm-slim runtime without them
C=$K/Containerfile
expect_eq "$(grep -c '^FROM ' "$C")" 2 "Containerfile: two stages"
grep -q 'bookworm-slim' "$C"
check $? "Containerfile: on Debian bookworm-slim"
last=$(awk '/^FROM /{s=""} {s=s $0 "\n"} END{printf "%s", s}' "$C")
echo "$last" | grep -q -- '-dev' && r=1 || r=0
check $r "Containerfile: the runtime stage installs no -dev package"
echo "$last" | grep -q 'COPY --from=build' && echo "$last" | grep -q 'libmicrohttpd12'
check $? "Containerfile: the runtime stage copies the binary and installs the runtime libraries"
done_testing
