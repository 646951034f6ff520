// Issue 46: an allowlist entry names a program; a program that runs whatever its arguments say allows everything. The
// rule that tells one (src/base/interpreter.ts) judges the name as written and the file it resolves to.
import assert from 'node:assert/strict';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { interpreterKind, wrapperIn } from '../../src/base/interpreter.js';

describe('interpreterKind', () => {
  it('shells, launchers and language runtimes by name, bare or as a path, versioned, with a Windows suffix, any case', () => {
    const cases: Array<[string, string]> = [
      ['sh', 'a shell'],
      ['/bin/bash', 'a shell'],
      ['/usr/bin/zsh', 'a shell'],
      ['busybox', 'a shell'],
      ['C:\\Windows\\System32\\cmd.exe', 'a shell'],
      ['/usr/bin/env', 'a launcher of other programs'],
      ['sudo', 'a launcher of other programs'],
      ['xargs', 'a launcher of other programs'],
      ['python3.12', 'a language runtime'],
      ['/usr/local/bin/Python3', 'a language runtime'],
      ['node', 'a language runtime'],
      ['pwsh.exe', 'a language runtime'],
      ['perl5.36', 'a language runtime'],
      ['ruby3.1', 'a language runtime'],
    ];
    for (const [written, kind] of cases) assert.equal(interpreterKind(written), kind, written);
  });

  it('credential programs and wrapper scripts under their own names are not interpreters', () => {
    for (const written of [
      'kubelogin',
      'gke-gcloud-auth-plugin',
      'aws-iam-authenticator',
      '/opt/sso/token.sh',
      'aws',
      'az',
      'shx',
      'bashful',
      'python-token',
      'node-token',
    ])
      assert.equal(interpreterKind(written), undefined, written);
  });

  it('a link of another name is judged by the file it leads to; a missing file by its names', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-interp-'));
    const tok = join(dir, 'tok');
    symlinkSync('/bin/sh', tok);
    assert.equal(interpreterKind('tok', tok), 'a shell', 'resolved through PATH to a link to a shell');
    assert.equal(interpreterKind(tok, tok), 'a shell');
    const chained = join(dir, 'chained');
    symlinkSync(tok, chained);
    assert.equal(interpreterKind(chained, chained), 'a shell', 'links of links');
    const script = join(dir, 'token.sh');
    writeFileSync(script, '#!/bin/sh\necho {}\n', { mode: 0o755 });
    assert.equal(interpreterKind(script, script), undefined, 'a script is what the operator allows');
    assert.equal(interpreterKind('tok', join(dir, 'missing')), undefined);
    // The resolved name counts too: a bare name PATH resolves to a runtime.
    assert.equal(interpreterKind('mytok', '/usr/bin/python3'), 'a language runtime');
  });
});

describe('wrapperIn', () => {
  it('the first absolute path an argument starts with, shell punctuation trimmed; none otherwise', () => {
    assert.equal(wrapperIn(['/opt/x/token.sh', '--eu']), '/opt/x/token.sh');
    assert.equal(wrapperIn(['-c', '/opt/x/token --flag; echo']), '/opt/x/token');
    assert.equal(wrapperIn(['-c', "/opt/x/token'"]), '/opt/x/token');
    assert.equal(wrapperIn(['-c', 'touch /tmp/x']), undefined);
    assert.equal(wrapperIn(['//server/share/x']), undefined);
    assert.equal(wrapperIn([]), undefined);
  });
});
