// The prometheus-operator CRDs (ServiceMonitor, PrometheusRule) from its Go module, at a pinned version, downloaded
// once through the Go module proxy into ~/.cache/fleet/prometheus-operator (as the release tools are cached): the
// chart's tests apply them to the test hub so that kubeconform's schemas (made from the hub's OpenAPI) and server-side
// dry runs cover the chart's monitoring.coreos.com objects.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const PROMETHEUS_OPERATOR_MODULE = 'github.com/prometheus-operator/prometheus-operator';
export const PROMETHEUS_OPERATOR_VERSION = 'v0.86.1';
const CRDS = ['monitoring.coreos.com_servicemonitors.yaml', 'monitoring.coreos.com_prometheusrules.yaml'];

/** The paths of the ServiceMonitor and PrometheusRule CRDs of the pinned module (downloaded on first use). */
export function prometheusOperatorCrds(): string[] {
  const cache = join(
    process.env.XDG_CACHE_HOME ?? join(process.env.HOME ?? '/root', '.cache'),
    'fleet/prometheus-operator/mod',
  );
  const out = execFileSync(
    'go',
    ['mod', 'download', '-json', `${PROMETHEUS_OPERATOR_MODULE}@${PROMETHEUS_OPERATOR_VERSION}`],
    {
      encoding: 'utf8',
      timeout: 600_000,
      // Outside any module (no go.mod in the working directory); read-only files are left as the Go cache keeps them,
      // -modcacherw so the cache can be removed with rm -rf.
      cwd: '/',
      env: { ...process.env, GOMODCACHE: cache, GOFLAGS: '-modcacherw', GO111MODULE: 'on' },
    },
  );
  const dir = (JSON.parse(out) as { Dir?: string; Error?: string }).Dir;
  if (!dir) throw new Error(`go mod download ${PROMETHEUS_OPERATOR_MODULE}@${PROMETHEUS_OPERATOR_VERSION}: ${out}`);
  return CRDS.map((name) => {
    const p = join(dir, 'example/prometheus-operator-crd', name);
    if (!existsSync(p)) throw new Error(`${p} is not in the module`);
    return p;
  });
}
