// What `npm pack` ships is all fleet needs: the tarball installs into an empty prefix with no registry reachable and
// an empty npm cache (any fetch fails), and the installed `fleet` runs --version, lists the example fleet and asks the
// sandbox's hub who a token user is. The installed size is reported (docs/decisions.md, "One bundle").
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';

import { loadControlPlane, tokenUser } from '../support/fixture.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const cp = loadControlPlane();

describe('the packed tarball, installed offline', () => {
  const work = mkdtempSync(join(tmpdir(), 'fleet-pack-'));
  after(() => rmSync(work, { recursive: true, force: true }));
  const prefix = join(work, 'prefix');
  // npm and the installed fleet run on the node running this test (24 under `npm test`), put first on PATH.
  const env = {
    ...process.env,
    PATH: [dirname(process.execPath), process.env.PATH].join(delimiter),
    npm_config_cache: join(work, 'cache'),
    npm_config_registry: 'http://127.0.0.1:9',
    npm_config_update_notifier: 'false',
  };

  it('npm pack, then npm install --offline from the tarball alone, and the installed fleet runs', async () => {
    // The suite built dist/ already; --ignore-scripts packs that build instead of running prepack's build again.
    execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', work], {
      cwd: root,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
    assert.ok(tarball, `npm pack wrote no tarball into ${work}`);
    const install = spawnSync(
      'npm',
      ['install', '--global', '--offline', '--no-audit', '--no-fund', '--prefix', prefix, join(work, tarball)],
      { cwd: work, env, encoding: 'utf8' },
    );
    assert.equal(install.status, 0, `offline install failed:\n${install.stderr}`);
    const fleet = join(prefix, 'bin/fleet');
    assert.ok(existsSync(fleet), `no ${fleet} after the install`);
    const installed = join(prefix, 'lib/node_modules/fleet-cli');
    assert.ok(!existsSync(join(installed, 'node_modules')), 'the package installed dependencies: it should need none');
    assert.ok(
      existsSync(join(installed, 'docs/verify.md')),
      'the help names docs/verify.md: the package must contain it',
    );
    assert.ok(existsSync(join(installed, 'LICENSE')), 'package.json names Apache-2.0: the package carries its text');

    const run = (args: string[]) =>
      spawnSync(fleet, args, {
        cwd: work,
        encoding: 'utf8',
        env: { ...env, KUBECONFIG: '', HOME: join(work, 'home'), CI: 'true', NO_COLOR: '1' },
      });
    const version = run(['--version']);
    assert.equal(version.status, 0, version.stderr);
    assert.match(
      version.stdout,
      new RegExp(`^fleet/0\\.1\\.0 linux-x64 node-${process.version.replace(/\./g, '\\.')}\\n$`),
    );

    const list = run(['clusters', 'list', '--kubeconfig', join(root, 'examples/fleet'), '-o', 'json']);
    assert.equal(list.status, 0, list.stderr);
    const items = (JSON.parse(list.stdout) as { items: Array<{ name: string }> }).items;
    assert.ok(
      items.some((c) => c.name.endsWith('dev.kubeconfig.yaml+admin')),
      list.stdout,
    );

    const alice = tokenUser(cp.hub, 'alice');
    const whoami = run(['auth', 'whoami', '--kubeconfig', alice.kubeconfigPath, '-o', 'json']);
    assert.equal(whoami.status, 0, whoami.stderr);
    const [me] = (JSON.parse(whoami.stdout) as { items: Array<{ ok: boolean; user: { username: string } }> }).items;
    assert.equal(me.ok, true, whoami.stdout);
    assert.equal(me.user.username, alice.user.name);
    for (const out of [version, list, whoami])
      assert.ok(
        !out.stdout.includes(alice.token) && !out.stderr.includes(alice.token),
        'the token appears in the output',
      );

    const kb = Number(execFileSync('du', ['-sk', prefix], { encoding: 'utf8' }).split('\t')[0]);
    console.log(`# installed size (du -sk of the prefix): ${(kb / 1024).toFixed(1)} MiB`);
  });
});
