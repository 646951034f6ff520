// The provider conformance suite: the same cases over every provider, from one table (PROVIDERS in
// test/support/conformance-providers.ts), against the real control plane (and a real kcp). Each entry of the table
// declares the features its provider has (test/support/conformance.ts: FEATURES); a case whose feature an entry lacks is
// reported as skipped with the entry's reason ("not applicable: ..."), never passed, and an entry that neither has nor
// explains a feature fails the suite. Like multicluster-runtime's pkg/acceptance and cert-manager's conformance
// FeatureSet.
//
// The cases (one `it` per case per provider; providers run side by side, each one's cases in order):
//   list            clusters list -o json / -o name / table; name, provider, server, auth, ready, source.kind and the
//                   fleet.dev/auth label (and -l on it) of each cluster the fixture made
//   names           `<provider>#<name>` among several providers; the name alone finds it when unambiguous; two
//                   providers listing it make the name alone ambiguous (exit 2, both candidates named); an unknown
//                   `<provider>#name` is not found (exit 2, naming where it looked); --provider names it alone
//   short-names     the alias (context name, bare object name) finds the cluster
//   labels          the object's labels are the cluster's; -l selects by them; a selector matching nothing exits 2
//                   naming the label keys in use
//   not-ready       listed not ready with the reason (JSON and the table's REASON), exit 0; --strict exits 1
//   refused-plugin  a cluster whose credential runs an exec plugin the trust policy refuses (hub data by default; the
//                   user's own files through a kuberc): not ready, the reason names the plugin, `auth whoami` fails
//                   on that cluster naming it, and the plugin never runs
//   removal         a cluster removed between two lists is absent from the second, and its name is then not found
//   wrong-shape     an object of the wrong shape: a not-ready row naming what is wrong, the others still listed (or,
//                   for a file, the provider fails with that line and the other providers are still listed)
//   paging          600 clusters (more than one page of 500) all listed, read in pages (limit=500, then continue=)
//                   through a recording proxy in front of the hub
//   hub-gone        the hub goes away in the middle of a list: a proxy forwards the hub's answer to a page (the
//                   second page when there are several, else the last list of the provider's own objects) up to half
//                   of its body, then drops every connection and stops listening. Expected: exit 1, one row for the
//                   provider `cannot list clusters: ...`, none of its clusters (nothing half-listed), the other
//                   provider of the run still listed. A provider without a hub (exec) names the ways its source fails
//                   mid-list instead (Scope.failures: a program cut off mid-output, killed, exiting non-zero, hanging
//                   past its timeout): the same row and exit, one error line naming the program, nothing of its stderr
//   paging (no pages)  for an entry whose paging is not applicable but that sets `manyWhole`: 600 clusters in one
//                   answer, all listed, in reasonable time
//
// Adding a provider is one entry in PROVIDERS (argocd, the last one, shows it for a hub provider):
//   { type: 'argocd', sourceKind: '...', features: [...], notApplicable: {feature: 'why not'}, pluginTrust, start }
// where start(env) returns a Kit: `scope(id)` makes an isolated place for clusters (a hub namespace) and returns a
// Scope: `entry(via?)` (the fleet.yaml provider entry listing that place; `via` routes its hub through the suite's
// proxy), `add(spec)` (makes a cluster that is ready, not ready, runs a refused plugin or is of the wrong shape, and
// says the name, server, auth or reason the listing must show), `remove(cluster)`, `addMany(n)` (paging), `cleanup()`.
// The hub providers' entries show the pattern; hubNamespace() and hubAdminAccess() are there to reuse.
//
// Run time: the last line of the output says it. Measured on the shared 2-core machine at load average 27-37 (other
// sessions' work): 3 to 4.5 minutes wall, about 2 minutes of CPU for fleet, kubectl and the test itself; kcp's start
// and workspaces are the longest chain, fleet's ~160 runs the most CPU.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { ClusterList } from '../../src/commands/clusters/list.js';
import { type CliResult, runFleet } from '../support/cli.js';
import {
  type Feature,
  FEATURE_NAMES,
  FEATURES,
  type HubAccess,
  type Kit,
  type ProviderEntry,
  type Scope,
  type SuiteEnv,
  dropHubAdminAccess,
  markerPlugin,
  memberKubeconfigText,
} from '../support/conformance.js';
import { PROVIDERS } from '../support/conformance-providers.js';
import { loadControlPlane, scratchDir, tokenUser, uniqueName } from '../support/fixture.js';
import { type HubProxy, type ProxiedRequest, startHubProxy } from '../support/hub-proxy.js';

/** The name a table shows: a file cluster by its context (its alias here, unique in a scope); others by their name. */
const shown = (u: { entry: { sourceKind: string } }, c: { name: string; alias?: string }) =>
  u.entry.sourceKind === 'kubeconfig-file' && c.alias ? c.alias : c.name;
const started = performance.now();
const cp = loadControlPlane();
const env: SuiteEnv = { cp, run: uniqueName('conf'), dir: '' };
env.dir = join(scratchDir(), env.run);
mkdirSync(env.dir, { recursive: true });

const MANY = 600;
const LABEL = 'conformance.fleet.dev/tier';
type Item = ClusterList['items'][number];

/** The provider of a case, with its kit and what the case needs to run fleet. */
interface Under {
  entry: ProviderEntry;
  kit: Kit;
  scopes: Scope[];
}

/** Writes a fleet.yaml of named provider entries. */
function fleetConfig(name: string, providers: Record<string, Record<string, unknown>>): string {
  const path = join(env.dir, `${name}.fleet.yaml`);
  writeFileSync(
    path,
    JSON.stringify({ kind: 'FleetConfig', providers: Object.entries(providers).map(([n, e]) => ({ name: n, ...e })) }),
  );
  return path;
}

/** A file provider with one ready context: the other provider of a run, which must still be listed. */
function companion(): Record<string, unknown> {
  const path = join(env.dir, 'companion.kubeconfig');
  if (!existsSync(path))
    writeFileSync(path, memberKubeconfigText(env, 'companion', { token: tokenUser(cp.members[0], 'bob').token }));
  return { type: 'file', kubeconfig: [path] };
}
const COMPANION_NAME = `companion#${join(env.dir, 'companion.kubeconfig')}+companion`;

/** Credentials the fixtures put in kubeconfigs and Secrets, and the proxies' tokens: never in fleet's output. */
const SECRETS = ['alice', 'bob'].map((u) => tokenUser(cp.members[0], u).token);

async function fleet(args: string[], config: string, scope?: Scope, extraEnv: Record<string, string> = {}) {
  const r = await runFleet([...args, '--fleet-config', config], {
    env: { ...scope?.env, ...extraEnv },
    timeoutMs: 60_000,
  });
  for (const secret of SECRETS)
    assert.ok(
      !r.stdout.includes(secret) && !r.stderr.includes(secret),
      `a credential in the output of ${args.join(' ')}`,
    );
  return r;
}

const items = (r: CliResult): Item[] => r.json<ClusterList>().items;
const byName = (r: CliResult) => new Map(items(r).map((i) => [i.name, i]));
const lines = (s: string) => s.split('\n').filter(Boolean);

async function scopeOf(u: Under, id: string): Promise<Scope> {
  const s = await u.kit.scope(id);
  u.scopes.push(s);
  return s;
}

/** Shared by paging and hub-gone: the scope with MANY clusters, made once. */
const manyScopes = new Map<string, Promise<{ scope: Scope; names: string[] }>>();
function manyScope(u: Under) {
  let p = manyScopes.get(u.entry.type);
  if (!p) {
    p = scopeOf(u, 'many').then(async (scope) => ({ scope, names: await scope.addMany!(MANY) }));
    manyScopes.set(u.entry.type, p);
  }
  return p;
}

async function withProxy<T>(
  hub: HubAccess,
  o: { cutWhen?: (r: ProxiedRequest) => boolean },
  f: (p: HubProxy) => Promise<T>,
) {
  const proxy = await startHubProxy(hub, o);
  try {
    return await f(proxy);
  } finally {
    await proxy.close();
  }
}

/**
 * A case makes its fixture (all of a provider's cases at once, before the first runs) and returns its checks, which run
 * in order, one case after another.
 */
type Case = (u: Under) => Promise<(note: (line: string) => void) => Promise<void>>;

const CASES: Record<Feature, Case> = {
  async list(u) {
    const scope = await scopeOf(u, 'list');
    const a = await scope.add({ id: 'a' });
    const b = await scope.add({ id: 'b' });
    return async () => {
      const config = fleetConfig(`${u.entry.type}-list`, { p: scope.entry() });
      const json = await fleet(['clusters', 'list', '-o', 'json'], config, scope);
      assert.equal(json.code, 0, json.stderr);
      assert.equal(json.stderr, '');
      const rows = byName(json);
      assert.deepEqual([...rows.keys()].sort(), [...scope.baseline, a.name, b.name].sort());
      for (const c of [a, b]) {
        const row = rows.get(c.name)!;
        assert.deepEqual(
          [row.provider, row.server, row.auth, row.ready, row.reason, row.source.kind, row.labels['fleet.dev/auth']],
          ['p', c.server, c.auth, true, undefined, u.entry.sourceKind, c.auth],
          c.name,
        );
      }
      const names = await fleet(['clusters', 'list', '-o', 'name'], config, scope);
      assert.deepEqual([names.code, lines(names.stdout)], [0, items(json).map((i) => i.name)]);
      const table = await fleet(['clusters', 'list'], config, scope);
      assert.equal(table.code, 0, table.stderr);
      assert.match(lines(table.stdout)[0], /^NAME\s+PROVIDER\s+SERVER\s+AUTH\s+READY/);
      assert.ok(
        lines(table.stdout).some((l) => l.startsWith(`${shown(u, a)} `) && /\sTrue(\s|$)/.test(l)),
        `table row of ${a.name}:\n${table.stdout}`,
      );
      const byAuth = await fleet(['clusters', 'list', '-l', `fleet.dev/auth=${a.auth}`, '-o', 'name'], config, scope);
      assert.equal(byAuth.code, 0, byAuth.stderr);
      assert.ok(lines(byAuth.stdout).includes(a.name), byAuth.stdout);
    };
  },

  async names(u) {
    const scope = await scopeOf(u, 'names');
    const a = await scope.add({ id: 'a' });
    return async () => {
      // Two providers over the same clusters: p and q.
      const twin = fleetConfig(`${u.entry.type}-twin`, { p: scope.entry(), q: scope.entry(), companion: companion() });
      const listed = await fleet(['clusters', 'list', '-o', 'json'], twin, scope);
      assert.equal(listed.code, 0, listed.stderr);
      const rows = byName(listed);
      assert.equal(rows.get(`p#${a.name}`)?.provider, 'p');
      assert.equal(rows.get(`q#${a.name}`)?.provider, 'q');
      const exact = await fleet(['clusters', 'inspect', `p#${a.name}`, '--offline', '-o', 'json'], twin, scope);
      assert.deepEqual([exact.code, exact.json<{ name: string }>().name], [0, `p#${a.name}`], exact.stderr);
      const ambiguous = await fleet(['clusters', 'inspect', a.name, '--offline'], twin, scope);
      assert.deepEqual(
        [ambiguous.code, ambiguous.stderr],
        [2, `error: cluster name "${a.name}" is ambiguous; use one of: "p#${a.name}", "q#${a.name}"\n`],
      );
      const unknown = await fleet(['clusters', 'inspect', 'p#conformance-nosuch', '--offline'], twin, scope);
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /^error: cluster "p#conformance-nosuch" not found in \S/);

      const one = fleetConfig(`${u.entry.type}-one`, { p: scope.entry(), companion: companion() });
      const alone = await fleet(['clusters', 'inspect', a.name, '--offline', '-o', 'json'], one, scope);
      assert.deepEqual([alone.code, alone.json<{ name: string }>().name], [0, `p#${a.name}`], alone.stderr);
      const provider = await fleet(['clusters', 'list', '--provider', 'p', '-o', 'name'], one, scope);
      assert.deepEqual([provider.code, lines(provider.stdout).sort()], [0, [...scope.baseline, a.name].sort()]);
    };
  },

  async 'short-names'(u) {
    const scope = await scopeOf(u, 'alias');
    const a = await scope.add({ id: 'a' });
    return async () => {
      assert.ok(a.alias && a.alias !== a.name, 'the fixture names an alias');
      const config = fleetConfig(`${u.entry.type}-alias`, { p: scope.entry(), companion: companion() });
      const found = await fleet(['clusters', 'inspect', a.alias, '--offline', '-o', 'json'], config, scope);
      assert.deepEqual([found.code, found.json<{ name: string }>().name], [0, `p#${a.name}`], found.stderr);
      const alone = await fleet(
        ['clusters', 'inspect', a.alias, '--offline', '--provider', 'p', '-o', 'json'],
        config,
        scope,
      );
      assert.deepEqual([alone.code, alone.json<{ name: string }>().name], [0, a.name], alone.stderr);
    };
  },

  async labels(u) {
    const scope = await scopeOf(u, 'labels');
    const gold = await scope.add({ id: 'gold', labels: { [LABEL]: 'gold' } });
    await scope.add({ id: 'silver', labels: { [LABEL]: 'silver' } });
    return async () => {
      const config = fleetConfig(`${u.entry.type}-labels`, { p: scope.entry() });
      const json = await fleet(['clusters', 'list', '-o', 'json'], config, scope);
      assert.equal(json.code, 0, json.stderr);
      assert.equal(byName(json).get(gold.name)?.labels[LABEL], 'gold');
      const selected = await fleet(['clusters', 'list', '-l', `${LABEL}=gold`, '-o', 'name'], config, scope);
      assert.deepEqual([selected.code, lines(selected.stdout)], [0, [gold.name]], selected.stderr);
      const none = await fleet(['clusters', 'list', '-l', `${LABEL}=bronze`, '-o', 'name'], config, scope);
      assert.equal(none.code, 2);
      assert.match(
        none.stderr,
        new RegExp(`^error: --selector ${LABEL}=bronze matched none of .*label keys in use: .*${LABEL}`),
      );
    };
  },

  async 'not-ready'(u) {
    const scope = await scopeOf(u, 'ready');
    const ok = await scope.add({ id: 'ok' });
    const down = await scope.add({ id: 'down', state: 'not-ready' });
    return async () => {
      const config = fleetConfig(`${u.entry.type}-ready`, { p: scope.entry() });
      const json = await fleet(['clusters', 'list', '-o', 'json'], config, scope);
      assert.equal(json.code, 0, json.stderr);
      const rows = byName(json);
      assert.equal(rows.get(ok.name)?.ready, true);
      assert.equal(rows.get(down.name)?.ready, false);
      assert.match(rows.get(down.name)?.reason ?? '', down.reason!);
      const table = await fleet(['clusters', 'list'], config, scope);
      assert.match(lines(table.stdout)[0], /\sREADY\s.*REASON$/);
      const row = lines(table.stdout).find((l) => l.startsWith(`${shown(u, down)} `)) ?? '';
      assert.ok(row.includes(rows.get(down.name)!.reason!.slice(0, 30)) && /\sFalse\s/.test(row), row);
      const strict = await fleet(['clusters', 'list', '--strict', '-o', 'name'], config, scope);
      assert.equal(strict.code, 1);
    };
  },

  async 'refused-plugin'(u) {
    const scope = await scopeOf(u, 'plugin');
    const plugin = markerPlugin(env.dir, u.entry.type);
    const ok = await scope.add({ id: 'ok' });
    const bad = await scope.add({ id: 'exec', state: 'refused-plugin', plugin: plugin.command });
    return async () => {
      const config = fleetConfig(`${u.entry.type}-plugin`, { p: scope.entry() });
      // Hub data's plugins are refused by default; a user's own files' by the user's kuberc.
      const extra: Record<string, string> = {};
      if (u.entry.pluginTrust === 'user') {
        const kuberc = join(env.dir, `${u.entry.type}.kuberc`);
        const allowed = u.kit.allowedPlugins ?? [];
        writeFileSync(
          kuberc,
          JSON.stringify({
            apiVersion: 'kubectl.config.k8s.io/v1beta1',
            kind: 'Preference',
            ...(allowed.length > 0
              ? {
                  credentialPluginPolicy: 'Allowlist',
                  credentialPluginAllowlist: allowed.map((command) => ({ name: command })),
                }
              : { credentialPluginPolicy: 'DenyAll' }),
          }),
        );
        extra.KUBERC = kuberc;
      }
      const json = await fleet(['clusters', 'list', '-o', 'json'], config, scope, extra);
      assert.equal(json.code, 0, json.stderr);
      const rows = byName(json);
      assert.equal(rows.get(ok.name)?.ready, true, rows.get(ok.name)?.reason);
      assert.equal(rows.get(bad.name)?.ready, false);
      assert.match(rows.get(bad.name)?.reason ?? '', bad.reason!);
      const who = await fleet(['auth', 'whoami', '--cluster', bad.name, '-o', 'json'], config, scope, extra);
      assert.equal(who.code, 1, who.stdout);
      assert.ok(who.stderr.startsWith(`error: ${bad.name}: `), who.stderr);
      assert.ok(who.stderr.includes(plugin.command), who.stderr);
      assert.equal(existsSync(plugin.marker), false, 'the refused plugin ran');
    };
  },

  async removal(u) {
    const scope = await scopeOf(u, 'removal');
    const a = await scope.add({ id: 'a' });
    const b = await scope.add({ id: 'b' });
    return async () => {
      const config = fleetConfig(`${u.entry.type}-removal`, { p: scope.entry() });
      const first = await fleet(['clusters', 'list', '-o', 'name'], config, scope);
      assert.deepEqual([first.code, lines(first.stdout).sort()], [0, [...scope.baseline, a.name, b.name].sort()]);
      await scope.remove(a);
      const second = await fleet(['clusters', 'list', '-o', 'name'], config, scope);
      assert.deepEqual(
        [second.code, lines(second.stdout).sort()],
        [0, [...scope.baseline, b.name].sort()],
        second.stderr,
      );
      const gone = await fleet(['clusters', 'inspect', a.name, '--offline'], config, scope);
      assert.equal(gone.code, 2);
      assert.match(gone.stderr, new RegExp(`^error: cluster "${escape(a.name)}" not found in \\S`));
    };
  },

  async 'wrong-shape'(u) {
    const scope = await scopeOf(u, 'shape');
    const ok = await scope.add({ id: 'ok' });
    const bad = await scope.add({ id: 'bad', state: 'wrong-shape' });
    return async () => {
      if (u.entry.wrongShape === 'provider-fails') {
        const config = fleetConfig(`${u.entry.type}-shape`, { p: scope.entry(), companion: companion() });
        const r = await fleet(['clusters', 'list', '-o', 'json'], config, scope);
        assert.equal(r.code, 1);
        const rows = items(r);
        assert.deepEqual(
          rows.map((i) => i.name),
          ['p', COMPANION_NAME],
        );
        assert.deepEqual([rows[0].ready, rows[0].source.kind], [false, 'provider']);
        assert.match(rows[0].reason ?? '', /^cannot list clusters: /);
        assert.match(rows[0].reason ?? '', bad.reason!);
        assert.match(r.stderr, /^error: cannot list clusters: /m);
        return;
      }
      const config = fleetConfig(`${u.entry.type}-shape`, { p: scope.entry() });
      const r = await fleet(['clusters', 'list', '-o', 'json'], config, scope);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '');
      const rows = byName(r);
      assert.equal(rows.get(ok.name)?.ready, true);
      assert.equal(rows.get(bad.name)?.ready, false);
      assert.match(rows.get(bad.name)?.reason ?? '', bad.reason!);
    };
  },

  async paging(u) {
    const { scope, names } = await manyScope(u);
    return async (note) => {
      await withProxy(u.kit.hub!, {}, async (proxy) => {
        const config = fleetConfig(`${u.entry.type}-paging`, {
          p: scope.entry({ ...u.kit.hub!, url: proxy.url, caFile: proxy.caFile }),
        });
        const r = await fleet(['clusters', 'list', '-o', 'name'], config, scope);
        assert.equal(r.code, 0, r.stderr);
        assert.equal(lines(r.stdout).length, MANY + scope.baseline.length);
        assert.deepEqual(lines(r.stdout).sort(), [...scope.baseline, ...names].sort());
        const pages = proxy.requests.filter((q) => q.list && /(^|&)limit=500(&|$)/.test(q.query));
        assert.ok(
          pages.length >= 2 && pages.some((q) => /(^|&)continue=/.test(q.query)),
          `read in pages of 500: ${JSON.stringify(proxy.requests)}`,
        );
        note(
          `${pages.length} pages (${pages.map((q) => q.items).join(' + ')} items), ${proxy.requests.length} requests`,
        );
      });
    };
  },

  async 'hub-gone'(u) {
    if (!u.kit.hub) return sourceGone(u);
    // With paging, the many-cluster scope (the cut is on its second page); else a scope of two clusters.
    const scope = u.entry.features.includes('paging')
      ? (await manyScope(u)).scope
      : await scopeOf(u, 'gone').then(async (s) => {
          await s.add({ id: 'a' });
          await s.add({ id: 'b' });
          return s;
        });
    return async (note) => {
      const via = (p: HubProxy) => ({ ...u.kit.hub!, url: p.url, caFile: p.caFile });
      // First through a proxy that records, to know which answer to cut.
      const recorded = await withProxy(u.kit.hub!, {}, async (proxy) => {
        const config = fleetConfig(`${u.entry.type}-gone-record`, { p: scope.entry(via(proxy)) });
        const r = await fleet(['clusters', 'list', '-o', 'name'], config, scope);
        assert.equal(r.code, 0, r.stderr);
        return proxy.requests;
      });
      const lists = recorded.filter((q) => q.list);
      assert.ok(lists.length > 0, `the provider listed: ${JSON.stringify(recorded)}`);
      const collection = (q: ProxiedRequest) => q.path.split('/').pop();
      const target =
        lists.find((q) => /(^|&)continue=/.test(q.query)) ??
        lists.filter((q) => collection(q) === collection(lists[0])).at(-1)!;
      const paged = /(^|&)continue=/.test(target.query);
      await withProxy(
        u.kit.hub!,
        { cutWhen: (q) => q.path === target.path && /(^|&)continue=/.test(q.query) === paged },
        async (proxy) => {
          const config = fleetConfig(`${u.entry.type}-gone`, { p: scope.entry(via(proxy)), companion: companion() });
          const t0 = performance.now();
          const r = await fleet(['clusters', 'list', '-o', 'json'], config, scope);
          const ms = performance.now() - t0;
          assert.ok(proxy.cut, `the proxy cut an answer (${JSON.stringify(proxy.requests)})`);
          assert.equal(r.code, 1, r.stderr);
          const rows = items(r);
          assert.deepEqual(
            rows.map((i) => i.name),
            ['p', COMPANION_NAME],
            'one row for the provider, none of its clusters',
          );
          // The -o json shape of a provider that could not list: a row named after it, source.kind "provider".
          assert.deepEqual(
            [rows[0].ready, rows[0].provider, rows[0].source.kind, rows[0].source.name],
            [false, 'p', 'provider', 'p'],
          );
          assert.match(rows[0].reason ?? '', new RegExp(`^cannot list clusters: ${u.entry.type} provider "p": `));
          assert.doesNotMatch(rows[0].reason ?? '', /JSON|Unexpected end|internal/i);
          assert.equal(rows[1].ready, true);
          assert.match(r.stderr, new RegExp(`^error: cannot list clusters: ${u.entry.type} provider "p": `, 'm'));
          assert.ok(ms < 30_000, `took ${Math.round(ms)} ms`);
          note(`cut ${proxy.cut.path}${paged ? ' (a continue page)' : ''}: ${rows[0].reason} (${Math.round(ms)} ms)`);
        },
      );
    };
  },
};

/** `hub-gone` without a hub: each way the source fails mid-list (Scope.failures) gives the provider's failed row. */
async function sourceGone(u: Under): Promise<(note: (line: string) => void) => Promise<void>> {
  const scope = await scopeOf(u, 'gone');
  await scope.add({ id: 'a' });
  await scope.add({ id: 'b' });
  const failures = scope.failures?.() ?? [];
  assert.ok(failures.length > 0, `${u.entry.type}: no hub, so its scope names the ways its source fails (failures)`);
  return async (note) => {
    const config = fleetConfig(`${u.entry.type}-gone`, { p: scope.entry(), companion: companion() });
    for (const f of failures) {
      await f.start();
      try {
        const t0 = performance.now();
        const r = await fleet(['clusters', 'list', '-o', 'json'], config, scope);
        const ms = performance.now() - t0;
        assert.equal(r.code, 1, `${f.what}: ${r.stderr}`);
        const rows = items(r);
        assert.deepEqual(
          rows.map((i) => i.name),
          ['p', COMPANION_NAME],
          `${f.what}: one row for the provider, none of its clusters`,
        );
        assert.deepEqual(
          [rows[0].ready, rows[0].provider, rows[0].source.kind, rows[0].source.name, rows[1].ready],
          [false, 'p', 'provider', 'p', true],
        );
        assert.match(rows[0].reason ?? '', new RegExp(`^cannot list clusters: ${u.entry.type} provider "p" `));
        assert.match(rows[0].reason ?? '', f.reason, f.what);
        // One line, and it is the row's reason: nothing else of the failure (nor of the source's stderr) is printed.
        assert.deepEqual(lines(r.stderr), [`error: ${rows[0].reason}`], f.what);
        if (f.secret) assert.ok(!(r.stdout + r.stderr).includes(f.secret), `${f.what}: its stderr was shown`);
        assert.ok(ms < 30_000, `${f.what}: took ${Math.round(ms)} ms`);
        await f.check?.();
        note(`${f.what}: ${rows[0].reason} (${Math.round(ms)} ms)`);
      } finally {
        await f.stop();
      }
    }
    // The source answering again, its clusters are listed again.
    const again = await fleet(['clusters', 'list', '-o', 'name'], config, scope);
    assert.equal(again.code, 0, again.stderr);
  };
}

/** `paging (no pages)`: MANY clusters in one answer (the paging scope's), all listed, in reasonable time. */
async function manyWhole(u: Under): Promise<(note: (line: string) => void) => Promise<void>> {
  const { scope, names } = await manyScope(u);
  return async (note) => {
    const config = fleetConfig(`${u.entry.type}-many`, { p: scope.entry() });
    const t0 = performance.now();
    const r = await fleet(['clusters', 'list', '-o', 'json'], config, scope);
    const ms = performance.now() - t0;
    assert.equal(r.code, 0, r.stderr);
    const rows = items(r);
    assert.deepEqual(rows.map((i) => i.name).sort(), [...scope.baseline, ...names].sort());
    assert.ok(
      rows.every((i) => i.ready),
      'every one ready',
    );
    assert.ok(ms < 30_000, `took ${Math.round(ms)} ms`);
    note(`${rows.length} clusters in one answer, listed in ${Math.round(ms)} ms (clusters list -o json, wall)`);
  };
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('provider table', () => {
  it('every entry has or explains every feature, and the cases cover every feature', () => {
    assert.deepEqual(Object.keys(CASES).sort(), [...FEATURE_NAMES].sort());
    for (const e of PROVIDERS) {
      for (const f of FEATURE_NAMES) {
        const has = e.features.includes(f);
        const why = e.notApplicable[f];
        assert.ok(
          has !== (why !== undefined),
          `${e.type}: feature ${f} must be either supported or explained, not both`,
        );
        if (why !== undefined) assert.ok(why.length > 10, `${e.type}: ${f}: a reason, not a word`);
      }
      if (e.features.includes('refused-plugin'))
        assert.ok(e.pluginTrust, `${e.type}: refused-plugin needs pluginTrust`);
    }
    assert.deepEqual(new Set(PROVIDERS.map((e) => e.type)).size, PROVIDERS.length, 'one entry per type');
  });
});

describe('provider conformance', { concurrency: PROVIDERS.length }, () => {
  for (const entry of PROVIDERS) {
    // One provider's cases run in order; the providers side by side.
    describe(entry.type, { concurrency: 1 }, () => {
      const u: Under = { entry, kit: undefined as unknown as Kit, scopes: [] };
      const checks = new Map<Feature | 'many-whole', Promise<(note: (line: string) => void) => Promise<void>>>();
      before(async () => {
        u.kit = await entry.start(env);
        if (u.kit.hub) SECRETS.push(u.kit.hub.token);
        SECRETS.push(...(u.kit.secrets ?? []));
        // Every case's fixture is made at once; each case then waits for its own.
        for (const feature of entry.features) {
          const made = CASES[feature](u);
          made.catch(() => undefined); // reported by the case's own test
          checks.set(feature, made);
        }
        if (entry.manyWhole && !entry.features.includes('paging')) {
          const made = manyWhole(u);
          made.catch(() => undefined);
          checks.set('many-whole', made);
        }
      });
      after(async () => {
        await Promise.allSettled(checks.values());
        for (const s of u.scopes) await s.cleanup?.().catch(() => undefined);
        await u.kit?.stop?.();
      });
      for (const feature of FEATURE_NAMES) {
        const why = entry.notApplicable[feature];
        it(`${feature}: ${FEATURES[feature]}`, why !== undefined ? { skip: `not applicable: ${why}` } : {}, async (t) =>
          (await checks.get(feature)!)((line) => t.diagnostic(line)),
        );
      }
      if (entry.manyWhole && !entry.features.includes('paging'))
        it(`paging (no pages): ${MANY} clusters in one answer are all listed`, async (t) =>
          (await checks.get('many-whole')!)((line) => t.diagnostic(line)));
    });
  }
});

after(async () => {
  await dropHubAdminAccess(env);
  process.stderr.write(`# provider conformance: ${Math.round((performance.now() - started) / 1000)} s\n`);
});
