// The container image (Containerfile, prepared and built by scripts/image.sh) built with buildah as CI builds it, then fleet
// (its single executable: no Node, node_modules or shell in the image, checked on the mounted root file system) run
// inside it against the real control plane: the entry point, the user (not root), `auth whoami` with the kubeconfig
// mounted read-only as a Secret volume would be, by flag and through KUBECONFIG. buildah runs the container with chroot
// isolation, which shares the host's network, so the sandbox's 127.0.0.1 servers are reachable as they are from a Pod's
// cluster network. The build's time and the image's size go to the test's diagnostics.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';

import { runFleet } from '../support/cli.js';
import { applyYaml, kubectlResult, loadControlPlane, scratchDir, tokenUser, uniqueName } from '../support/fixture.js';
import { cronJobRotator } from '../support/rbac.js';

const cp = loadControlPlane();
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const VERSION = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
// The Node inside fleet's executable, which is the image's fleet (scripts/image.sh, scripts/executable.mjs).
const NODE_VERSION = /^const NODE_VERSION = '([^']+)'/m.exec(
  readFileSync(join(ROOT, 'scripts/executable.mjs'), 'utf8'),
)![1];
const TAG = 'localhost/fleet:e2e';
const UID = 65532;
// Images of the test live in a storage of their own (the cache CI keeps), not in the machine's default one.
const STORAGE =
  process.env.FLEET_IMAGE_STORAGE ??
  join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'fleet/image/storage');
const BUILDAH_ENV = {
  ...process.env,
  STORAGE_DRIVER: 'vfs',
  BUILDAH_ISOLATION: 'chroot',
  FLEET_IMAGE_STORAGE: STORAGE,
};
const GLOBAL = ['--root', STORAGE, '--runroot', `${STORAGE}-run`];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = BUILDAH_ENV, timeout = 240_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { env, cwd: ROOT, timeout, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number')
        return reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${stderr}`));
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    });
  });
}

/** stderr without the lines buildah adds when the command exits non-zero. */
const fleetLines = (stderr: string) =>
  stderr.split('\n').filter((l) => l && !/^(subprocess exited with status \d+|Error: exit status \d+)$/.test(l));

const buildah = (args: string[]) => run('buildah', [...GLOBAL, ...args]);

/** A file the image's user can read, as a Secret volume with fsGroup 65532 gives it (0400 files, group-readable). */
function readableByImageUser(file: string): void {
  chmodSync(file, 0o600);
  if (process.getuid?.() === 0) chownSync(file, UID, UID);
  else chmodSync(file, 0o644); // a rootless buildah maps our uid to root in the container, not to 65532
}

/** A working container from the image; removed after the tests. */
let container = '';
/** Runs COMMAND in the container as the image says (its user, env and working directory), host network. */
function inImage(command: string[], o: { volumes?: string[]; env?: string[] } = {}): Promise<Run> {
  const extra = [...(o.volumes ?? []).flatMap((v) => ['-v', v]), ...(o.env ?? []).flatMap((e) => ['--env', e])];
  return buildah(['run', '--network', 'host', ...extra, container, '--', ...command]);
}

/** FN over the working container's root file system, mounted on the host (buildah mount), then unmounted. */
async function inRootfs<T>(fn: (root: string) => T): Promise<T> {
  const mount = await buildah(['mount', container]);
  assert.equal(mount.code, 0, mount.stderr);
  try {
    return fn(mount.stdout.trim());
  } finally {
    await buildah(['umount', container]);
  }
}

/** The image's config as an OCI runtime reads it. */
async function imageConfig(): Promise<{
  User?: string;
  Entrypoint?: string[];
  Cmd?: string[];
  Env?: string[];
  WorkingDir?: string;
}> {
  const res = await buildah(['inspect', '--type', 'image', TAG]);
  assert.equal(res.code, 0, res.stderr);
  return JSON.parse(res.stdout).OCIv1.config;
}

describe('the container image', () => {
  after(async () => {
    if (container) await buildah(['rm', container]);
  });

  it('builds from the Containerfile with buildah (vfs storage, chroot isolation)', async (t) => {
    const which = await run('sh', ['-c', 'command -v buildah']);
    assert.equal(which.code, 0, 'buildah is not installed: apt-get install buildah (.ci/run does)');
    const started = Date.now();
    // --skip-build: the test run already built dist/ (npm test builds first).
    const res = await run('bash', ['scripts/image.sh', '--skip-build', '--tag', TAG]);
    assert.equal(res.code, 0, `scripts/image.sh failed:\n${res.stdout}\n${res.stderr}`);
    assert.match(res.stdout, new RegExp(`built ${TAG} with buildah in \\d+ s: \\d`));
    t.diagnostic(`build ${((Date.now() - started) / 1000).toFixed(1)} s: ${res.stdout.trim().split('\n').join(' | ')}`);
    const from = await buildah(['from', '--name', `fleet-e2e-${process.pid}`, TAG]);
    assert.equal(from.code, 0, from.stderr);
    container = from.stdout.trim();

    const config = await imageConfig();
    assert.equal(config.User, `${UID}:${UID}`);
    assert.deepEqual(config.Entrypoint, ['/usr/local/bin/fleet']);
    assert.ok(config.Env?.includes('HOME=/home/fleet'), String(config.Env));
  });

  it("runs fleet --version through the entry point, as a non-root user, on the executable's Node", async () => {
    const { Entrypoint } = await imageConfig();
    const res = await inImage([...Entrypoint!, '--version']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout.trim(), `fleet/${VERSION} linux-x64 node-v${NODE_VERSION}`);
    assert.equal(res.stderr, '');
    // The image has no program that prints its user (no shell, no Node): the executable's first command unpacks its
    // bundle into /tmp/fleet-exe-<uid>, owned by the user it ran as. A command that gets past `--version` does that.
    const help = await inImage(['fleet', '--help']);
    assert.equal(help.code, 0, help.stderr);
    const unpacked = await inRootfs((root) =>
      readdirSync(join(root, 'tmp'))
        .filter((e) => e.startsWith('fleet-exe-'))
        .map((e) => [e, statSync(join(root, 'tmp', e)).uid]),
    );
    assert.deepEqual(unpacked, [[`fleet-exe-${UID}`, UID]]);
  });

  it("holds fleet's executable, its libraries and CA certificates, and no Node, node_modules or shell", async () => {
    const facts = await inRootfs((root) => {
      const all: string[] = [];
      const walk = (d: string) => {
        for (const e of readdirSync(d, { withFileTypes: true })) {
          const rel = join(d, e.name).slice(root.length);
          if (rel.startsWith('/tmp/')) continue;
          all.push(rel);
          if (e.isDirectory()) walk(join(d, e.name));
        }
      };
      walk(root);
      const pem = readFileSync(join(root, 'etc/ssl/certs/ca-certificates.crt'), 'utf8');
      return {
        certificates: pem.split('BEGIN CERTIFICATE').length - 1,
        node: all.filter((f) => /(^|\/)(node|nodejs)$/.test(f) || f.includes('node_modules')),
        shell: all.some((f) => f === '/bin/sh' || f === '/usr/bin/sh'),
        tmp: (statSync(join(root, 'tmp')).mode & 0o7777).toString(8),
        homeOwner: statSync(join(root, 'home/fleet')).uid,
        sbom: JSON.parse(readFileSync(join(root, 'usr/local/share/doc/fleet/fleet.cdx.json'), 'utf8')).components[0]
          .version,
      };
    });
    assert.ok(facts.certificates > 100, `only ${facts.certificates} CA certificates`);
    assert.deepEqual(
      { ...facts, certificates: 0 },
      { certificates: 0, node: [], shell: false, tmp: '1777', homeOwner: UID, sbom: NODE_VERSION },
    );
    // NODE_EXTRA_CA_CERTS is read by the executable's Node when fleet first makes a TLS connection; it warns on stderr
    // if it cannot: a TLS command (the whoami tests below) with an empty stderr shows it could.
  });

  it('runs fleet auth whoami against the sandbox with the kubeconfig mounted read-only: --kubeconfig, then KUBECONFIG', async () => {
    const bob = tokenUser(cp.hub, 'bob');
    // As a Secret volume with fsGroup would give it: readable by the image's user only.
    const file = join(scratchDir(), 'mounted.kubeconfig');
    copyFileSync(bob.kubeconfigPath, file);
    readableByImageUser(file);
    const volumes = [`${file}:/etc/fleet/kubeconfig:ro`];

    const byFlag = await inImage(['fleet', 'auth', 'whoami', '--kubeconfig', '/etc/fleet/kubeconfig', '-o', 'json'], {
      volumes,
    });
    const byEnv = await inImage(['fleet', 'auth', 'whoami', '-o', 'json'], {
      volumes,
      env: ['KUBECONFIG=/etc/fleet/kubeconfig'],
    });
    for (const res of [byFlag, byEnv]) {
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stderr, '', 'nothing on stderr (a CA bundle Node could not load would be warned about there)');
      const out = JSON.parse(res.stdout);
      assert.equal(out.kind, 'WhoAmIList');
      assert.equal(out.items.length, 1, res.stdout);
      assert.equal(out.items[0].ok, true, res.stdout);
      assert.equal(out.items[0].user.username, 'bob', res.stdout);
      assert.ok(out.items[0].user.groups.includes('devs'), res.stdout);
      assert.ok(!res.stdout.includes(bob.token) && !res.stderr.includes(bob.token), 'the token appears in the output');
    }

    // The image's HOME holds no kubeconfig: without one, fleet says so (exit 2) instead of guessing a server.
    const none = await inImage(['fleet', 'auth', 'whoami']);
    assert.equal(none.code, 2, `${none.stdout}\n${none.stderr}`);
    const lines = fleetLines(none.stderr);
    assert.equal(lines.length, 1, none.stderr);
    assert.match(lines[0], /^error: .*\/home\/fleet\/\.kube\/config/);
  });

  it("runs the CronJob of docs/rotation.md: creds rotate with the Pod's ServiceAccount token at its real path and the least hub RBAC", async () => {
    const hub = cp.hub;
    const member = cp.members[0];
    const run = uniqueName('image-rot');
    const hubNs = `${run}-hub`;
    const memberNs = `${run}-sys`;
    // The CronJob's Secret volume at /etc/fleet: fleet.yaml (a file provider over the member kubeconfig, no hub:, as
    // docs/rotation.md says) and the member's kubeconfig. The credential is generated on the "laptop" from another path:
    // the rotation finds the cluster by the server, CA and cluster ID it recorded, not by the path.
    const dir = join(scratchDir(), run);
    mkdirSync(dir);
    const etcFleet = join(dir, 'etc-fleet');
    mkdirSync(etcFleet);
    const memberKubeconfig = join(dir, 'member.kubeconfig');
    copyFileSync(member.kubeconfig, memberKubeconfig);
    copyFileSync(member.kubeconfig, join(etcFleet, 'member.kubeconfig'));
    writeFileSync(
      join(etcFleet, 'fleet.yaml'),
      'kind: FleetConfig\nproviders:\n  - {name: members, type: file, kubeconfig: [/etc/fleet/member.kubeconfig]}\n',
    );
    for (const f of ['member.kubeconfig', 'fleet.yaml']) readableByImageUser(join(etcFleet, f));
    await applyYaml(hub, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: hubNs } }));
    try {
      const gen = await runFleet([
        'creds',
        'generate',
        '--kubeconfig',
        memberKubeconfig,
        '--cluster',
        member.context,
        '--hub-kubeconfig',
        hub.kubeconfig,
        '--service-account',
        `${memberNs}/app`,
        '--role',
        'pod-lister',
        '--create-namespace',
        '--duration',
        '2h',
        '--secret',
        `${hubNs}/member-1`,
        '--format',
        'multicluster-runtime',
        '-o',
        'json',
      ]);
      assert.equal(gen.code, 0, gen.stderr);
      // The CronJob's ServiceAccount with the Role docs/rotation.md gives it, and its token and CA as a Pod has them.
      const token = await cronJobRotator(hub, hubNs, 'fleet-rotator');
      const sa = join(dir, 'serviceaccount');
      mkdirSync(sa);
      writeFileSync(join(sa, 'token'), token, { mode: 0o644 }); // a projected token volume's default mode
      copyFileSync(hub.caFile, join(sa, 'ca.crt'));
      const url = new URL(hub.url);

      // docs/rotation.md's args, naming the Secret instead of --all (which needs list on every Secret of the hub).
      const res = await inImage(
        ['fleet', 'creds', 'rotate', `${hubNs}/member-1`, '-o', 'json', '--fleet-config', '/etc/fleet/fleet.yaml'],
        {
          volumes: [`${sa}:/var/run/secrets/kubernetes.io/serviceaccount:ro`, `${etcFleet}:/etc/fleet:ro`],
          env: [`KUBERNETES_SERVICE_HOST=${url.hostname}`, `KUBERNETES_SERVICE_PORT=${url.port}`],
        },
      );
      assert.equal(res.code, 0, `${res.stdout}\n${res.stderr}`);
      const out = JSON.parse(res.stdout);
      assert.equal(out.hub, 'in-cluster');
      assert.equal(out.items.length, 1, res.stdout);
      assert.equal(out.items[0].status, 'rotated', res.stdout);
      assert.equal(out.items[0].target.by, 'server+CA', res.stdout);
      assert.ok(
        !res.stdout.includes(token) && !res.stderr.includes(token),
        'the ServiceAccount token appears in the output',
      );
    } finally {
      await kubectlResult(hub, ['delete', 'namespace', hubNs, '--wait=false']);
      await kubectlResult(member, ['delete', 'namespace', memberNs, '--wait=false']);
    }
  });

  it('with --shell: a CI job script runs in it as GitLab runs one (sh -c), still as the non-root user', async () => {
    const tag = `${TAG}-shell`;
    const res = await run('bash', [
      'scripts/image.sh',
      '--skip-build',
      '--shell',
      '--tag',
      tag,
      '--context',
      join(scratchDir(), 'image-shell'),
    ]);
    assert.equal(res.code, 0, `scripts/image.sh --shell failed:\n${res.stdout}\n${res.stderr}`);
    const from = await buildah(['from', '--name', `fleet-e2e-shell-${process.pid}`, tag]);
    assert.equal(from.code, 0, from.stderr);
    try {
      const job = await buildah([
        'run',
        '--network',
        'host',
        from.stdout.trim(),
        '--',
        'sh',
        '-c',
        'set -e; mkdir -p "$HOME/job"; cd "$HOME/job"; fleet --version; id -u',
      ]);
      assert.equal(job.code, 0, job.stderr);
      assert.deepEqual(job.stdout.trim().split('\n'), [
        `fleet/${VERSION} linux-x64 node-v${NODE_VERSION}`,
        String(UID),
      ]);
    } finally {
      await buildah(['rm', from.stdout.trim()]);
      await buildah(['rmi', tag]);
    }
  });
});
