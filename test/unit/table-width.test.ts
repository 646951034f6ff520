// Tables fit the terminal (issue 49, item 3): the width policy (src/cli/width.ts) and renderTable at 40/80/100/200
// columns, with wide characters and colour measured by what a terminal shows, and the built CLI at COLUMNS=80 and 100.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Chalk } from 'chalk';

import { renderTable, type Column } from '../../src/cli/table.js';
import { elideMiddle, fitWidths, helpWidth, outputWidth, visibleWidth } from '../../src/cli/width.js';
import { runFleet } from '../support/cli.js';

const ANSI = /\x1b\[[0-9;]*m/g;
const widest = (text: string) => Math.max(...text.split('\n').map((l) => visibleWidth(l.replace(ANSI, ''))));

interface Row {
  cluster: string;
  server: string;
  status: string;
  reason: string;
}
const columns: Column<Row>[] = [
  { header: 'cluster', get: (r) => r.cluster, cluster: true },
  { header: 'server', get: (r) => r.server, shrink: 'first' },
  { header: 'status', get: (r) => r.status, shrink: 'never', color: (r, k) => k.red },
  { header: 'reason', get: (r) => r.reason, shrink: 'first' },
];
const rows: Row[] = [
  {
    cluster: 'team-payments-production-eu-west-1-cluster-0001',
    server: 'https://api.prod-eu-west-1.platform.internal.example.com:6443',
    status: 'NotReady',
    reason: 'client-key /home/someone/.kube/keys/payments-production.key: file not found',
  },
  {
    cluster: 'team-payments-production-eu-west-1-cluster-0002',
    server: 'https://api.prod-eu-west-1.platform.internal.example.com:6444',
    status: 'Ready',
    reason: '',
  },
  {
    cluster: '東京-クラスタ-本番-環境-第一-番号-0003',
    server: 'https://東京.example.jp:6443',
    status: 'Ready',
    reason: 'é́ ok',
  },
];

describe('the width policy', () => {
  it('COLUMNS first, then the terminal, then none off a terminal; help falls back to 80', () => {
    assert.equal(outputWidth({ COLUMNS: '100' }, { isTTY: true, columns: 60 }), 100);
    assert.equal(outputWidth({}, { isTTY: true, columns: 60 }), 60);
    assert.equal(outputWidth({}, { isTTY: false }), undefined);
    assert.equal(outputWidth({ COLUMNS: 'abc' }, { isTTY: false }), undefined);
    assert.equal(outputWidth({ COLUMNS: '0' }, { isTTY: false }), undefined);
    assert.equal(helpWidth({}, { isTTY: false }), 80);
    assert.equal(helpWidth({ COLUMNS: '20' }, { isTTY: false }), 40);
    assert.equal(helpWidth({ OCLIF_COLUMNS: '120', COLUMNS: '100' }, { isTTY: false }), 120);
  });

  it('elides in the middle with one …, keeping both ends and whole characters', () => {
    assert.equal(elideMiddle('prod-eu-west-1-cluster-7', 11), 'prod-…ter-7');
    assert.equal(elideMiddle('short', 10), 'short');
    // Wide characters are two columns: 東 (2) … (1) 環境 (4) = 7, never half a character.
    assert.equal(elideMiddle('東京クラスタ本番環境', 7), '東…環境');
    const combining = elideMiddle('e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301', 5);
    assert.equal(combining, 'e\u0301e\u0301…e\u0301e\u0301');
  });

  it('shrinks `first` columns before names, and never a `never` column', () => {
    const widths = fitWidths(
      [50, 60, 8, 80],
      [
        { header: 7, shrink: 'last' },
        { header: 6, shrink: 'first' },
        { header: 6, shrink: 'never' },
        { header: 6, shrink: 'first' },
      ],
      120,
      3,
    );
    assert.equal(widths.reduce((a, b) => a + b) + 9, 120);
    assert.equal(widths[0], 50);
    assert.equal(widths[2], 8);
  });
});

describe('renderTable at several widths', () => {
  for (const colour of [0, 3] as const)
    for (const width of [40, 80, 100, 200]) {
      it(`fits ${width} columns${colour ? ' in colour' : ''}, with the status whole`, () => {
        const chalk = new Chalk({ level: colour });
        const text = renderTable(rows, columns, { wide: false, chalk, maxWidth: width });
        const natural = widest(renderTable(rows, columns, { wide: false, chalk }));
        // 40 cannot hold the floors (each shrinking column keeps 10 columns): as narrow as they allow.
        assert.ok(widest(text) <= Math.max(width, 4 * 10 + 3 * 3 - 2), `${widest(text)} > ${width}:\n${text}`);
        if (natural <= width) assert.equal(text, renderTable(rows, columns, { wide: false, chalk }));
        assert.match(text.replace(ANSI, ''), /NotReady/);
        if (colour) assert.match(text, ANSI);
      });
    }

  it('leaves every value whole with no width (off a terminal, -o wide)', () => {
    const text = renderTable(rows, columns, { wide: false, chalk: new Chalk({ level: 0 }) });
    for (const r of rows) assert.ok(text.includes(r.reason) && text.includes(r.cluster));
  });
});

const LONG = fileURLToPath(new URL('../fixtures/width/long-names.kubeconfig', import.meta.url));

describe('the built CLI (npm run build first)', () => {
  for (const cols of ['80', '100']) {
    it(`clusters list fits COLUMNS=${cols}; -o wide and json keep the full values`, async () => {
      const table = await runFleet(['clusters', 'list', '--kubeconfig', LONG], { env: { COLUMNS: cols } });
      assert.ok(widest(table.stdout) <= Number(cols), table.stdout);
      assert.match(table.stdout, /…/);
      const wide = await runFleet(['clusters', 'list', '--kubeconfig', LONG, '-o', 'wide'], { env: { COLUMNS: cols } });
      assert.match(wide.stdout, /team-payments-production-eu-west-1-cluster-number-0001/);
      assert.match(wide.stdout, /platform\.internal\.example\.com:6443\/some\/long\/path\/segment/);
    });
  }

  it('off a terminal with no COLUMNS, the table is whole (grep finds what it looks for)', async () => {
    const piped = await runFleet(['clusters', 'list', '--kubeconfig', LONG]);
    assert.doesNotMatch(piped.stdout, /…/);
    assert.match(piped.stdout, /team-payments-production-eu-west-1-cluster-number-0001/);
  });
});

describe('on a real terminal (tmux, 80 columns, no COLUMNS)', () => {
  it('clusters list fits the pane; piped from the same terminal it is whole', async () => {
    const { execFileSync } = await import('node:child_process');
    const { mkdtempSync, readFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { FLEET_BIN } = await import('../support/cli.js');
    const dir = mkdtempSync(join(tmpdir(), 'fleet-width-tmux-'));
    const socket = `fleet-width-${process.pid}`;
    const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
    const fleet = `env -u COLUMNS KUBECONFIG= NO_COLOR=1 FLEET_NODE_VERSION_OK=1 ${process.execPath} ${FLEET_BIN} clusters list --kubeconfig ${LONG}`;
    const script = `${fleet} > /dev/tty; ${fleet} | cat > ${dir}/piped; echo done > ${dir}/done; sleep 30`;
    try {
      tmux('new-session', '-d', '-s', 'w', '-x', '80', '-y', '30', 'sh', '-c', script);
      const deadline = Date.now() + 30_000;
      for (;;) {
        try {
          readFileSync(join(dir, 'done'));
          break;
        } catch {
          if (Date.now() > deadline) throw new Error('fleet did not finish in tmux');
          await new Promise((r) => setTimeout(r, 200));
        }
      }
      const pane = tmux('capture-pane', '-p', '-t', 'w');
      const lines = pane.split('\n').filter((l) => l.trim() !== '');
      assert.ok(lines.length === 3, pane); // the header and two rows: no row wrapped onto a second line
      assert.match(pane, /…/);
      assert.ok(widest(pane) <= 80, pane);
      const piped = readFileSync(join(dir, 'piped'), 'utf8');
      assert.match(piped, /team-payments-production-eu-west-1-cluster-number-0001/);
    } finally {
      try {
        tmux('kill-server');
      } catch {
        // already gone
      }
    }
  });
});
