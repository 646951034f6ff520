#!/usr/bin/env python3
"""A fleet exec provider: the EKS clusters of one AWS account and region, as a fleet.dev/v1alpha1 ClusterList.

    eks-clusters.py [--region REGION] [--profile PROFILE]

Lists the clusters (eks:ListClusters), describes each (eks:DescribeCluster) and prints one entry per ACTIVE cluster:
its endpoint and CA, its tags that are valid label keys as labels (plus `region` and `version`), and an exec
credential that runs `aws eks get-token` as `aws eks update-kubeconfig` writes it. fleet runs that command only where
the fleet.yaml entry allows it (credentialPluginAllowlist: [{command: aws}]; with --profile, [{command: aws, env:
[AWS_PROFILE]}], since a variable reaches a plugin from a program's output only by an entry's env). Needs boto3 (pip install boto3) and the
usual AWS credentials; AWS_ENDPOINT_URL is honoured (tests point it at moto's server).
"""
import argparse
import json
import re
import sys

import boto3

LABEL_KEY = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--region")
    parser.add_argument("--profile")
    args = parser.parse_args()
    session = boto3.Session(region_name=args.region, profile_name=args.profile)
    region = session.region_name
    if not region:
        print("eks-clusters.py: no region: pass --region or set AWS_REGION", file=sys.stderr)
        return 2
    eks = session.client("eks")
    env = [{"name": "AWS_PROFILE", "value": args.profile}] if args.profile else []
    clusters = []
    for page in eks.get_paginator("list_clusters").paginate():
        for name in page["clusters"]:
            cluster = eks.describe_cluster(name=name)["cluster"]
            if cluster.get("status") != "ACTIVE" or not cluster.get("endpoint"):
                print(f"eks-clusters.py: skipping {name}: {cluster.get('status')}", file=sys.stderr)
                continue
            labels = {k: v for k, v in (cluster.get("tags") or {}).items() if LABEL_KEY.match(k)}
            labels.update({"region": region, "version": cluster.get("version", "")})
            exec_credential = {
                "apiVersion": "client.authentication.k8s.io/v1beta1",
                "command": "aws",
                "args": ["eks", "get-token", "--cluster-name", name, "--region", region, "--output", "json"],
            }
            if env:
                exec_credential["env"] = env
            clusters.append(
                {
                    "name": name,
                    "server": cluster["endpoint"],
                    "certificateAuthorityData": cluster["certificateAuthority"]["data"],
                    "labels": labels,
                    "exec": exec_credential,
                }
            )
    json.dump({"apiVersion": "fleet.dev/v1alpha1", "kind": "ClusterList", "clusters": clusters}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
