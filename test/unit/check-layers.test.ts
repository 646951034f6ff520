// The rules the build checks (scripts/check-layers.mjs, run by `npm test`): each one is shown to fail on a violation
// planted in a temporary copy of src/, with a message naming the file and the line, and to pass on src/ as it is.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';

const root = fileURLToPath(new URL('../..', import.meta.url));
const script = join(root, 'scripts/check-layers.mjs');
const scratch: string[] = [];
after(() => {
  for (const d of scratch) rmSync(d, { recursive: true, force: true });
});

/** A copy of src/ in a fresh directory; `plant` changes it; then the script runs over the copy. */
function checkCopy(plant: (src: string) => void): { status: number | null; stderr: string; stdout: string } {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-check-layers-'));
  scratch.push(dir);
  cpSync(join(root, 'src'), join(dir, 'src'), { recursive: true });
  plant(join(dir, 'src'));
  const res = spawnSync(process.execPath, [script, '--root', dir], { encoding: 'utf8' });
  return { status: res.status, stderr: res.stderr, stdout: res.stdout };
}

/** Appends lines to a file and returns the line number of the first one. */
function append(file: string, ...lines: string[]): number {
  const before = readFileSync(file, 'utf8');
  const first = before.split('\n').length + (before.endsWith('\n') ? 0 : 1);
  appendFileSync(file, (before.endsWith('\n') ? '' : '\n') + lines.join('\n') + '\n');
  return first;
}

function assertFails(res: { status: number | null; stderr: string }, ...lines: string[]): void {
  assert.equal(res.status, 1, res.stderr);
  for (const line of lines) assert.ok(res.stderr.includes(line), `expected ${JSON.stringify(line)} in:\n${res.stderr}`);
}

describe('check-layers', () => {
  it('passes on src/ as it is', () => {
    const res = checkCopy(() => {});
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stdout, /no import cycle/);
  });

  it('fails on an import from a floor above', () => {
    let line = 0;
    const res = checkCopy((src) => {
      line = append(join(src, 'base/duration.ts'), "import type {KubeClient} from '../kube/client.js'");
    });
    assertFails(
      res,
      `src/base/duration.ts:${line}: src/base (floor 0) imports ../kube/client.js from src/kube (floor 2), a floor above`,
    );
  });

  it('fails when creds/ imports workload-identity/ (a peer that builds on creds/: issue 41), not the other way', () => {
    let line = 0;
    const res = checkCopy((src) => {
      line = append(join(src, 'creds/list.ts'), "import type {PluginTarget} from '../workload-identity/plugin.js'");
    });
    assertFails(
      res,
      `src/creds/list.ts:${line}: src/creds imports ../workload-identity/plugin.js from src/workload-identity, which builds on src/creds; move what both need to a floor below`,
    );
  });

  it('fails on two files that import each other, naming the first file, the line and the ring', () => {
    const res = checkCopy((src) => {
      writeFileSync(join(src, 'base/planted-a.ts'), "import {b} from './planted-b.js'\nexport const a = () => b\n");
      writeFileSync(
        join(src, 'base/planted-b.ts'),
        "export const b = 1\nimport type {a} from './planted-a.js'\nexport type A = typeof a\n",
      );
    });
    assertFails(
      res,
      'src/base/planted-a.ts:1: import cycle: src/base/planted-a.ts -> src/base/planted-b.ts -> src/base/planted-a.ts',
    );
  });

  it('fails on a ring of three files, reported once', () => {
    const res = checkCopy((src) => {
      writeFileSync(join(src, 'base/ring-1.ts'), "import './ring-2.js'\n");
      writeFileSync(join(src, 'base/ring-2.ts'), "import './ring-3.js'\n");
      writeFileSync(join(src, 'base/ring-3.ts'), "// third\nimport './ring-1.js'\n");
    });
    assertFails(
      res,
      'src/base/ring-1.ts:1: import cycle: src/base/ring-1.ts -> src/base/ring-2.ts -> src/base/ring-3.ts -> src/base/ring-1.ts',
    );
    assert.equal(res.stderr.split('\n').filter((l) => l.includes('import cycle')).length, 1, res.stderr);
  });

  it('fails when front-proxy.ts imports whoami.ts again (the cycle issue 22 broke)', () => {
    const res = checkCopy((src) => {
      const file = join(src, 'access/front-proxy.ts');
      writeFileSync(file, readFileSync(file, 'utf8').replace("from './user-info.js'", "from './whoami.js'"));
    });
    assertFails(
      res,
      'src/access/front-proxy.ts:2: import cycle: src/access/front-proxy.ts -> src/access/whoami.ts -> src/access/front-proxy.ts',
    );
  });

  it('fails on a REST path written outside kube/ (literal, template, spliced namespace), not in a comment or in kube/', () => {
    let first = 0;
    const res = checkCopy((src) => {
      first = append(
        join(src, 'access/whoami.ts'),
        "export const p1 = '/api/v1/namespaces'",
        'export const p2 = (g: string) => `/apis/${g}/v1/things`',
        "export const p3 = (ns: string) => `${'x'}/namespaces/${ns}/secrets`",
        'export const p4 = [\'/api\', "/apis"]',
        '// a comment may say /api/v1/namespaces/${ns}',
        "export const fine = ['/apiserver', '/version', 'see /api/v1 docs']",
      );
      append(join(src, 'kube/paths.ts'), "export const allowed = '/api/v1/secrets'");
    });
    const why = 'builds a REST path by hand: name a Resource (src/kube/resources.ts)';
    assertFails(
      res,
      `src/access/whoami.ts:${first}: ${why}`,
      `src/access/whoami.ts:${first + 1}: ${why}`,
      `src/access/whoami.ts:${first + 2}: ${why}`,
      `src/access/whoami.ts:${first + 3}: ${why}`,
    );
    // p4 holds two; nothing else (the comment, /apiserver, a path inside a sentence, kube/) counts.
    assert.equal(res.stderr.split('\n').filter((l) => l.includes(why)).length, 5, res.stderr);
  });

  it('fails on approveInvocation imported outside the trust policy, and on a program started outside base/subprocess.ts', () => {
    let mint = 0;
    let dynamic = 0;
    let spawn = 0;
    let child = 0;
    const res = checkCopy((src) => {
      mint = append(
        join(src, 'kube/exec-credential.ts'),
        "import {approveInvocation} from '../base/invocation.js'",
        'export const planted = approveInvocation',
      );
      dynamic = append(
        join(src, 'export/credential.ts'),
        "export const plantedMint = () => import('../base/invocation.js')",
      );
      child = append(join(src, 'providers/kind.ts'), "import {spawn as plantedSpawn} from 'node:child_process'");
      spawn = append(
        join(src, 'kubeconfig/kuberc.ts'),
        '// spawn( in a comment is fine',
        "export const plantedRun = (f: (c: string) => void) => f('x') ?? execFile('mytok')",
        'declare function execFile(c: string): void',
      );
      // The minter may import it; the layer check passes it.
      append(
        join(src, 'kubeconfig/trust.ts'),
        "import {approveInvocation as again} from '../base/invocation.js'",
        'export const plantedAgain = again',
      );
    });
    assertFails(
      res,
      `src/kube/exec-credential.ts:${mint}: imports approveInvocation: only src/kubeconfig/trust.ts may approve what runs`,
      `src/export/credential.ts:${dynamic}: imports approveInvocation`,
      `src/providers/kind.ts:${child}: starts a program itself: run an approved Invocation through runProcess (src/base/subprocess.ts)`,
      `src/kubeconfig/kuberc.ts:${spawn + 1}: starts a program itself`,
    );
    assert.doesNotMatch(res.stderr, /kubeconfig\/trust\.ts:\d+: imports approveInvocation/);
    assert.doesNotMatch(res.stderr, new RegExp(`kuberc\\.ts:${spawn}:`));
  });
});
