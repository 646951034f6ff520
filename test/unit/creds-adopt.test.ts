// The small policies of creds adopt and rotation's Argo CD write that need no cluster: what creds list calls adoptable,
// and which parts of Argo CD's `config` fleet replaces (the credential) and keeps (everything else).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { adoptableReasons } from '../../src/creds/list.js';
import { keepArgocdConfig } from '../../src/creds/codecs/argocd.js';

const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
const dec = (s: string) => JSON.parse(Buffer.from(s, 'base64').toString('utf8')) as Record<string, unknown>;

describe('adoptableReasons', () => {
  it('names why a credential fleet did not make is worth adopting', () => {
    assert.deepEqual(adoptableReasons({ method: 'legacy-token', managedByFleet: false }), ['legacy', 'no expiry']);
    assert.deepEqual(adoptableReasons({ method: 'static-token', managedByFleet: false }), ['static', 'no expiry']);
    assert.deepEqual(
      adoptableReasons({ method: 'client-cert', expires: '2027-01-01T00:00:00Z', managedByFleet: false }),
      ['client certificate (cannot be revoked)'],
    );
    assert.deepEqual(
      adoptableReasons({ method: 'bound-token', expires: '2027-01-01T00:00:00Z', managedByFleet: false }),
      ['not rotated by fleet'],
    );
  });
  it('is empty for what fleet made and for plugins, which hold nothing', () => {
    assert.deepEqual(adoptableReasons({ method: 'legacy-token', managedByFleet: true }), []);
    assert.deepEqual(adoptableReasons({ method: 'exec', managedByFleet: false }), []);
  });
});

describe('keepArgocdConfig', () => {
  it('replaces the credential fields and keeps the rest of the config', () => {
    const old = enc({
      bearerToken: 'old',
      tlsClientConfig: { insecure: false, caData: 'CA', serverName: 'api.example', certData: 'C', keyData: 'K' },
      disableCompression: true,
      proxyUrl: 'http://proxy:3128',
      execProviderConfig: { command: 'x' },
    });
    const merged = dec(
      keepArgocdConfig(old, enc({ bearerToken: 'new', tlsClientConfig: { insecure: false, caData: 'CA2' } })),
    );
    assert.deepEqual(merged, {
      bearerToken: 'new',
      tlsClientConfig: { insecure: false, caData: 'CA2', serverName: 'api.example' },
      disableCompression: true,
      proxyUrl: 'http://proxy:3128',
    });
  });
  it('takes the new config whole when the old one is no JSON object', () => {
    const fresh = enc({ bearerToken: 'new' });
    assert.equal(keepArgocdConfig(Buffer.from('not json').toString('base64'), fresh), fresh);
    assert.equal(keepArgocdConfig(enc([1, 2]), fresh), fresh);
    assert.equal(keepArgocdConfig(undefined, fresh), fresh);
  });
});
