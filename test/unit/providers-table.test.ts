import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { BaseCommand } from '../../src/cli/base-command.js';
import {
  ALLOW_FIELDS,
  PROVIDERS,
  PROVIDER_TYPES,
  isProviderType,
  normaliseType,
  parseFleetConfig,
} from '../../src/config/fleet-config.js';
import { Connector } from '../../src/kube/connector.js';
import { ExecCredentialRunner } from '../../src/kube/exec-credential.js';
import { CONSTRUCTORS, createProvider } from '../../src/providers/registry.js';

// Adding a provider type is one line of PROVIDERS (and its constructor): everything that lists or reads provider types
// must follow that table, so a new line shows up in the type list, the --provider help, the parser and createProvider.

const f = '/etc/fleet/fleet.yaml';
const env = { HOME: '/home/op' };
const parse = (text: string) => parseFleetConfig(text, f, env, '/work');
const types = PROVIDERS.map((p) => p.type);

describe('provider table: one line per provider type', () => {
  it('the type list, the --provider help and the parser’s "must be one of" all come from the table', () => {
    assert.deepEqual([...PROVIDER_TYPES], types);
    assert.equal(new Set(types).size, types.length, 'each type once');
    const help = BaseCommand.baseFlags.provider.description;
    assert.equal(
      help,
      `Only this provider: a name from the fleet configuration, or a provider type (${types.join(', ')}).`,
    );
    assert.throws(() => parse('providers:\n  - {type: nope}\n'), {
      message: `${f}: providers[0].type: must be one of ${types.join(', ')}; got "nope"`,
    });
  });

  it('every line parses its documented example, and its fields are the ones the parser accepts', () => {
    for (const spec of PROVIDERS) {
      const entry = parse(`providers:\n  - ${spec.example}\n`).providers[0];
      assert.equal(entry.type, spec.type, spec.example);
      assert.equal(entry.origin, `${f}: providers[0]`);
      // A field no line declares is rejected with the line's own list, in its order.
      assert.throws(
        () => parse(`providers:\n  - {type: ${spec.type}, zzzzzzzzzz: 1}\n`),
        {
          message: `${f}: providers[0].zzzzzzzzzz: unknown field (known: ${['name', 'type', ...spec.fields, ...(spec.userSourced ? [] : ALLOW_FIELDS)].join(', ')})`,
        },
        spec.type,
      );
      for (const alias of spec.aliases ?? []) {
        assert.ok(isProviderType(alias), alias);
        assert.equal(normaliseType(alias), spec.type);
      }
    }
  });

  it('createProvider builds every line’s example through the constructor of the same type (nothing is contacted)', async () => {
    assert.deepEqual(Object.keys(CONSTRUCTORS).sort(), [...types].sort());
    const options = { connector: new Connector({ timeoutMs: 1000, exec: new ExecCredentialRunner() }), env };
    for (const spec of PROVIDERS) {
      const entry = parse(`providers:\n  - ${spec.example}\n`).providers[0];
      const provider = await createProvider(entry, undefined, options);
      assert.equal(provider.name, entry.name, spec.type);
    }
  });
});
