"""How a Python program uses a kubeconfig: the kubernetes client's config loader reads the file, and for every context
in it a CoreV1Api lists the namespaces. fleet's e2e test (test/e2e/kubeconfig-merge.test.ts) runs it on what `fleet
kubeconfig export` wrote, whose users are exec entries calling fleet: the client runs the plugin itself. Prints one JSON
line per context, {"context": ..., "namespaces": [...]} or {"context": ..., "error": ...}; exit 1 when any failed.
Usage: python list-namespaces.py KUBECONFIG"""
import json
import sys

from kubernetes import client, config


def main(path):
    contexts, _ = config.list_kube_config_contexts(config_file=path)
    failed = False
    for name in sorted(c["name"] for c in contexts):
        line = {"context": name}
        try:
            api = client.CoreV1Api(config.new_client_from_config(config_file=path, context=name))
            line["namespaces"] = [n.metadata.name for n in api.list_namespace(_request_timeout=30).items]
        except Exception as e:  # one line per context, whatever failed
            line["error"] = f"{type(e).__name__}: {e}"
            failed = True
        print(json.dumps(line), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
