// The shell examples of docs/creds.md and docs/rotation.md, run as written against the real control plane (issue 19:
// "docs/creds.md and docs/rotation.md examples are run by a test as written"). The docs are read when the test runs,
// so an example edited there is the example tested here.
//
// What is run: every line of a ```sh block that starts with `fleet ` (a trailing `\` joins the next line), through
// bash, with `fleet` on PATH being this checkout's bin/run.js. Comments and quoting are bash's. The reader's machine:
// HOME is an empty directory whose ~/.kube/config is one merged kubeconfig with the sandbox's contexts hub, member-1,
// member-2 (admin credentials; current-context hub), KUBECONFIG unset, no fleet configuration, the working directory a
// fresh one holding a copy of the hub's kubeconfig named hub.kubeconfig.
//
// The mapping from the docs' world to the sandbox (the only changes made to a line):
//   cluster names     member-1, member-2      the sandbox's members, contexts of the same names (unchanged)
//   hub               the current context     `hub` (the docs' JSON calls it "mgmt": `mgmt` -> `hub` in a line)
//   kubeconfig paths  hub.kubeconfig          a copy of the sandbox's hub kubeconfig in the working directory (unchanged)
//                     /etc/fleet/fleet.yaml   <work>/etc-fleet/fleet.yaml: members through a file provider, no hub:
//   namespaces        as written              those the examples name (--service-account NS/, -n NS on the members,
//                                              --secret NS/ on the hub) are created first when missing, as the docs
//                                              assume they exist, and deleted afterwards
// Order: the `creds generate` lines first (in document order, creds.md before rotation.md), then every other line in
// document order, `creds revoke` lines last, so a rotate or list example finds what a generate example made.
//
// Checked for every line: no usage or configuration error (exit 2) and a known command (no 127). A `creds generate`
// (not --dry-run) exits 0; a `creds rotate` naming Secrets or files exits 0; a `creds list --expiring-within D` names,
// as expiring, every credential the examples wrote that expires within D and then exits 1. No token or key the
// examples made appears in any output (except the stdout of `--out -`, which prints the kubeconfig on request).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { FLEET_BIN } from '../support/cli.js';
import { applyYaml, kubectl, kubectlResult, loadControlPlane, scratchDir, uniqueName } from '../support/fixture.js';

const cp = loadControlPlane();
const hub = cp.hub;
const [m1, m2] = cp.members;
const DOCS = ['creds.md', 'rotation.md'];
const docPath = (name: string) => fileURLToPath(new URL(`../../docs/${name}`, import.meta.url));

interface Example {
  doc: string;
  /** 1-based line of the doc where the example starts. */
  line: number;
  /** The example as written (continuations joined). */
  text: string;
  /** What is run: the text with the sandbox mapping applied. */
  run: string;
}

/** The `fleet ...` lines of a Markdown file's ```sh blocks. */
function shellExamples(doc: string, text: string): Example[] {
  const out: Example[] = [];
  const lines = text.split('\n');
  let inSh = false;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (/^```/.test(l.trim())) {
      inSh = !inSh && /^```(sh|bash|shell|console)\s*$/.test(l.trim());
      continue;
    }
    if (!inSh) continue;
    const start = i;
    let cmd = l.trim().replace(/^\$ /, '');
    while (/\\\s*$/.test(cmd) && i + 1 < lines.length) cmd = cmd.replace(/\\\s*$/, ' ') + lines[++i].trim();
    if (/^fleet\s/.test(cmd)) out.push({ doc, line: start + 1, text: cmd, run: cmd });
  }
  return out;
}

const work = join(scratchDir(), uniqueName('docs-examples'));
const etcFleet = join(work, 'etc-fleet');
/** The mapping documented in the header, applied to each line. */
const MAPPING: Array<[RegExp, string]> = [
  [/(^|[\s=])mgmt(?=$|[\s:])/g, '$1hub'],
  [/\/etc\/fleet\//g, `${etcFleet}/`],
];
const mapLine = (s: string) => MAPPING.reduce((acc, [re, to]) => acc.replace(re, to), s);

interface Ran {
  ex: Example;
  code: number;
  stdout: string;
  stderr: string;
}
const ran: Ran[] = [];
const home = join(work, 'home');
const cwd = join(work, 'cwd');
const bin = join(work, 'bin');

function sh(command: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${bin}:${process.env.PATH}`,
    HOME: home,
    CI: 'true',
    NO_COLOR: '1',
  };
  for (const k of [
    'KUBECONFIG',
    'XDG_CONFIG_HOME',
    'FLEET_CONFIG',
    'KUBERNETES_SERVICE_HOST',
    'KUBERNETES_SERVICE_PORT',
    'FLEET_IN_CLUSTER_TOKEN_FILE',
    'FLEET_IN_CLUSTER_CA_FILE',
  ])
    delete env[k];
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-o', 'pipefail', '-c', command], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 240_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Namespaces the examples name, per server: --service-account NS/ and -n NS on the member they target, --secret NS/ on the hub. */
function namespacesNamed(examples: Example[]): Map<typeof hub, Set<string>> {
  const want = new Map<typeof hub, Set<string>>([
    [hub, new Set()],
    [m1, new Set()],
    [m2, new Set()],
  ]);
  for (const ex of examples) {
    const cluster = /(?:-c|--cluster)[ =](member-\d+)/.exec(ex.run)?.[1];
    const member = cp.members.find((m) => m.context === cluster) ?? m1;
    for (const m of ex.run.matchAll(/--service-account[ =]([a-z0-9-]+)\//g)) want.get(member)?.add(m[1]);
    for (const m of ex.run.matchAll(/(?:\s-n|--namespace)[ =]([a-z0-9-]+)/g)) want.get(member)?.add(m[1]);
    for (const m of ex.run.matchAll(/--secret[ =]([a-z0-9-]+)\//g)) want.get(hub)!.add(m[1]);
  }
  return want;
}

const created: Array<[typeof hub, string]> = [];
let examples: Example[] = [];

before(async () => {
  for (const d of [home, join(home, '.kube'), cwd, bin, etcFleet]) mkdirSync(d, { recursive: true, mode: 0o700 });
  writeFileSync(join(bin, 'fleet'), `#!/bin/sh\nexec "${process.execPath}" "${FLEET_BIN}" "$@"\n`, { mode: 0o755 });
  const docs = [hub, m1, m2].map((s) => yaml.load(readFileSync(s.kubeconfig, 'utf8')) as any);
  writeFileSync(
    join(home, '.kube', 'config'),
    yaml.dump(
      {
        apiVersion: 'v1',
        kind: 'Config',
        preferences: {},
        'current-context': hub.context,
        clusters: docs.flatMap((d) => d.clusters),
        users: docs.flatMap((d) => d.users),
        contexts: docs.flatMap((d) => d.contexts),
      },
      { lineWidth: -1 },
    ),
    { mode: 0o600 },
  );
  writeFileSync(join(cwd, 'hub.kubeconfig'), readFileSync(hub.kubeconfig), { mode: 0o600 });
  for (const m of [m1, m2])
    writeFileSync(join(etcFleet, `${m.name}.kubeconfig`), readFileSync(m.kubeconfig), { mode: 0o400 });
  writeFileSync(
    join(etcFleet, 'fleet.yaml'),
    'kind: FleetConfig\nproviders:\n  - {name: members, type: file, kubeconfig: [./member-1.kubeconfig, ./member-2.kubeconfig]}\n',
  );
  examples = DOCS.flatMap((d) => shellExamples(d, readFileSync(docPath(d), 'utf8'))).map((ex) => ({
    ...ex,
    run: mapLine(ex.text),
  }));
  for (const [server, names] of namespacesNamed(examples)) {
    for (const ns of names) {
      if ((await kubectlResult(server, ['get', 'namespace', ns])).code === 0) continue;
      await applyYaml(server, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }));
      created.push([server, ns]);
    }
  }
});

after(async () => {
  for (const [server, ns] of created) {
    await kubectlResult(server, ['delete', 'namespace', ns, '--wait=false']);
    const names = (await kubectl(server, ['get', 'clusterroles,clusterrolebindings', '-o', 'name']))
      .split('\n')
      .filter((n) => n.includes(`/fleet-creds-${ns}-`));
    if (names.length > 0) await kubectlResult(server, ['delete', ...names, '--ignore-not-found']);
  }
});

const is = (ex: Example, verb: string) => new RegExp(`^fleet\\s+creds\\s+${verb}(\\s|$)`).test(ex.run);
const show = (r: Ran) =>
  `${r.ex.doc}:${r.ex.line}: ${r.ex.text}\n  exit ${r.code}\n  stderr: ${r.stderr.trim()}\n  stdout: ${r.stdout.slice(0, 1500)}`;

/** The fleet-managed Secrets on the hub in the namespaces the examples write to: name, expiry, credential text. */
async function docSecrets(): Promise<Array<{ ns: string; name: string; expires: string; text: string }>> {
  const out: Array<{ ns: string; name: string; expires: string; text: string }> = [];
  for (const ns of namespacesNamed(examples).get(hub)!) {
    const r = await kubectlResult(hub, [
      'get',
      'secrets',
      '-n',
      ns,
      '-l',
      'app.kubernetes.io/managed-by=fleet',
      '-o',
      'json',
    ]);
    if (r.code !== 0) continue;
    for (const s of JSON.parse(r.stdout).items as any[]) {
      const d = s.data ?? {};
      const raw = d.kubeconfig ?? d.value ?? d.Config ?? d.config;
      out.push({
        ns,
        name: s.metadata.name,
        expires: s.metadata.annotations?.['fleet.dev/credential-expires'] ?? '',
        text: raw ? Buffer.from(raw, 'base64').toString('utf8') : '',
      });
    }
  }
  return out;
}

function parseWindowMs(d: string): number | undefined {
  const m = /^(\d+)(m|h|d)$/.exec(d);
  if (!m) return undefined;
  return Number(m[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'm' | 'h' | 'd'];
}

describe('docs/creds.md and docs/rotation.md shell examples, run as written', { concurrency: false }, () => {
  it('the docs have fleet examples in ```sh blocks', () => {
    for (const d of DOCS)
      assert.ok(
        examples.some((e) => e.doc === d),
        `no fleet example found in docs/${d}`,
      );
    assert.ok(
      examples.some((e) => is(e, 'generate')),
      'no creds generate example',
    );
    assert.ok(
      examples.some((e) => is(e, 'rotate')),
      'no creds rotate example',
    );
  });

  it('every example runs: no usage or configuration error; generate and named rotations succeed; list --expiring-within names what expires', async () => {
    const order = [
      ...examples.filter((e) => is(e, 'generate')),
      ...examples.filter((e) => !is(e, 'generate') && !is(e, 'revoke')),
      ...examples.filter((e) => is(e, 'revoke')),
    ];
    const problems: string[] = [];
    for (const ex of order) {
      const res = await sh(ex.run);
      const r: Ran = { ex, ...res };
      ran.push(r);
      const dry = /\s--dry-run(\s|$)/.test(ex.run);
      if (r.code === 2 || r.code === 127) problems.push(`usage or configuration error: ${show(r)}`);
      else if (is(ex, 'generate') && !dry && r.code !== 0) problems.push(`generate did not succeed: ${show(r)}`);
      else if (is(ex, 'rotate') && !/\s--all(\s|$)/.test(ex.run) && !dry && r.code !== 0)
        problems.push(`a named rotation did not succeed: ${show(r)}`);
      const window = /--expiring-within[ =](\S+)/.exec(ex.run)?.[1];
      if (is(ex, 'list') && window && r.code !== 2) {
        // The same command with -o json: every credential the examples wrote that expires within the window is named.
        // A trailing comment (a word starting with #, as bash reads it) is dropped so that -o json is an argument.
        const json = await sh(`${ex.run.replace(/\s#.*$/, '')} -o json`);
        ran.push({ ex: { ...ex, text: `${ex.text} -o json` }, ...json });
        const items = (() => {
          try {
            return JSON.parse(json.stdout).items as any[];
          } catch {
            return undefined;
          }
        })();
        if (!items) {
          problems.push(
            `${ex.doc}:${ex.line}: ${ex.text} -o json printed no JSON (exit ${json.code}): ${json.stderr.trim()}`,
          );
          continue;
        }
        const within = parseWindowMs(window)!;
        const due = (await docSecrets()).filter(
          (s) => s.expires && s.expires !== 'never' && Date.parse(s.expires) - Date.now() <= within,
        );
        for (const s of due) {
          const item = items.find(
            (i) => i.source?.kind === 'secret' && i.source.namespace === s.ns && i.source.name === s.name,
          );
          if (item?.expiring !== true)
            problems.push(
              `${ex.doc}:${ex.line}: ${ex.text}: Secret ${s.ns}/${s.name} expires ${s.expires}, within ${window}, but is ${item ? 'not marked expiring' : 'not listed'} (exit ${r.code})`,
            );
        }
        const anyExpiring = items.some((i) => i.expiring === true);
        // Exit 1 when any expires within the window (it may also be 1 for another reason: a hub it could not read).
        if (anyExpiring && r.code !== 1)
          problems.push(
            `${ex.doc}:${ex.line}: ${ex.text}: exit ${r.code} although a credential expires within ${window}`,
          );
      }
    }
    assert.deepEqual(problems, [], `${problems.length} of ${order.length} examples failed`);
  });

  it('no token or key the examples made appears in any output', async () => {
    assert.ok(ran.length > 0, 'no example ran');
    const secrets = new Set<string>();
    const remember = (text: string) => {
      let doc: any;
      try {
        doc = yaml.load(text);
      } catch {
        return;
      }
      if (doc?.bearerToken) secrets.add(doc.bearerToken);
      if (doc?.tlsClientConfig?.keyData) secrets.add(doc.tlsClientConfig.keyData);
      for (const u of doc?.users ?? []) {
        if (u.user?.token) secrets.add(u.user.token);
        if (u.user?.['client-key-data']) {
          secrets.add(u.user['client-key-data']);
          secrets.add(Buffer.from(u.user['client-key-data'], 'base64').toString('utf8').trim());
        }
      }
    };
    for (const s of await docSecrets()) remember(s.text);
    for (const f of readdirSync(cwd))
      if (f.endsWith('.kubeconfig') || f.endsWith('.yaml')) remember(readFileSync(join(cwd, f), 'utf8'));
    remember(readFileSync(join(home, '.kube', 'config'), 'utf8'));
    assert.ok(secrets.size > 0, 'no secret collected');
    for (const r of ran) {
      const stdoutIsTheSecret = /--out[ =]-(\s|$)/.test(r.ex.run);
      for (const s of secrets) {
        assert.ok(!r.stderr.includes(s), `a secret in the stderr of ${r.ex.doc}:${r.ex.line}: ${r.ex.text}`);
        if (!stdoutIsTheSecret)
          assert.ok(!r.stdout.includes(s), `a secret in the stdout of ${r.ex.doc}:${r.ex.line}: ${r.ex.text}`);
      }
    }
  });
});
