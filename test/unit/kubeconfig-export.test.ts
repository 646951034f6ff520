// fleet kubeconfig export and kubeconfig credential without a cluster: names, the pinned exec arguments, the cache's
// policy (ends, refusals, 0600), and the two commands over a user's kubeconfig file (the file holds no secret; the
// credential comes back through the file provider from any working directory and with any KUBECONFIG).
import assert from 'node:assert/strict'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {chmodSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, it} from 'node:test'
import yaml from 'js-yaml'

import {runFleet} from '../support/cli.js'
import {CREDENTIAL_COMMAND, credentialArgs} from '../../src/export/credential-args.js'
import {CredentialCache, EXPIRY_MARGIN_SECONDS, STATIC_CREDENTIAL_SECONDS, cacheEnd, credentialCacheDir} from '../../src/export/credential-cache.js'
import {execCredentialJson, readExecRequest} from '../../src/export/exec-info.js'
import {credentialIdentity, exportedFlags} from '../../src/export/credential-fast.js'
import {duplicateName} from '../../src/export/export.js'
import {DEFAULT_NAME_TEMPLATE, nameTemplate} from '../../src/export/names.js'
import {FLEET_EXPORT_EXTENSION, exportMarkerOf} from '../../src/kubeconfig/export-marker.js'
import type {ClusterRef} from '../../src/providers/types.js'

const dir = () => mkdtempSync(join(tmpdir(), 'fleet-export-'))

function ref(over: Partial<ClusterRef> & Pick<ClusterRef, 'name' | 'provider' | 'source'>): ClusterRef {
  return {aliases: [], auth: 'token', labels: {}, ready: true, resolve: async () => assert.fail('not resolved here'), ...over}
}

describe('names', () => {
  it('defaults to {provider}/{name}, a file context by its context name', () => {
    const name = nameTemplate(DEFAULT_NAME_TEMPLATE)
    assert.equal(name(ref({name: 'kc.yaml+prod', provider: 'file', source: {kind: 'kubeconfig-file', path: '/x/kc.yaml', context: 'prod'}})), 'file/prod')
    assert.equal(name(ref({name: 'secrets#eu-1', provider: 'secrets', source: {kind: 'secret'}})), 'secrets/eu-1')
    assert.equal(nameTemplate('x-{id}')(ref({name: 'secrets#eu-1', provider: 'secrets', source: {kind: 'secret'}})), 'x-secrets#eu-1')
  })

  it('names the two clusters a template gives one name', () => {
    assert.match(duplicateName([{cluster: 'a#x', name: 'x'}, {cluster: 'b#x', name: 'x'}], '{name}') ?? '', /^--name-template "\{name\}": clusters "a#x" and "b#x" both get the context name "x"; use a template with \{id\}/)
    assert.equal(duplicateName([{cluster: 'a#x', name: 'a/x'}, {cluster: 'b#x', name: 'b/x'}], '{provider}/{name}'), undefined)
  })

  it('refuses an unknown placeholder, a stray brace and a template that names no cluster', () => {
    assert.throws(() => nameTemplate('{cluster}'), /--name-template: unknown placeholder \{cluster\}/)
    assert.throws(() => nameTemplate('a{name'), /--name-template: unbalanced brace/)
    assert.throws(() => nameTemplate('{provider}'), /names no cluster; include \{id\} or \{name\}/)
    assert.throws(() => nameTemplate(' '), /--name-template: empty/)
  })
})

describe('credentialArgs', () => {
  const env = {KUBECONFIG: '', HOME: '/nonexistent'}
  it('pins a file provider by absolute paths and its <file>+<context> name', () => {
    const r = ref({name: 'kc.yaml+prod', provider: 'file', source: {kind: 'kubeconfig-file', path: '/work/kc.yaml', context: 'prod'}})
    assert.deepEqual(credentialArgs(r, {kubeconfig: ['kc.yaml'], cwd: '/work', env}), [...CREDENTIAL_COMMAND, '--cluster', '/work/kc.yaml+prod', '--provider', 'file', '--kubeconfig', '/work/kc.yaml'])
  })

  it('pins the fleet configuration and the hub (its files and context) for a hub provider', () => {
    const config = {path: 'fleet.yaml', hub: {kubeconfig: ['/h/hub.kubeconfig']}, providers: [{type: 'kubeconfig' as const, name: 'secrets', origin: 'x'}]}
    const r = ref({name: 'secrets#eu-1', provider: 'secrets', source: {kind: 'secret', hub: 'kind-hub'}})
    assert.deepEqual(credentialArgs(r, {config: config as never, cwd: '/work', env}), [
      ...CREDENTIAL_COMMAND, '--cluster', 'eu-1', '--provider', 'secrets', '--fleet-config', '/work/fleet.yaml', '--kubeconfig', '/h/hub.kubeconfig', '--context', 'kind-hub',
    ])
  })

  it('pins the loading rules of the export when the hub came from them', () => {
    const d = dir()
    writeFileSync(join(d, 'a'), 'apiVersion: v1\n')
    const r = ref({name: 'eu-1', provider: 'capi', source: {kind: 'cluster-api', hub: 'h'}})
    const args = credentialArgs(r, {provider: 'capi', cwd: d, env: {KUBECONFIG: `a:missing`}})
    assert.deepEqual(args.slice(-4), ['--kubeconfig', join(d, 'a'), '--context', 'h'])
  })
})

describe('exec request', () => {
  it('reads the version, server and CA client-go passes, and refuses what is not an ExecCredential', () => {
    assert.deepEqual(readExecRequest(undefined), {apiVersion: 'client.authentication.k8s.io/v1'})
    const r = readExecRequest(JSON.stringify({apiVersion: 'client.authentication.k8s.io/v1beta1', kind: 'ExecCredential', spec: {cluster: {server: 'https://a', 'certificate-authority-data': 'Zm9v'}}}))
    assert.equal(r.apiVersion, 'client.authentication.k8s.io/v1beta1')
    assert.equal(r.server, 'https://a')
    assert.match(r.caHash ?? '', /^[0-9a-f]{64}$/)
    assert.throws(() => readExecRequest('{'), /KUBERNETES_EXEC_INFO: not valid JSON/)
    assert.throws(() => readExecRequest('{"kind":"Pod"}'), /not an ExecCredential/)
    assert.throws(() => readExecRequest('{"kind":"ExecCredential","apiVersion":"v9"}'), /apiVersion "v9"/)
  })

  it('always carries expirationTimestamp, and a certificate only with its key', () => {
    const out = JSON.parse(execCredentialJson('client.authentication.k8s.io/v1', {token: 't', clientCertificateData: 'c'}, '2030-01-01T00:00:00Z'))
    assert.deepEqual(out.status, {token: 't', expirationTimestamp: '2030-01-01T00:00:00Z'})
  })
})

describe('the launcher\'s fast path', () => {
  it('reads only the exported form of the arguments; anything else goes to the full command', () => {
    const args = ['--cluster', 'eu-1', '--provider', 'secrets', '--fleet-config', '/f.yaml', '--kubeconfig', '/a:/b', '--context', 'hub']
    assert.deepEqual(exportedFlags(args), {cluster: 'eu-1', provider: 'secrets', 'fleet-config': '/f.yaml', kubeconfig: '/a:/b', context: 'hub'})
    for (const other of [['--cluster=eu-1'], ['--provider', 'p'], ['--cluster', 'a', '--cluster', 'b'], ['--cluster', 'a', '-v'], ['--cluster', 'a', '-o', 'json'], ['--cluster', 'a', '--provider']]) {
      assert.equal(exportedFlags(other), undefined, other.join(' '))
    }
  })

  it('keys the cache as the command does: two servers or two fleet configurations never share an entry', () => {
    const a = new CredentialCache(credentialIdentity({cluster: 'x', 'fleet-config': '/a.yaml'}, {server: 'https://s'}), '/c').path
    assert.notEqual(a, new CredentialCache(credentialIdentity({cluster: 'x', 'fleet-config': '/b.yaml'}, {server: 'https://s'}), '/c').path)
    assert.notEqual(a, new CredentialCache(credentialIdentity({cluster: 'x', 'fleet-config': '/a.yaml'}, {server: 'https://t'}), '/c').path)
    assert.equal(a, new CredentialCache(credentialIdentity({'fleet-config': '/a.yaml', cluster: 'x'}, {server: 'https://s'}), '/c').path)
  })
})

describe('credential cache', () => {
  it('lives under XDG_CACHE_HOME (absolute only), else ~/.cache', () => {
    assert.equal(credentialCacheDir({XDG_CACHE_HOME: '/c', HOME: '/h'}), '/c/fleet/credentials')
    assert.equal(credentialCacheDir({XDG_CACHE_HOME: 'rel', HOME: '/h'}), '/h/.cache/fleet/credentials')
  })

  it('ends a static credential after the bound, an expiring one a margin before its own end', () => {
    const now = Date.parse('2030-01-01T00:00:00Z')
    assert.equal(cacheEnd(undefined, now), now + STATIC_CREDENTIAL_SECONDS * 1000)
    assert.equal(cacheEnd('2030-01-01T01:00:00Z', now), now + 3600_000 - EXPIRY_MARGIN_SECONDS * 1000)
    // Within the margin: handed out until its own end (and not kept).
    assert.equal(cacheEnd('2030-01-01T00:00:10Z', now), now + 10_000)
  })

  it('hands a credential to each parent once, drops it on the second ask, and remembers it as refused', async () => {
    const d = dir()
    const cache = new CredentialCache({cluster: 'a'}, d)
    const now = Date.now()
    await cache.store('a', {token: 'tok-1-abcdefgh'}, now + 60_000, 100, now)
    assert.equal(statSync(cache.path).mode & 0o777, 0o600)
    assert.equal(statSync(d).mode & 0o777, 0o700)
    assert.equal((await cache.take(200, now))?.credential.token, 'tok-1-abcdefgh')
    // 100 was handed it at store: asking again before the end means the server refused it.
    assert.equal(await cache.take(100, now), undefined)
    assert.equal(await cache.take(300, now), undefined, 'dropped for everyone')
    assert.equal(await cache.suspected({token: 'tok-1-abcdefgh'}), true)
    assert.equal(await cache.suspected({token: 'tok-2-abcdefgh'}), false)
    assert.ok(!readFileSync(cache.path, 'utf8').includes('tok-1'), 'a refused credential is not kept, only its fingerprint')
    // A fresh one stored: no suspect any more.
    await cache.store('a', {token: 'tok-2-abcdefgh'}, now + 60_000, 100, now)
    assert.equal(await cache.suspected({token: 'tok-1-abcdefgh'}), false)
    // Two identities never share a file.
    assert.notEqual(new CredentialCache({cluster: 'a', server: 'https://x'}, d).path, cache.path)
  })

  it('is not used in a directory others may write to', async () => {
    const d = dir()
    chmodSync(d, 0o777)
    const cache = new CredentialCache({cluster: 'c'}, d)
    const now = Date.now()
    await cache.store('c', {token: 'tok-c-abcdefgh'}, now + 60_000, 1, now)
    assert.equal(await cache.take(2, now), undefined)
    assert.deepEqual(readdirSync(d), [])
  })

  it('gives nothing after the end', async () => {
    const cache = new CredentialCache({cluster: 'b'}, dir())
    const now = Date.now()
    await cache.store('b', {token: 'tok-b-abcdefgh'}, now + 1000, 1, now)
    assert.equal(await cache.take(2, now + 1000), undefined)
  })
})

describe('kubeconfig export and credential over a kubeconfig file', () => {
  const TOKEN = 'file-token-0123456789abcdef'
  const setup = () => {
    const d = dir()
    const kc = join(d, 'kc.yaml')
    writeFileSync(kc, `apiVersion: v1
kind: Config
clusters:
- {name: a, cluster: {server: "https://127.0.0.1:9", certificate-authority-data: Zm9v}}
- {name: b, cluster: {server: "https://127.0.0.1:10"}}
users:
- {name: u, user: {token: ${TOKEN}}}
- {name: basic, user: {username: me, password: pa55word-secret}}
contexts:
- {name: one, context: {cluster: a, user: u, namespace: ns1}}
- {name: two, context: {cluster: b, user: basic}}
current-context: one
`)
    return {d, kc}
  }

  it('writes one marked exec context per cluster, 0600, with no secret, and the credential finds the token from anywhere', async () => {
    const {d, kc} = setup()
    const out = join(d, 'out.yaml')
    const env = {XDG_CACHE_HOME: join(d, 'cache')}
    const r = await runFleet(['kubeconfig', 'export', '--kubeconfig', 'kc.yaml', '--all', '--out', out, '-o', 'json'], {cwd: d, env})
    assert.equal(r.code, 0, r.stderr)
    assert.equal(statSync(out).mode & 0o777, 0o600)
    const text = readFileSync(out, 'utf8')
    for (const s of [TOKEN, 'pa55word-secret']) assert.ok(!text.includes(s) && !r.stdout.includes(s) && !r.stderr.includes(s))
    const doc = yaml.load(text) as any
    assert.deepEqual(doc.contexts.map((c: any) => c.name), ['file/one', 'file/two'])
    for (const kind of ['clusters', 'users', 'contexts']) for (const e of doc[kind]) assert.equal(exportMarkerOf(e[kind.slice(0, -1)])?.cluster !== undefined, true, `${kind} ${e.name} carries ${FLEET_EXPORT_EXTENSION}`)
    const exec = doc.users[0].user.exec
    assert.deepEqual({...exec, args: undefined, installHint: undefined}, {apiVersion: 'client.authentication.k8s.io/v1', command: 'fleet', args: undefined, provideClusterInfo: true, interactiveMode: 'Never', installHint: undefined})
    assert.equal(doc.contexts[0].context.namespace, 'ns1')
    assert.equal(doc.clusters[0].cluster['certificate-authority-data'], 'Zm9v')
    assert.deepEqual(r.json().items.map((i: any) => i.context), ['file/one', 'file/two'])

    // kubectl runs it with its own KUBECONFIG (the exported file) from another directory.
    const info = JSON.stringify({apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', spec: {cluster: {server: 'https://127.0.0.1:9'}}})
    const other = dir()
    const c = await runFleet(exec.args, {cwd: other, env: {...env, KUBECONFIG: out, KUBERNETES_EXEC_INFO: info}})
    assert.equal(c.code, 0, c.stderr)
    const cred = JSON.parse(c.stdout)
    assert.equal(cred.status.token, TOKEN)
    const end = Date.parse(cred.status.expirationTimestamp)
    assert.ok(end > Date.now() && end <= Date.now() + STATIC_CREDENTIAL_SECONDS * 1000, cred.status.expirationTimestamp)
    const files = readdirSync(join(d, 'cache/fleet/credentials'))
    assert.equal(files.length, 1)
    assert.equal(statSync(join(d, 'cache/fleet/credentials', files[0])).mode & 0o777, 0o600)

    // Rotated in the file: the next ask from this parent (as client-go after a 401) gets the new one at once.
    writeFileSync(kc, readFileSync(kc, 'utf8').replace(TOKEN, 'rotated-token-0123456789'))
    const rotated = await runFleet(exec.args, {cwd: other, env: {...env, KUBERNETES_EXEC_INFO: info}})
    assert.equal(rotated.code, 0, rotated.stderr)
    assert.equal(JSON.parse(rotated.stdout).status.token, 'rotated-token-0123456789')

    // Another server than the provider's: refused, nothing printed.
    const elsewhere = JSON.stringify({apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', spec: {cluster: {server: 'https://evil.example'}}})
    const e = await runFleet(exec.args, {cwd: other, env: {...env, KUBERNETES_EXEC_INFO: elsewhere}})
    assert.equal(e.code, 2)
    assert.match(e.stderr, /kubectl is connecting to https:\/\/evil\.example, but its provider names https:\/\/127\.0\.0\.1:9/)
    assert.equal(e.stdout, '')

    // Basic authentication cannot be passed on: one line, no password.
    const basic = await runFleet(doc.users[1].user.exec.args, {cwd: other, env})
    assert.equal(basic.code, 1)
    assert.match(basic.stderr, /uses basic authentication/)
    assert.ok(!basic.stderr.includes('pa55word-secret'))
  })

  it('asks the server about a credential its parent asked for twice: refused there, an error; accepted, handed out again', async () => {
    let status = 401
    const server = createServer((req, res) => {
      res.writeHead(req.url === '/api' ? status : 404, {'content-type': 'application/json'})
      res.end(JSON.stringify(status === 401 ? {kind: 'Status', code: 401, message: 'Unauthorized'} : {kind: 'APIVersions', versions: ['v1']}))
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const d = dir()
      const kc = join(d, 'kc.yaml')
      writeFileSync(kc, `apiVersion: v1\nkind: Config\nclusters: [{name: a, cluster: {server: "${url}"}}]\nusers: [{name: u, user: {token: ${TOKEN}}}]\ncontexts: [{name: one, context: {cluster: a, user: u}}]\n`)
      const env = {XDG_CACHE_HOME: join(d, 'cache'), KUBERNETES_EXEC_INFO: JSON.stringify({apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', spec: {cluster: {server: url}}})}
      const args = ['kubeconfig', 'credential', '--cluster', `${kc}+one`, '--provider', 'file', '--kubeconfig', kc]
      assert.equal((await runFleet(args, {env})).code, 0)
      // The same parent (this test) asks again before the end, the file holds the same token, and the server says 401.
      const refused = await runFleet(args, {env})
      assert.equal(refused.code, 1)
      assert.match(refused.stderr, /^error: .*the server refuses this credential and the provider still holds the same one/m)
      assert.equal(refused.stdout, '')
      assert.ok(!refused.stderr.includes(TOKEN))
      // The server takes it (another client of the same process asked, not a 401): handed out, not an error.
      status = 200
      const accepted = await runFleet(args, {env})
      assert.equal(accepted.code, 0, accepted.stderr)
      assert.equal(JSON.parse(accepted.stdout).status.token, TOKEN)
    } finally {
      server.close()
    }
  })

  it('prints the kubeconfig without --out, refuses bad flags before reading anything, and --dry-run writes nothing', async () => {
    const {d} = setup()
    const r = await runFleet(['kubeconfig', 'export', '--kubeconfig', 'kc.yaml', '-c', 'one'], {cwd: d})
    assert.equal(r.code, 0, r.stderr)
    assert.equal((yaml.load(r.stdout) as any).contexts[0].name, 'file/one')
    const bad = await runFleet(['kubeconfig', 'export', '--kubeconfig', 'missing.yaml', '--all', '--name-template', '{nope}'], {cwd: d})
    assert.equal(bad.code, 2)
    assert.match(bad.stderr, /^error: --name-template: unknown placeholder \{nope\}/)
    const rel = await runFleet(['kubeconfig', 'export', '--kubeconfig', 'kc.yaml', '--all', '--command', 'bin/fleet'], {cwd: d})
    assert.equal(rel.code, 2)
    assert.match(rel.stderr, /--command: bin\/fleet is a relative path/)
    const dry = await runFleet(['kubeconfig', 'export', '--kubeconfig', 'kc.yaml', '--all', '--out', 'o.yaml', '--dry-run', '-o', 'json'], {cwd: d})
    assert.equal(dry.code, 0, dry.stderr)
    assert.equal(dry.json().dryRun, true)
    assert.throws(() => statSync(join(d, 'o.yaml')))
  })
})
