#!/usr/bin/env bash
# A fleet exec provider: the GKE clusters of one Google Cloud project, as a fleet.dev/v1alpha1 ClusterList.
#   gke-clusters.sh PROJECT
# `gcloud container clusters list` gives every cluster of the project with its endpoint, CA and resource labels; each
# entry's credential is gke-gcloud-auth-plugin, as `gcloud container clusters get-credentials` writes it (allow it in
# fleet.yaml: credentialPluginAllowlist: [{command: gke-gcloud-auth-plugin}]). Needs gcloud and jq.
# Not run by fleet's tests (no GKE imitation is available to them); the EKS example is.
set -euo pipefail
project=${1:?usage: gke-clusters.sh PROJECT}
gcloud container clusters list --project "$project" --format=json |
  jq '{
    apiVersion: "fleet.dev/v1alpha1",
    kind: "ClusterList",
    clusters: [.[] | select(.status == "RUNNING") | {
      name: "\(.location)/\(.name)",
      server: "https://\(.endpoint)",
      certificateAuthorityData: .masterAuth.clusterCaCertificate,
      labels: ((.resourceLabels // {}) + {location: .location}),
      exec: {
        apiVersion: "client.authentication.k8s.io/v1beta1",
        command: "gke-gcloud-auth-plugin",
        provideClusterInfo: true,
        installHint: "gcloud components install gke-gcloud-auth-plugin"
      }
    }]
  }'
