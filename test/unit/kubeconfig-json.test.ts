// A kubeconfig written as JSON is read by JSON.parse (src/kubeconfig/parse.ts) where that cannot differ from the YAML
// parser: these compare the two on JSON texts, including the cases where JSON.parse alone would read them differently.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import yaml from 'js-yaml';

import { parseKubeconfig } from '../../src/kubeconfig/parse.js';

/** What the YAML parser alone makes of a text: the document, or the error parseKubeconfig reports. */
function viaYaml(text: string): unknown {
  try {
    // A trailing comment: not JSON, so the YAML parser reads it, with the same line numbers in errors.
    return { doc: parseKubeconfig(`${text}\n# YAML`, 'k').doc };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

function viaParse(text: string): unknown {
  try {
    return { doc: parseKubeconfig(text, 'k').doc };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

const base = {
  apiVersion: 'v1',
  kind: 'Config',
  'current-context': 'a',
  clusters: [
    {
      name: 'c',
      cluster: { server: 'https://h:6443', 'certificate-authority-data': 'LS0t', 'insecure-skip-tls-verify': false },
    },
  ],
  users: [
    {
      name: 'u',
      user: {
        token: 'tok-\u00e9\\"/x',
        exec: { args: ['--a', '1e3'], env: null, apiVersion: 'client.authentication.k8s.io/v1' },
      },
    },
  ],
  contexts: [{ name: 'a', context: { cluster: 'c', user: 'u', namespace: 'ns' } }],
  // A number past 2^53 on purpose: the JSON fast path must read it as the YAML parser does (the same rounded double).
  // eslint-disable-next-line no-loss-of-precision
  extensions: [{ name: 'n', extension: { int: 12345678901234567890, float: 1.5e-3, neg: -0, list: [], obj: {} } }],
};

describe('kubeconfig as JSON', () => {
  it('reads a JSON kubeconfig as the YAML parser does, compact or indented', () => {
    for (const text of [
      JSON.stringify(base),
      JSON.stringify(base, null, 2),
      `  \n${JSON.stringify(base, null, 1)}\n\n`,
    ]) {
      assert.deepEqual(viaParse(text), viaYaml(text));
      assert.deepEqual((viaParse(text) as { doc: unknown }).doc, JSON.parse(text));
    }
  });

  it('leaves to the YAML parser what JSON.parse would read differently', () => {
    const cases = [
      // A key twice in one mapping: YAML refuses the file, JSON.parse would keep the last value.
      '{"apiVersion": "v1", "contexts": [{"name": "a", "name": "b"}]}',
      '{"kind": "Config", "kind": "Config"}',
      // A merge key and __proto__ mean something else (or something dangerous) to YAML.
      '{"clusters": [{"name": "c", "cluster": {"<<": {"server": "https://x"}}}]}',
      '{"__proto__": {"polluted": true}}',
      // Tabs and Unicode line breaks.
      '{\t"kind": "Config"}',
      '{"kind": "Con\u2028fig"}',
      // Strings that hold quotes, colons and escaped quotes followed by colons.
      '{"a": "x\\": y", "b": "\\"c\\":", "d": {"e\\"": ":"}}',
      // Not JSON, or not a mapping.
      '{"kind": Config}',
      '{"kind": "Config",}',
    ];
    for (const text of cases) assert.deepEqual(viaParse(text), viaYaml(text), text);
    assert.match((viaParse(cases[0]) as { error: string }).error, /not valid YAML/);
  });

  it('counts keys exactly where strings hold what looks like a key', () => {
    const text = JSON.stringify({ a: 'b": "c', 'k"\\:': { x: '":' }, list: ['"y":', { z: 1 }] });
    assert.deepEqual(viaParse(text), { doc: yaml.load(text) });
  });
});
