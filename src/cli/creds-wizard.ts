import { escapeTerminal } from '../base/terminal.js';
import type { ClusterProvider } from '../providers/types.js';
import { FORMATS } from '../creds/codecs/index.js';
import { METHODS } from '../creds/methods.js';
import { PRESETS } from '../creds/presets.js';

/**
 * Asks for what `creds generate` was not given (only at a terminal, outside CI and machine output: the caller checks),
 * then prints the equivalent command line so the next run needs no questions.
 */
export interface WizardAnswers {
  cluster?: string;
  'service-account'?: string;
  user?: string;
  group?: string[];
  role?: string;
  namespace?: string[];
  method?: (typeof METHODS)[number];
  duration?: string;
  out?: string;
  secret?: string;
  format?: (typeof FORMATS)[number];
  'create-namespace'?: boolean;
}

const quote = (s: string) => (/^[\w./:@+=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

export async function credsWizard(
  provider: ClusterProvider,
  given: WizardAnswers & Record<string, unknown>,
): Promise<WizardAnswers> {
  const { confirm, input, select } = await import('@inquirer/prompts');
  const a: WizardAnswers = {};
  const nonEmpty = (v: string) => (v.trim() === '' ? 'required' : true);
  if (!given.cluster) {
    const refs = await provider.list();
    if (refs.length === 0) a.cluster = await input({ message: 'Cluster', validate: nonEmpty });
    // The menu shows a cluster's name (data: a context or a hub object's name) escaped; the answer is the name itself.
    else
      a.cluster = await select({
        message: 'Cluster',
        choices: refs.map((r) => ({
          name: `${escapeTerminal(r.name)}${r.ready ? '' : ' (not ready)'}`,
          value: r.name,
        })),
      });
  }
  a.method = await select({
    message: 'Method',
    default: given.method ?? 'token',
    choices: METHODS.map((m) => ({ name: m, value: m })),
  });
  if (a.method === 'client-cert') {
    if (!given.user) a.user = await input({ message: 'User name (certificate CN)', validate: nonEmpty });
    if (!given.group) {
      const g = await input({ message: 'Groups (comma-separated, may be empty)' });
      a.group = g
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
    }
  } else if (!given['service-account']) {
    a['service-account'] = await input({
      message: 'ServiceAccount (NAMESPACE/NAME)',
      validate: (v) => (/^[^/\s]+\/[^/\s]+$/.test(v.trim()) ? true : 'NAMESPACE/NAME'),
    });
  }
  if (!given.role && !given.rules && !given['cluster-role']) {
    a.role = await select({
      message: 'Access preset',
      choices: PRESETS.map((p) => ({ name: `${p.name}: ${p.description}`, value: p.name })),
    });
  }
  if (!given.namespace) {
    const ns = await input({ message: 'Namespaces (comma-separated; empty for cluster-wide)' });
    a.namespace = ns
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
  }
  if (!given['create-namespace'])
    a['create-namespace'] = await confirm({ message: 'Create namespaces that do not exist?', default: false });
  if (a.method !== 'legacy-token')
    a.duration = await input({
      message: 'Duration (at least 10m)',
      default: given.duration ?? '24h',
    });
  if (!given.out && !given.secret) {
    const where = await select({
      message: 'Destination',
      choices: [
        { name: 'kubeconfig file', value: 'file' },
        { name: 'Secret on the hub', value: 'secret' },
      ],
    });
    if (where === 'file') a.out = await input({ message: 'File', validate: nonEmpty });
    else {
      a.secret = await input({
        message: 'Secret (HUBNAMESPACE/NAME)',
        validate: (v) => (/^[^/\s]+\/[^/\s]+$/.test(v.trim()) ? true : 'NAMESPACE/NAME'),
      });
      if (!given.format)
        a.format = await select({ message: 'Format', choices: FORMATS.map((f) => ({ name: f, value: f })) });
    }
  }
  const all = { ...given, ...a } as Record<string, unknown>;
  const parts = ['fleet creds generate'];
  for (const key of [
    'kubeconfig',
    'context',
    'fleet-config',
    'provider',
    'cluster',
    'service-account',
    'user',
    'role',
    'rules',
    'cluster-role',
    'method',
    'duration',
    'out',
    'secret',
    'format',
    'consumer',
  ]) {
    const v = all[key];
    if (typeof v === 'string' && v !== '') parts.push(`--${key} ${quote(v)}`);
  }
  for (const g of (all.group as string[] | undefined) ?? []) parts.push(`--group ${quote(g)}`);
  for (const n of (all.namespace as string[] | undefined) ?? []) parts.push(`-n ${quote(n)}`);
  if (all['create-namespace']) parts.push('--create-namespace');
  // The blank lines are this message's layout; the command line holds the answers (data) and is escaped.
  process.stderr.write(`\nEquivalent command:\n  ${escapeTerminal(parts.join(' '))}\n\n`);
  return a;
}
