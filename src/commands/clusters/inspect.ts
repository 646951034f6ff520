import { Args, Flags } from '@oclif/core';

import { BaseCommand } from '../../cli/base-command.js';
import { formatAge } from '../../base/duration.js';
import { type ClusterInspection, inspectCluster } from '../../clusters/inspect.js';

export type { ClusterInspection };

type Field = { field: string; value: string };

export default class ClustersInspect extends BaseCommand<typeof ClustersInspect> {
  static summary = 'Show everything fleet knows about one cluster, and check it live.';
  static description = `Shows the cluster's source, server, credentials (certificate subject and validity, token issuer and expiry, exec plugin; never the secret itself) and, unless --offline, contacts the API server: /version, /readyz, the TLS outcome and the round-trip time. Failures are classified as unreachable, tls, unauthorized, forbidden or timeout.

Without NAME, the current context (or --context) is inspected.`;

  static examples = [
    '<%= config.bin %> clusters inspect',
    '<%= config.bin %> clusters inspect prod-eu --kubeconfig examples/fleet --offline -o yaml',
  ];

  static reportsSkippedTls = true;

  static args = {
    name: Args.string({ description: 'Cluster name (<path>+<context>) or an unambiguous context name.' }),
  };

  static flags = {
    offline: Flags.boolean({ description: 'Do not contact the cluster.' }),
  };

  async run(): Promise<ClusterInspection> {
    const result = await inspectCluster(this.fleet.provider, {
      name: this.args.name,
      context: this.flags.context,
      offline: this.flags.offline,
      connector: this.fleet.connector,
    });
    if (result.live && !result.live.ok) this.markFailed();
    await this.render(result, {
      rows: fields(result),
      columns: [
        { header: 'field', get: (f) => f.field },
        { header: 'value', get: (f) => f.value },
      ],
      // -o name: the one cluster inspected, once.
      names: [result.name],
      failures: [{ cluster: result.name, error: result.live?.error }],
    });
    return result;
  }
}

function fields(r: ClusterInspection): Field[] {
  const out: Field[] = [];
  const add = (field: string, value: string | number | boolean | undefined) => {
    if (value !== undefined && value !== '') out.push({ field, value: String(value) });
  };
  add('Name', r.name);
  add('Provider', r.provider);
  add('Context', r.context);
  add(
    'Source',
    r.source.program
      ? `exec ${r.source.program}`
      : (r.source.path ?? [r.source.namespace, r.source.name].filter(Boolean).join('/')),
  );
  add('Server', r.server);
  const argo = r.source.argocd;
  if (argo) {
    add('Argo CD server', argo.server + (argo.inCluster ? ' (in-cluster: reached with the hub context)' : ''));
    add('Argo CD project', argo.project);
    add('Argo CD namespaces', argo.namespaces.length ? argo.namespaces.join(', ') : 'all');
    add('Argo CD cluster resources', argo.clusterResources);
    add('Argo CD shard', argo.shard);
  }
  add('Ready', r.ready ? 'True' : `False (${r.reason})`);
  add('Auth', r.auth);
  add('CA', r.ca);
  add('Expires', r.expires ? `${r.expires} (${formatAge(r.expires)})` : undefined);
  const c = r.credentials;
  if (c?.certificate) {
    add('Certificate subject', c.certificate.subject);
    add('Certificate issuer', c.certificate.issuer);
    add('Certificate validity', `${c.certificate.notBefore} .. ${c.certificate.notAfter}`);
    add('Certificate SHA-256', c.certificate.fingerprintSHA256);
  }
  if (c?.token) {
    add('Token', c.token.jwt ? `JWT ${c.token.fingerprint}` : `opaque ${c.token.fingerprint}`);
    add('Token issuer', c.token.issuer);
    add('Token subject', c.token.subject);
    add('Token audiences', c.token.audiences?.join(', '));
    add(
      'Token expires',
      c.token.expires ? `${c.token.expires} (${formatAge(c.token.expires)})` : c.token.jwt ? 'never' : undefined,
    );
  }
  if (c?.exec) {
    add('Exec command', c.exec.command);
    add('Exec apiVersion', c.exec.apiVersion);
    add('Exec provideClusterInfo', c.exec.provideClusterInfo);
    add('Exec interactiveMode', c.exec.interactiveMode);
  }
  add('Auth provider', c?.authProvider);
  add('Basic user', c?.username);
  for (const p of c?.problems ?? []) add('Problem', p);
  const live = r.live;
  if (live) {
    add('Version', live.version?.gitVersion);
    add('Platform', live.version?.platform);
    add('Readyz', live.readyz ? `${live.readyz.ok ? 'ok' : 'failed'} (HTTP ${live.readyz.status})` : undefined);
    add(
      'TLS',
      live.tls
        ? live.tls.mode === 'skipped'
          ? `skipped (insecure-skip-tls-verify; chain ${live.tls.verified ? 'verifies' : `does not verify: ${live.tls.error}`})`
          : live.tls.mode
        : undefined,
    );
    add('Round trip', live.latencyMs === undefined ? undefined : `${live.latencyMs} ms`);
    add('Error', live.error ? `${live.error.kind}: ${live.error.message}` : undefined);
  }
  return out;
}
