#!/usr/bin/env bash
# A fleet exec provider: the clusters a Rancher server manages, as a fleet.dev/v1alpha1 ClusterList.
#   RANCHER_URL=https://rancher.example RANCHER_TOKEN=token-xxxx:yyyy rancher-clusters.sh
# Rancher's v3 API lists the clusters (GET /v3/clusters) and generates each one's kubeconfig (POST
# /v3/clusters/ID?action=generateKubeconfig), which reaches the cluster through Rancher with a Rancher token; each entry
# carries that kubeconfig, labelled with the cluster's Rancher labels. A kubeconfig in the output is data to fleet: its
# token is used, but an exec plugin or a local file it names needs an allowance in fleet.yaml. Needs curl and jq.
# Not run by fleet's tests (no Rancher server is available to them); the EKS example is.
set -euo pipefail
: "${RANCHER_URL:?set RANCHER_URL}" "${RANCHER_TOKEN:?set RANCHER_TOKEN}"
api() { curl -fsS -H "Authorization: Bearer $RANCHER_TOKEN" "$@"; }
api "$RANCHER_URL/v3/clusters" | jq -c '.data[] | select(.state == "active") | {id, name, labels}' |
  while read -r cluster; do
    id=$(jq -r .id <<<"$cluster")
    config=$(api -X POST "$RANCHER_URL/v3/clusters/$id?action=generateKubeconfig" | jq -r .config)
    jq -n --argjson c "$cluster" --arg kubeconfig "$config" \
      '{name: $c.name, kubeconfig: $kubeconfig, labels: (($c.labels // {}) | with_entries(select(.value | type == "string")))}'
  done |
  jq -s '{apiVersion: "fleet.dev/v1alpha1", kind: "ClusterList", clusters: .}'
